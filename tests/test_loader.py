"""The config boundary inside a Pulumi program: secrets, placeholders, refusal on `pulumi up`."""

from __future__ import annotations

import pytest

from offline_plan.run import run_program
from stacks.loader import SECRET_COMMAND, ConfigError

BASE = {
    "cluster": {"cloud": "gke", "name": "gpu", "location": "us-central1", "zones": ["us-central1-c"]},
    "nodePools": {"l4": {"machineType": "g2-standard-8", "accelerator": {"type": "nvidia-l4"}}},
    "workloads": {"vllm": {"pool": "l4", "model": "google/gemma-3-1b-it"}},
}


def _load(config, *, secret_keys=(), preview=True):
    seen = []
    run = run_program(config, secret_keys=secret_keys, preview=preview, compose_fn=seen.append)
    return seen[0], run


def test_plain_text_token_is_refused_naming_the_key():
    with pytest.raises(ConfigError) as caught:
        _load({**BASE, "hfToken": "hf_plaintext"})
    assert any(path == "hfToken" and "plain text" in msg and SECRET_COMMAND in msg
               for path, msg in caught.value.issues)


def test_secret_token_is_accepted_and_stays_secret():
    loaded, _ = _load({**BASE, "hfToken": "hf_secret_value"}, secret_keys=("hfToken",))
    assert not loaded.hf_token_is_placeholder
    assert loaded.hf_token is not None


def test_missing_token_in_a_preview_uses_a_placeholder_and_says_so():
    loaded, run = _load(BASE)
    assert loaded.hf_token_is_placeholder
    assert any("placeholder secret" in d.message and SECRET_COMMAND in d.message for d in run.diagnostics)


def test_missing_token_on_up_is_refused_with_the_exact_command():
    with pytest.raises(ConfigError) as caught:
        _load(BASE, preview=False)
    assert ("hfToken", f"is not set; run: {SECRET_COMMAND}") in caught.value.issues


def test_no_workloads_needs_no_token():
    config = {k: v for k, v in BASE.items() if k != "workloads"}
    loaded, _ = _load(config, preview=False)
    assert loaded.hf_token is None


def test_config_error_and_token_error_are_reported_together():
    broken = {**BASE, "hfToken": "plain", "cluster": {**BASE["cluster"], "kubernetesVersion": "1.31"}}
    with pytest.raises(ConfigError) as caught:
        _load(broken)
    paths = {p for p, _ in caught.value.issues}
    assert {"hfToken", "cluster.kubernetesVersion"} <= paths


def test_composition_problems_join_the_config_problems():
    broken = {
        **BASE,
        "hfToken": "plain",
        "cluster": {**BASE["cluster"], "releaseChannel": "UNSPECIFIED"},
        "workloads": {"vllm": {"pool": "l4", "model": "m", "namespace": "kube-system"}},
    }
    with pytest.raises(ConfigError) as caught:
        _load(broken)
    paths = {p for p, _ in caught.value.issues}
    assert {"hfToken", "cluster.releaseChannel"} <= paths, caught.value.issues
    assert any(p.startswith("workloads.vllm") for p in paths), caught.value.issues


def test_a_misspelt_namespace_is_refused_not_ignored():
    seen = []
    with pytest.raises(ConfigError) as caught:
        run_program(BASE, other_config={"gpu-fungibilty:workloads": {"x": {"pool": "l4", "model": "m"}},
                                        "gcp:project": "demo"}, compose_fn=seen.append)
    assert [p for p, _ in caught.value.issues] == ["gpu-fungibilty:workloads"]
    assert "unknown config namespace 'gpu-fungibilty'" in caught.value.issues[0][1]


def test_other_providers_namespaces_are_left_alone():
    seen = []
    run_program(BASE, other_config={"gcp:project": "demo", "aws:region": "us-west-2", "kubernetes:context": "x"},
                compose_fn=seen.append)
    assert seen
