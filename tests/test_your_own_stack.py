"""A newcomer's first stack: zones checked offline, machines suggested, replicas that cannot fit and what is
safe before `pulumi up` said up front, the minimal stack files plan clean."""

from __future__ import annotations

import copy
import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from gpu_fungibility.clouds.eks import regions as eks_zones
from gpu_fungibility.clouds.gke import regions as gke_zones

from offline_plan.__main__ import main as plan_main
from offline_plan.before_deploy import items
from plan_diff.planning import _head_hint
from simulator.advisories import replica_advisories
from simulator.results import PENDING, SCHEDULED, ReplicaPlacement, SimulationResult
from stacks.loader import parse_stack_config
from stacks.rules import config_warnings
from tests.config_issues import config_issues, with_cluster
from tests.hang_guard import HANG_GUARD_SECONDS
from tools.stacks_in_ci import SHIPPED_STACKS

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "stacks"

L4_STACK = {
    "cluster": {"cloud": "gke", "name": "c", "location": "europe-west4", "zones": ["europe-west4-a"]},
    "nodePools": {"l4": {"machineType": "g2-standard-8", "accelerator": {"type": "nvidia-l4", "count": 1}}},
}


def _stack(**cluster) -> dict:
    return with_cluster(L4_STACK, **cluster)


_issues = config_issues


def test_a_zone_of_another_region_is_refused_with_its_key_path():
    issues = _issues(_stack(zones=["europe-west4-a", "us-central1-a"]))
    assert "cluster.zones[1]" in issues
    assert "us-central1-a is in region us-central1, not in europe-west4" in issues["cluster.zones[1]"]
    assert "europe-west4-a, europe-west4-b, europe-west4-c" in issues["cluster.zones[1]"]


def test_a_zonal_cluster_location_takes_its_region():
    cfg = parse_stack_config(_stack(location="europe-west4-a", zones=["europe-west4-a", "europe-west4-b"]))
    assert not [w for w in config_warnings(cfg) if "zone" in w]


def test_a_zone_the_region_does_not_have_is_warned():
    cfg = parse_stack_config(_stack(zones=["europe-west4-a", "europe-west4-d"]))
    found = [w for w in config_warnings(cfg) if w.startswith("cluster.zones[1]")]
    assert found and "europe-west4-d is not a zone of europe-west4" in found[0], config_warnings(cfg)


def test_a_tpu_pool_outside_its_recorded_zones_is_warned():
    raw = _stack(location="us-central1", zones=["us-central1-a", "us-central1-b"])
    raw["nodePools"] = {"v6e": {"machineType": "ct6e-standard-1t", "accelerator": {"type": "tpu-v6e-slice"},
                                "zones": ["us-central1-a"]}}
    warnings = [w for w in config_warnings(parse_stack_config(raw)) if w.startswith("nodePools.v6e.zones")]
    assert warnings and "not offered in us-central1-a" in warnings[0] and "us-central1-b" in warnings[0]


def test_an_eks_zone_not_recorded_is_warned():
    raw = copy.deepcopy(L4_STACK)
    raw["cluster"] = {"cloud": "eks", "name": "c", "location": "us-west-2", "zones": ["us-west-2a", "us-west-2e"]}
    raw["nodePools"] = {"l4": {"instanceTypes": ["g6.xlarge"], "accelerator": {"type": "nvidia-l4"},
                               "autoscaling": {"min": 1, "max": 1}}}
    warnings = [w for w in config_warnings(parse_stack_config(raw)) if w.startswith("cluster.zones[1]")]
    assert warnings and "us-west-2e is not an availability zone of us-west-2" in warnings[0]


@pytest.mark.parametrize("stack", SHIPPED_STACKS)
def test_shipped_stacks_have_no_zone_warning(stack):
    import yaml

    raw = yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())["config"]
    cfg = parse_stack_config({k.split(":", 1)[1]: v for k, v in raw.items() if k.startswith("gpu-fungibility:")})
    assert not [w for w in config_warnings(cfg) if "zone" in w.split(":")[0] or "not offered" in w]


def test_recorded_ec2_zones_are_moto_s_recorded_offerings():
    import moto

    folder = Path(moto.__file__).parent / "ec2" / "resources" / "instance_type_offerings" / "availability-zone"
    for region, letters in eks_zones.EC2_REGION_ZONES.items():
        offerings = json.loads(gzip.open(folder / f"{region}.json.gz").read())
        assert {o["Location"] for o in offerings} == {f"{region}{c}" for c in letters}, region


def test_recorded_gce_zones_name_their_region():
    for region in gke_zones.GCE_REGION_ZONES:
        assert all(gke_zones.gce_zone_parts(z) == (region, z[-1]) for z in gke_zones.gce_zones(region))
    for accelerator, regions in gke_zones.TPU_ZONES.items():
        for region in regions:
            assert region in gke_zones.GCE_REGION_ZONES, (accelerator, region)
            assert set(gke_zones.tpu_zones(accelerator, region)) <= set(gke_zones.gce_zones(region))


def test_a_missing_machine_type_names_the_machines_of_its_accelerator():
    raw = copy.deepcopy(L4_STACK)
    del raw["nodePools"]["l4"]["machineType"]
    message = _issues(raw)["nodePools.l4.machineType"]
    assert "g2-standard-8" in message and "a2-" not in message


def test_a_wrong_count_names_the_machine_that_carries_it():
    raw = copy.deepcopy(L4_STACK)
    raw["nodePools"]["l4"]["accelerator"]["count"] = 4
    message = next(m for p, m in _issues(raw).items() if p.startswith("nodePools.l4"))
    assert "g2-standard-8 carries 1 x nvidia-l4" in message and "g2-standard-48" in message


def test_replicas_that_cannot_fit_are_counted():
    result = SimulationResult("gke", [ReplicaPlacement("vllm-gpu", 1, SCHEDULED, "p"),
                                      *[ReplicaPlacement("vllm-gpu", i, PENDING, reason="no capacity")
                                        for i in range(2, 5)],
                                      ReplicaPlacement("other", 1, SCHEDULED, "p")], [])
    assert replica_advisories(result) == [
        "vllm-gpu: 1 of 4 replicas fit at the pools' maximum; the other 3 stay pending (no capacity)"]


def test_before_you_deploy_names_what_costs_money_and_the_documentation_range():
    from offline_plan.run import PlanRun

    raw = json.loads(json.dumps(L4_STACK))
    raw["cluster"]["controlPlane"] = {"publicEndpoint": True, "authorizedNetworks": ["203.0.113.0/24"]}
    raw["nodePools"]["l4"].update({"spot": False, "onDemandFallback": True, "autoscaling": {"min": 1, "max": 2}})
    raw["cluster"]["deletionProtection"] = False
    run = PlanRun("s", "p", [], [], parse_stack_config(raw), provider_config={"gcp:project": "acme"})
    found = {(i.level, i.text.split(":")[0]) for i in items(run)}
    text = "\n".join(i.text for i in items(run))
    assert "Google Cloud project `acme`" in text
    assert any(i.level == "warning" and "203.0.113.0/24" in i.text and "documentation" in i.text
               for i in items(run))
    assert any(i.level == "cost" and "1 x g2-standard-8 (1 x nvidia-l4), on-demand" in i.text for i in items(run))
    assert ("warning", "off (cluster.deletionProtection") in found


@pytest.fixture(scope="module")
def twenty_replicas(tmp_path_factory) -> tuple[int, str, str]:
    folder = tmp_path_factory.mktemp("twenty")
    text = (EXAMPLES / "Pulumi.my-gke.yaml").read_text().replace("replicas: 1", "replicas: 20")
    (folder / "Pulumi.twenty.yaml").write_text(text)
    out = folder / "build"
    import contextlib
    import io

    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = plan_main(["--stack", "twenty", "--stack-dir", str(folder), "--out", str(out), "--no-policy"])
    return code, stdout.getvalue(), (out / "twenty" / "summary.md").read_text()


def test_the_plan_says_how_many_replicas_fit(twenty_replicas):
    code, stdout, summary = twenty_replicas
    assert code == 0
    last = stdout.strip().splitlines()[-1]
    assert "advisory: chat: 3 of 20 replicas fit at the pools' maximum" in last, last
    diagnostics = summary.split("## Diagnostics", 1)[1].split("\n## ", 1)[0]
    assert "**advisory**: chat: 3 of 20 replicas fit" in diagnostics


def test_the_summary_opens_with_before_you_deploy(twenty_replicas):
    _, stdout, summary = twenty_replicas
    sections = [line for line in summary.splitlines() if line.startswith("## ")]
    assert sections[0] == "## Before you deploy"
    block = summary.split("## Before you deploy", 1)[1].split("\n## ", 1)[0]
    assert "Google Cloud project `my-project`" in block
    assert "198.51.100.0/24, a range reserved for documentation" in block
    assert "no accelerator node" in block and "deletion protection: on" in block
    assert "before you deploy:" in stdout


@pytest.mark.parametrize("stack", ["my-gke", "my-eks", "my-aks"])
def test_the_minimal_stack_files_plan_clean(stack, tmp_path, capsys):
    text = (EXAMPLES / f"Pulumi.{stack}.yaml").read_text()
    assert len(text.splitlines()) <= 40, "a minimal stack file stays short"
    assert plan_main(["--stack", stack, "--stack-dir", str(EXAMPLES), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr()
    # The one advisory a minimal AKS stack cannot avoid: no AKS document yet confirms DRA is served.
    advisories = [line for line in out.out.splitlines() if line.startswith("[advisory]")
                  and not (stack == "my-aks" and "DRA on AKS" in line and "kubernetes-version-advisories" in line)]
    assert "[mandatory]" not in out.out and not advisories, out.out
    warnings = [line for line in out.err.splitlines() if line.startswith("warning:") and "hfToken" not in line]
    assert not warnings, warnings


def test_diff_suggests_base_head_when_the_stack_is_committed_only_there(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    run = lambda *a: subprocess.run(["git", "-C", str(tmp_path), *a], check=True, capture_output=True)  # noqa: E731
    run("init", "-q")
    (tmp_path / "Pulumi.mine.yaml").write_text("config: {}\n")
    run("add", ".")
    run("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "stack")
    assert "make diff STACK=mine BASE=HEAD" in _head_hint(tmp_path, "mine", "Pulumi.mine.yaml", "origin/main")
    assert _head_hint(tmp_path, "mine", "Pulumi.mine.yaml", "HEAD") == ""
    assert _head_hint(tmp_path, "other", "Pulumi.other.yaml", "origin/main") == ""


def _make_dry_run(*args: str) -> str:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    return subprocess.run(["make", "-n", "--no-print-directory", *args, "VENV=.venv"], cwd=ROOT,
                          capture_output=True, text=True, timeout=HANG_GUARD_SECONDS).stdout


def test_make_simulate_keeps_the_stack_s_own_replicas_and_passes_reclaim():
    plain = _make_dry_run("simulate", "STACK=dev")
    assert "-m simulator --stack 'dev'" in plain and "--replicas" not in plain
    given = _make_dry_run("simulate", "STACK=dev", "REPLICAS=5", "RECLAIM=a100-40gb")
    assert "--replicas '5'" in given and "--reclaim 'a100-40gb'" in given


def test_the_machine_table_is_the_catalog_s():
    from tools import machine_table

    text = machine_table.DOC.read_text()
    assert machine_table.embedded(text) == machine_table.render(), \
        "docs/machines.md is stale: run .venv/bin/python -m tools.machine_table"


def test_the_readme_lists_every_accelerator_of_the_catalog():
    import re

    from gpu_fungibility import catalog

    readme = (ROOT / "README.md").read_text()
    paragraph = readme[readme.index("Accelerator types come from the project's catalog"):]
    paragraph = paragraph[:paragraph.index("\n\n")]
    gpus, tpus = paragraph.split("TPUs", 1)
    assert re.findall(r"`(nvidia-[\w-]+)`", gpus) == sorted(catalog.GPUS)
    assert re.findall(r"`(tpu-[\w-]+)`", tpus) == sorted(catalog.TPUS)


def test_your_own_stack_is_a_newcomer_s_path():
    readme = (ROOT / "README.md").read_text()
    headings = [line for line in readme.splitlines() if line.startswith("## ")]
    assert headings.index("## Your own stack") < headings.index("## Deploying for real")
    section = readme.split("## Your own stack", 1)[1].split("\n## ", 1)[0]
    for stack in ("my-gke", "my-eks", "my-aks"):
        assert f"examples/stacks/Pulumi.{stack}.yaml" in section
    assert "docs/machines.md" in section
    deploy = readme.split("## Deploying for real", 1)[1].split("\n## ", 1)[0]
    assert "pulumi stack select --create <stack>" in deploy and "STACK=dev" not in deploy
    assert "### Hostile input" not in readme and "## Hostile input" in (ROOT / "docs" / "commands.md").read_text()


def test_a_missing_stack_file_points_at_the_minimal_files(tmp_path, capsys):
    assert plan_main(["--stack", "mine", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no stack file Pulumi.mine.yaml" in err
    assert "examples/stacks/Pulumi.my-gke.yaml" in err and "to Pulumi.mine.yaml" in err


def test_through_make_the_command_s_explanation_comes_before_make_s_own_line():
    if shutil.which("make") is None or not (ROOT / ".venv" / ".installed").is_file():
        pytest.skip("make or the venv is missing")
    done = subprocess.run(["make", "--no-print-directory", "plan", "STACK=no-such-stack"], cwd=ROOT,
                          capture_output=True, text=True, timeout=HANG_GUARD_SECONDS)
    lines = done.stderr.strip().splitlines()
    # GNU make prints its own "Error 2" line for every failed recipe it does not ignore (docs/commands.md).
    assert done.returncode == 2
    assert lines[0].startswith("error: no stack file Pulumi.no-such-stack.yaml")
    assert all(not line.startswith("make:") for line in lines[:-1])
