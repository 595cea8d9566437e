"""Masked secrets can carry a keyed digest, so two plans tell a changed secret without showing it."""

from __future__ import annotations

import pulumi
import pytest

from offline_plan import planjson
from offline_plan.run import SECRET_DIGEST_ENV, SECRET_MASK, read_stack_file, run_program

MINIMAL = {"cluster": {"cloud": "gke", "name": "t", "location": "us-central1", "zones": ["us-central1-c"]}}
KEY = "00" * 31 + "01"


def _inputs(token: str, **options) -> dict:
    def build() -> None:
        pulumi.CustomResource("test:index:Thing", "thing", {"token": pulumi.Output.secret(token), "plain": "x"},
                              pulumi.ResourceOptions(**options))

    run = run_program(MINIMAL, compose_fn=lambda _loaded: build())
    state = next(s["newState"] for s in planjson.plan_document(run)["steps"]
                 if s["newState"]["type"] == "test:index:Thing")
    return state


def test_without_a_key_a_secret_is_just_masked(monkeypatch):
    monkeypatch.delenv(SECRET_DIGEST_ENV, raising=False)
    assert _inputs("hf_one")["inputs"]["token"] == SECRET_MASK


def test_with_a_key_the_mask_tells_changed_from_unchanged_without_the_value(monkeypatch):
    monkeypatch.setenv(SECRET_DIGEST_ENV, KEY)
    one, same, other = (_inputs(t)["inputs"]["token"] for t in ("hf_one", "hf_one", "hf_two"))
    assert one.startswith("[secret:") and one == same and one != other
    assert "hf_" not in one + other
    monkeypatch.setenv(SECRET_DIGEST_ENV, "ff" * 32)
    assert _inputs("hf_one")["inputs"]["token"] != one, "the digest depends on the key"


def test_a_re_encrypted_stack_secret_gets_a_different_placeholder(tmp_path):
    placeholders = []
    for cipher in ("v1:AAAA", "v1:BBBB"):
        (tmp_path / "Pulumi.s.yaml").write_text(f"config:\n  gpu-fungibility:hfToken:\n    secure: {cipher}\n")
        placeholders.append(read_stack_file("s", tmp_path).namespace_config["hfToken"])
    assert placeholders[0] != placeholders[1]
    assert all(p.startswith("offline-placeholder-for-gpu-fungibility:hfToken") for p in placeholders)


@pytest.mark.parametrize("options,key,expected", [
    ({"replace_on_changes": ["spec"]}, "replaceOnChanges", ["spec"]),
    ({"ignore_changes": ["plain"]}, "ignoreChanges", ["plain"]),
])
def test_plan_json_records_the_options_that_change_a_diff(options, key, expected):
    state = _inputs("hf_one", **options)
    assert state[key] == expected
    other = ({"replaceOnChanges", "ignoreChanges"} - {key}).pop()
    assert other not in state, "an option that is not set is not written"
