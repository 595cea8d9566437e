"""A newcomer's mistakes, second round: each ends with exit 2 and a message naming the key and what to write
instead, or a warning where the stack can still deploy; the recorded cloud facts behind them are checked
against their sources' data."""

from __future__ import annotations

import copy
import csv
import gzip
import json
from collections import defaultdict
from pathlib import Path

import pytest
import yaml
from gpu_fungibility import catalog
from gpu_fungibility.clouds.aks import machines as aks_machines
from gpu_fungibility.clouds.eks import machines as eks_machines
from gpu_fungibility.clouds.eks import regions as eks_zones
from gpu_fungibility.clouds.gke import machines as gke_machines
from gpu_fungibility.clouds.gke import regions as gke_zones

from offline_plan.__main__ import main as plan_main
from stacks.loader import parse_stack_config
from stacks.rules import config_warnings
from tests.config_issues import config_issues, with_cluster

FIXTURES = Path(__file__).parent / "fixtures"

GKE = {
    "cluster": {"cloud": "gke", "name": "c", "location": "europe-west4", "zones": ["europe-west4-a"]},
    "nodePools": {"l4": {"machineType": "g2-standard-8", "accelerator": {"type": "nvidia-l4", "count": 1}}},
}
EKS = {
    "cluster": {"cloud": "eks", "name": "c", "location": "eu-west-1", "zones": ["eu-west-1a", "eu-west-1b"]},
    "nodePools": {"a10g": {"instanceTypes": ["g5.xlarge"], "accelerator": {"type": "nvidia-a10g"},
                           "autoscaling": {"min": 1, "max": 1}}},
}
AKS = {
    "cluster": {"cloud": "aks", "name": "c", "location": "westeurope", "zones": ["1"]},
    "nodePools": {"t4": {"vmSize": "Standard_NC8as_T4_v3", "accelerator": {"type": "nvidia-tesla-t4"},
                         "autoscaling": {"min": 1, "max": 1}}},
}


_with = with_cluster
_issues = config_issues


def _plan_exit(raw: dict, tmp_path: Path, capsys, extra: dict | None = None) -> tuple[int, str]:
    config = {f"gpu-fungibility:{k}": v for k, v in raw.items()}
    config.update(extra or {})
    (tmp_path / "Pulumi.mine.yaml").write_text(yaml.safe_dump({"config": config}))
    code = plan_main(["--stack", "mine", "--stack-dir", str(tmp_path), "--out", str(tmp_path / "build"),
                      "--no-policy", "--no-simulate"])
    return code, capsys.readouterr().err


# --- regions -------------------------------------------------------------------------------------------------

def test_an_unknown_gke_region_is_refused_and_its_zones_are_not_blamed(tmp_path, capsys):
    raw = _with(GKE, location="europe-west44", zones=["europe-west44-a"])
    raw["nodePools"]["l4"]["zones"] = ["europe-west44-a"]
    code, err = _plan_exit(raw, tmp_path, capsys)
    assert code == 2, err
    assert "cluster.location: 'europe-west44' is not a Compute Engine region" in err
    assert "write a region such as europe-west4" in err
    assert "zones" not in err.split("cluster.location", 1)[0], err  # only the region is reported


def test_a_zonal_location_in_an_unknown_region_is_refused():
    issues = _issues(_with(GKE, location="europe-west44-a", zones=["europe-west44-a"]))
    assert list(issues) == ["cluster.location"] and "europe-west4" in issues["cluster.location"]


def test_an_unknown_eks_region_is_refused(tmp_path, capsys):
    code, err = _plan_exit(_with(EKS, location="eu-west-9", zones=["eu-west-9a", "eu-west-9b"]), tmp_path, capsys)
    assert code == 2 and "cluster.location: 'eu-west-9' is not an AWS region" in err, err
    assert "write a region such as eu-west-" in err


def test_an_availability_zone_as_the_eks_location_names_its_region():
    message = _issues(_with(EKS, location="eu-west-1a"))["cluster.location"]
    assert "is an availability zone" in message and "such as eu-west-1" in message


@pytest.mark.parametrize("written", ["west-europe", "West Europe", "WestEurope"])
def test_an_azure_location_not_shaped_like_a_region_names_the_region(written, tmp_path, capsys):
    code, err = _plan_exit(_with(AKS, location=written), tmp_path, capsys)
    assert code == 2 and "cluster.location" in err and "write 'westeurope'" in err, err


def test_known_regions_plan_on_every_cloud():
    for raw in (GKE, EKS, AKS, _with(GKE, location="europe-west4-b", zones=["europe-west4-b"])):
        parse_stack_config(copy.deepcopy(raw))


def test_recorded_gce_regions_and_zones_are_the_sources():
    regions, zones_of = set(), defaultdict(set)
    with (FIXTURES / "gce_regions_zones.csv").open() as handle:
        for row in csv.DictReader(line for line in handle if not line.startswith("#")):
            regions.add(row["region"])
            if row["zone"]:
                zones_of[row["region"]].add(row["zone"])
    assert gke_zones.GCE_REGIONS == regions
    assert {r: set(gke_zones.gce_zones(r)) for r in gke_zones.GCE_REGION_ZONES} == zones_of


def test_recorded_gce_gpu_machine_zones_are_the_sources():
    offered = defaultdict(set)
    with (FIXTURES / "gce_gpu_machine_zones.csv").open() as handle:
        for row in csv.DictReader(line for line in handle if not line.startswith("#")):
            offered[row["machine"]].add(row["zone"])
    recorded = {m: {f"{r}-{s}" for r, suffixes in by_region.items() for s in suffixes}
                for m, by_region in gke_zones.GCE_MACHINE_ZONES.items()}
    assert recorded == {m: z for m, z in offered.items() if m in gke_machines.MACHINES}
    assert all(gke_zones.gce_zone_parts(z)[0] in gke_zones.GCE_REGIONS for z in set().union(*offered.values()))


def test_recorded_ec2_regions_are_botocore_s():
    import botocore

    endpoints = json.loads((Path(botocore.__file__).parent / "data" / "endpoints.json").read_text())
    assert eks_zones.EC2_REGIONS == {r for p in endpoints["partitions"] for r in p["regions"]}


def test_recorded_ec2_instance_regions_are_moto_s_offerings():
    import moto

    folder = Path(moto.__file__).parent / "ec2" / "resources" / "instance_type_offerings" / "region"
    offered = {f.name[:-len(".json.gz")]: {o["InstanceType"] for o in json.loads(gzip.open(f).read())}
               for f in folder.glob("*.json.gz")}
    assert eks_zones.EC2_OFFERINGS_RECORDED == set(offered)
    assert set(eks_zones.EC2_INSTANCE_REGIONS) == set(eks_machines.MACHINES)
    for itype, regions in eks_zones.EC2_INSTANCE_REGIONS.items():
        assert set(regions) == {r for r, types in offered.items() if itype in types}, itype


# --- a GPU machine its region does not offer ----------------------------------------------------------------

def test_an_eks_instance_type_its_region_does_not_offer_is_warned():
    raw = copy.deepcopy(EKS)
    raw["nodePools"] = {"h200": {"instanceTypes": ["p5e.48xlarge"], "accelerator": {"type": "nvidia-h200-141gb",
                                                                                  "count": 8},
                                 "autoscaling": {"min": 1, "max": 1}}}
    found = [w for w in config_warnings(parse_stack_config(raw)) if w.startswith("nodePools.h200.instanceTypes[0]")]
    assert found and "p5e.48xlarge is not offered in eu-west-1" in found[0] and "eu-west-2" in found[0], found


def test_a_gke_machine_its_region_does_not_offer_is_warned():
    raw = _with(GKE, location="europe-west1", zones=["europe-west1-b"])
    found = [w for w in config_warnings(parse_stack_config(raw)) if "not offered" in w]
    assert found and found[0].startswith("nodePools.l4.machineType: g2-standard-8 is not offered in europe-west1")
    assert "europe-west4" in found[0]


def test_a_gke_machine_outside_its_zones_names_the_zones_that_offer_it():
    raw = _with(GKE, location="us-east4", zones=["us-east4-a", "us-east4-b"])
    found = [w for w in config_warnings(parse_stack_config(raw)) if "not offered" in w]
    assert found and "g2-standard-8 is not offered in us-east4-b" in found[0] and "['us-east4-a']" in found[0]


def test_a_region_the_data_does_not_record_is_not_judged():
    raw = _with(EKS, location="mx-central-1", zones=["mx-central-1a", "mx-central-1b"])
    assert not [w for w in config_warnings(parse_stack_config(raw)) if "not offered" in w]


# --- a provider region key beside cluster.location ---------------------------------------------------------

def test_an_azure_native_location_naming_another_region_is_refused(tmp_path, capsys):
    code, err = _plan_exit(AKS, tmp_path, capsys, extra={"azure-native:location": "eastus2"})
    assert code == 2, err
    assert "azure-native:location: is 'eastus2' but cluster.location is 'westeurope'" in err
    assert "remove azure-native:location" in err


def test_an_aws_region_naming_another_region_is_refused(tmp_path, capsys):
    code, err = _plan_exit(EKS, tmp_path, capsys, extra={"aws:region": "us-east-1"})
    assert code == 2 and "aws:region: is 'us-east-1' but cluster.location is 'eu-west-1'" in err, err


def test_a_provider_region_key_naming_the_same_region_plans(tmp_path, capsys):
    code, err = _plan_exit(AKS, tmp_path, capsys, extra={"azure-native:location": "West Europe"})
    assert code == 0, err


def test_the_shipped_aks_stacks_carry_no_second_region_key():
    root = Path(__file__).resolve().parent.parent
    for path in [root / "Pulumi.aks-dev.yaml", root / "examples" / "stacks" / "Pulumi.my-aks.yaml"]:
        assert "azure-native:location" not in yaml.safe_load(path.read_text())["config"], path


# --- Kubernetes versions -------------------------------------------------------------------------------------

@pytest.mark.parametrize("base,version,newest", [(GKE, "1.40", "1.36"), (AKS, "1.99", "1.37"), (EKS, "2.0", "1.36"), (GKE, "1.100", "1.36")])
def test_a_minor_no_cloud_offers_is_refused(base, version, newest, tmp_path, capsys):
    code, err = _plan_exit(_with(base, kubernetesVersion=version), tmp_path, capsys)
    assert code == 2, err
    assert f"cluster.kubernetesVersion: Kubernetes {version} is offered by no cloud" in err
    assert f'write "{newest}"' in err


def test_a_minor_one_cloud_lists_and_another_not_yet_is_not_refused():
    parse_stack_config(_with(GKE, kubernetesVersion="1.37"))   # AKS dates 1.37; GKE's Rapid channel may offer it


def test_an_unquoted_version_is_told_to_quote_it():
    raw = _with(GKE)
    raw["cluster"]["kubernetesVersion"] = 1.35
    message = _issues(raw)["cluster.kubernetesVersion"]
    assert "unquoted" in message and 'kubernetesVersion: "1.35"' in message


# --- accelerator names and machine lists ---------------------------------------------------------------------

def test_an_accelerator_another_cloud_names_points_at_this_cloud_s_name(tmp_path, capsys):
    raw = copy.deepcopy(AKS)
    raw["nodePools"] = {"a100": {"vmSize": "Standard_NC24ads_A100_v4", "accelerator": {"type": "nvidia-a100-80gb"},
                                 "autoscaling": {"min": 1, "max": 1}}}
    code, err = _plan_exit(raw, tmp_path, capsys)
    assert code == 2, err
    assert "nodePools.a100.accelerator.type: nvidia-a100-80gb is not offered on AKS: write nvidia-a100-80gb-pcie" in err


def test_an_accelerator_with_no_twin_lists_what_the_cloud_offers():
    raw = copy.deepcopy(AKS)
    raw["nodePools"]["t4"]["accelerator"]["type"] = "nvidia-l4"
    message = _issues(raw)["nodePools.t4.accelerator.type"]
    assert "write" not in message and "AKS offers nvidia-a10, nvidia-a100-80gb-pcie" in message


def test_machine_lists_in_messages_sort_as_people_read_numbers():
    raw = copy.deepcopy(GKE)
    raw["nodePools"]["l4"]["machineType"] = "g2-standard-5"
    message = _issues(raw)["nodePools.l4.machineType"]
    assert message.index("g2-standard-4") < message.index("g2-standard-8") < message.index("g2-standard-12")
    assert catalog.natural_sorted(["g6.12xlarge", "g6.2xlarge", "Standard_NC16as_T4_v3", "Standard_NC8as_T4_v3"]) == [
        "g6.2xlarge", "g6.12xlarge", "Standard_NC8as_T4_v3", "Standard_NC16as_T4_v3"]


# --- a hundred million replicas ------------------------------------------------------------------------------

def test_a_hundred_million_pending_replicas_are_counted_and_rendered_as_one_run():
    from simulator.advisories import replica_advisories
    from simulator.render import render_markdown
    from simulator.results import PENDING, SCHEDULED, Placements, ReplicaPlacement, SimulationResult

    runs = Placements([(ReplicaPlacement("chat", 1, SCHEDULED, "t4spot"), 0),
                       (ReplicaPlacement("chat", 2, PENDING, reason="no capacity"), 99_999_998)])
    result = SimulationResult("aks", runs, [])
    assert len(result.replicas) == 100_000_000
    assert replica_advisories(result) == ["chat: 1 of 100000000 replicas fit at the pools' maximum; the other "
                                          "99999999 stay pending (no capacity)"]
    table_rows = [line for line in render_markdown(result).splitlines() if line.startswith("| chat |")]
    assert len(table_rows) == 3 and "99,999,998 more replicas pending" in table_rows[-1]


# --- a preview carrying NaN ----------------------------------------------------------------------------------

@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_the_policy_gate_refuses_a_preview_carrying_a_non_json_number(constant, tmp_path, capsys):
    from policy_gate.__main__ import main as gate_main

    preview = tmp_path / "preview.json"
    preview.write_text('{"steps": [{"op": "create", "urn": "urn:pulumi:s::p::kubernetes:apps/v1:Deployment::d", '
                       '"newState": {"type": "kubernetes:apps/v1:Deployment", "inputs": {"spec": {"replicas": '
                       f'{constant}}}}}}}]}}')
    assert gate_main([str(preview)]) == 2
    err = capsys.readouterr().err
    assert "not valid JSON (line 1, column" in err and f"{constant.lstrip('-')} is not a JSON number" in err, err
    assert "policy pack failed" not in err


def test_a_json_input_read_whole_refuses_nan_too(tmp_path):
    import input_files

    path = tmp_path / "x.json"
    path.write_text('{"a": NaN}')
    with pytest.raises(input_files.InputFileError, match="NaN is not a JSON number"):
        input_files.read_json(path, input_files.PREVIEW_JSON)


# --- a model too large for every alternative -----------------------------------------------------------------

def _serving(model: str, pools: dict, **workload) -> dict:
    raw = copy.deepcopy(GKE)
    raw["nodePools"] = pools
    raw["computeClasses"] = {"serving": {"pools": list(pools)}}
    raw["workloads"] = {"chat": {"computeClass": "serving", "model": model, **workload}}
    return raw


L4_1 = {"machineType": "g2-standard-8", "accelerator": {"type": "nvidia-l4", "count": 1}}
L4_8 = {"machineType": "g2-standard-96", "accelerator": {"type": "nvidia-l4", "count": 8}}
A100_80_1 = {"machineType": "a2-ultragpu-1g", "accelerator": {"type": "nvidia-a100-80gb", "count": 1}}


def _weight_warnings(raw: dict) -> list[str]:
    return [w for w in config_warnings(parse_stack_config(raw)) if w.startswith("workloads.chat.model")]


def test_a_70b_model_on_one_l4_is_warned_with_its_assumption(tmp_path, capsys):
    raw = _serving("meta-llama/Llama-3.3-70B-Instruct", {"l4": L4_1})
    [warning] = _weight_warnings(raw)
    assert "states 70B parameters, 130.4 GiB of weights in bf16 (2 bytes a parameter)" in warning
    assert "KV cache on top" in warning and "every alternative" in warning and "l4: 1 x NVIDIA L4" in warning
    code, err = _plan_exit(raw, tmp_path, capsys)
    assert code == 0 and "warning: workloads.chat.model" in err, err


def test_a_model_too_large_for_some_alternatives_names_them():
    [warning] = _weight_warnings(_serving("google/gemma-4-31B-it", {"a100": A100_80_1, "l4": L4_1}))
    assert "more than the device memory of l4 " in warning and "a100" not in warning.split("(")[1]


def test_models_that_fit_or_state_no_plain_size_are_not_weighed():
    assert not _weight_warnings(_serving("meta-llama/Llama-3.1-8B-Instruct", {"l4": L4_1}))
    assert not _weight_warnings(_serving("meta-llama/Llama-3.3-70B-Instruct", {"l4": L4_8}))  # 8 x 24 GB
    for model in ("TheBloke/Llama-2-70B-AWQ", "mistralai/Mixtral-8x7B-v0.1", "deepseek-ai/DeepSeek-V3",
                  "openai/gpt-oss-120b"):
        assert not _weight_warnings(_serving(model, {"l4": L4_1})), model
    assert not _weight_warnings(_serving("meta-llama/Llama-3.3-70B-Instruct", {"l4": L4_1},
                                         extraArgs=["--quantization=fp8"]))


# --- a 1 x L4 pool ahead of a 2 x L4 pool ---------------------------------------------------------------------

L4_2 = {"machineType": "g2-standard-24", "accelerator": {"type": "nvidia-l4", "count": 2}}


def test_a_smaller_shape_of_the_same_gpu_first_is_warned_and_the_table_says_what_happens(tmp_path, capsys):
    raw = _serving("google/gemma-3-4b-it", {"l4-spot": L4_1, "l4x2": L4_2})
    [warning] = [w for w in config_warnings(parse_stack_config(raw)) if w.startswith("computeClasses.serving")]
    assert warning.startswith("computeClasses.serving.pools[1] (l4x2, 2 x nvidia-l4 per node) comes after l4-spot")
    assert "tensor-parallel 1" in warning and "2 replicas share a node" in warning
    code, err = _plan_exit(raw, tmp_path, capsys)
    assert code == 0 and "warning: computeClasses.serving.pools[1]" in err, err
    summary = (tmp_path / "build" / "mine" / "summary.md").read_text()
    fungibility = summary.split("## Fungibility", 1)[1]
    assert "On `l4x2` nodes (2 x nvidia-l4) the scheduler takes the `l4-spot` alternative (1 device)" in fungibility


def test_the_larger_shape_first_is_not_warned():
    raw = _serving("google/gemma-3-4b-it", {"l4x2": L4_2, "l4-spot": L4_1})
    assert not [w for w in config_warnings(parse_stack_config(raw)) if w.startswith("computeClasses.serving")]


def test_the_simulator_places_what_the_warning_says(tmp_path, capsys):
    from simulator.__main__ import main as simulator_main

    raw = _serving("google/gemma-3-4b-it", {"l4-spot": L4_1, "l4x2": L4_2}, replicas=2)
    raw["nodePools"]["l4x2"]["autoscaling"] = {"min": 0, "max": 1}
    config = {f"gpu-fungibility:{k}": v for k, v in raw.items()}
    (tmp_path / "Pulumi.mine.yaml").write_text(yaml.safe_dump({"config": config}))
    assert simulator_main(["--stack", "mine", "--stack-dir", str(tmp_path), "--stockout", "l4-spot", "--json"]) == 0
    replicas = json.loads(capsys.readouterr().out)["replicas"]
    assert [(r["pool"], r["tensorParallelSize"]) for r in replicas] == [("l4x2", 1), ("l4x2", 1)]


# --- MIG through any device class on a GKE DRA pool -----------------------------------------------------------

def test_gke_refuses_a_claim_reaching_mig_through_a_device_class_of_its_own():
    from gpu_fungibility import device_selectors

    from policies.rules.gke import validate_gke_dra_driver_install
    from tests.policy_fixtures import R, gke_stack, run_stack_rule

    slices = R("kubernetes:resource.k8s.io/v1:DeviceClass", "big-slices", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "big-slices"},
        "spec": {"selectors": [{"cel": {"expression": device_selectors.device_class_expression(
            "gpu.nvidia.com", min_memory_gi=20, devices="mig")}}]}})
    whole = R("kubernetes:resource.k8s.io/v1:DeviceClass", "big-gpus", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "big-gpus"},
        "spec": {"selectors": [{"cel": {"expression": device_selectors.device_class_expression(
            "gpu.nvidia.com", min_memory_gi=20)}}]}})

    def claim(name: str, device_class: str) -> R:
        return R("kubernetes:resource.k8s.io/v1:ResourceClaim", name, {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "inference"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": device_class}}]}}})

    found = run_stack_rule(validate_gke_dra_driver_install,
                           [*gke_stack(), slices, whole, claim("shared-slice", "big-slices"),
                            claim("shared-gpu", "big-gpus")])
    assert [urn.rsplit("::", 1)[1] for _, urn in found.violations] == ["shared-slice"], found.messages
    assert "DeviceClass big-slices admits MIG slices" in found.messages[0]
    assert "GKE does not support multi-instance GPUs" in found.messages[0]


# --- AKS DRA pools: one story --------------------------------------------------------------------------------

def test_an_aks_dra_pool_that_may_not_grow_is_warned_and_simulated_at_its_min(tmp_path, capsys):
    from simulator.__main__ import main as simulator_main

    raw = copy.deepcopy(AKS)
    raw["nodePools"]["t4"]["autoscaling"] = {"min": 1, "max": 3}
    raw["nodePools"]["t4"]["spot"] = True
    raw["workloads"] = {"chat": {"pool": "t4", "model": "google/gemma-3-1b-it", "replicas": 2}}
    [warning] = [w for w in config_warnings(parse_stack_config(raw)) if w.startswith("nodePools.t4.autoscaling.max")]
    assert "does not grow a DRA pool past minCount" in warning and "aks-dra-pool-size" in warning
    config = {f"gpu-fungibility:{k}": v for k, v in raw.items()}
    (tmp_path / "Pulumi.mine.yaml").write_text(yaml.safe_dump({"config": config}))
    assert simulator_main(["--stack", "mine", "--stack-dir", str(tmp_path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [r["status"] for r in result["replicas"]] == ["scheduled", "pending"]
    assert "t4 is at min (1 node, none with room; max 3 is not reached" in result["replicas"][1]["reason"]


def test_an_eks_or_classic_pool_still_grows_to_its_max():
    raw = copy.deepcopy(EKS)
    raw["nodePools"]["a10g"]["autoscaling"] = {"min": 1, "max": 3}
    assert not [w for w in config_warnings(parse_stack_config(raw)) if "past minCount" in w]
    raw = copy.deepcopy(AKS)
    raw["nodePools"]["t4"].update(dra=False, autoscaling={"min": 0, "max": 3})
    assert not [w for w in config_warnings(parse_stack_config(raw)) if "past minCount" in w]


# --- AKS facts this month -------------------------------------------------------------------------------------

def test_the_rtx_pro_6000_bse_v6_sizes_run_the_grid_driver_as_agentbaker_says():
    from gpu_fungibility.clouds.aks import node_pools as aks_node_pools

    lines = (FIXTURES / "agentbaker_rtxpro6000_sizes.txt").read_text().splitlines()
    recorded = {line for line in lines if line and not line.startswith("#")}
    assert aks_node_pools.RTX_PRO_GRID_DRIVER_SIZES == recorded
    assert aks_node_pools.runs_grid_driver("Standard_NC72ds_xl_RTXPRO6000BSE_v6")
    assert not aks_node_pools.runs_grid_driver("Standard_NC24ads_A100_v4")


# --- make diff: pool changes that drain the GPU nodes -----------------------------------------------------------

def test_a_gke_gpu_pool_machine_type_change_says_it_replaces_every_node():
    from plan_diff import impact
    from plan_diff.compare import compare
    from tests.test_plan_diff_compare import POOL, pool_plan

    diff = compare(pool_plan(), pool_plan(nodeConfig__machineType="a2-ultragpu-2g"))
    [change] = [c for c in diff.changes if c.urn == POOL]
    assert change.op == "update"  # pulumi-gcp updates it in place: not ForceNew
    [(urn, warning)] = impact.warnings(diff)
    assert urn == POOL and "GPU node pool `a100` is updated in place, and GKE replaces every node" in warning
    assert "machine type" in warning and "drained" in warning


def test_a_gpu_pool_force_replaced_says_its_nodes_are_drained():
    from plan_diff import impact
    from plan_diff.compare import compare
    from tests.test_plan_diff_compare import pool_plan

    diff = compare(pool_plan(), pool_plan(nodeConfig__guestAccelerators=[{"count": 2, "type": "nvidia-a100-80gb"}]))
    [(_, warning)] = impact.warnings(diff)
    assert "is replaced" in warning and "nodes are drained and deleted" in warning


def test_a_gpu_pool_size_change_is_a_plain_update():
    from plan_diff import impact
    from plan_diff.compare import compare
    from tests.test_plan_diff_compare import pool_plan

    assert impact.warnings(compare(pool_plan(), pool_plan(autoscaling__totalMaxNodeCount=3))) == []


# --- an unknown AKS system-pool VM size ----------------------------------------------------------------------

def test_an_unknown_aks_system_pool_size_is_warned_with_the_close_ones(tmp_path, capsys):
    raw = _with(AKS, systemPool={"vmSize": "Standard_D4ds_v9"})
    code, err = _plan_exit(raw, tmp_path, capsys)
    assert code == 0, err
    assert "warning: cluster.systemPool.vmSize: Standard_D4ds_v9 is not an Azure VM size as recorded" in err
    assert "Standard_D4ds_v5" in err


def test_the_recorded_azure_sizes_hold_every_size_the_project_knows():
    from gpu_fungibility.clouds.aks.vm_sizes import AZURE_VM_SIZES

    aks_sizes = json.loads((FIXTURES / "aks_vm_sizes.json").read_text())
    recorded_rows = {row[0] for row in aks_sizes["resource_skus"]["rows"]}
    assert aks_sizes["resource_skus"]["commit"].startswith("03e49d9c")  # the same table, the same commit
    assert recorded_rows <= AZURE_VM_SIZES and set(aks_machines.MACHINES) <= AZURE_VM_SIZES
    assert "Standard_D4ds_v5" in AZURE_VM_SIZES  # the system pool's default
    for stack in ("Pulumi.aks-dev.yaml", "examples/stacks/Pulumi.my-aks.yaml"):
        raw = yaml.safe_load((Path(__file__).resolve().parent.parent / stack).read_text())["config"]
        cfg = parse_stack_config({k.split(":", 1)[1]: v for k, v in raw.items() if k.startswith("gpu-fungibility:")})
        assert not [w for w in config_warnings(cfg) if w.startswith("cluster.systemPool")], stack
