"""The stack config model: shipped stacks parse, broken configs name the right key path."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from gpu_fungibility import catalog
from gpu_fungibility.clouds.eks import machines as eks_machines
from gpu_fungibility.clouds.gke import machines as gke_machines

from offline_plan.run import run_stack
from stacks.config import StackConfig
from stacks.loader import ConfigError, parse_stack_config
from stacks.rules import config_warnings
from tools.stacks_in_ci import SHIPPED_STACKS

ROOT = Path(__file__).resolve().parent.parent


def namespace_of(stack: str) -> dict:
    raw = yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())["config"]
    return {k.split(":", 1)[1]: v for k, v in raw.items() if k.startswith("gpu-fungibility:")}


SHIPPED = list(SHIPPED_STACKS)  # a user's own Pulumi.<stack>.yaml is not the tests' business


@pytest.mark.parametrize("stack", SHIPPED)
def test_shipped_stacks_parse(stack):
    cfg = parse_stack_config(namespace_of(stack))
    assert isinstance(cfg, StackConfig)
    assert cfg.node_pools, f"Pulumi.{stack}.yaml declares no accelerator pools"


def test_dev_stack_reproduces_seed_000():
    cfg = parse_stack_config(namespace_of("dev"))
    p80, p40 = cfg.node_pools["a100-80gb"], cfg.node_pools["a100-40gb"]
    assert (p80.machine_type, p80.accelerator.type, p80.accelerator.count) == ("a2-ultragpu-1g", "nvidia-a100-80gb", 1)
    assert (p40.machine_type, p40.accelerator.type, p40.accelerator.count) == ("a2-highgpu-2g", "nvidia-tesla-a100", 2)
    assert (p80.autoscaling.min, p80.autoscaling.max, p40.autoscaling.min, p40.autoscaling.max) == (1, 2, 0, 2)
    assert p40.spot and p80.disk_size_gb == 300
    assert cfg.compute_classes["vllm-gpu-ccc"].pools == ["a100-80gb", "a100-40gb"]
    assert cfg.compute_classes["vllm-gpu-ccc"].consolidation_delay_minutes == 3
    wl = cfg.workloads["vllm-gpu"]
    assert (wl.model, wl.max_model_len, wl.compute_class) == ("google/gemma-4-31B-it", 65536, "vllm-gpu-ccc")
    assert cfg.pools_of("tpu"), "the dev stack carries seed 003's TPU pool"


def test_defaults_live_on_the_model():
    cfg = parse_stack_config({
        "cluster": {"cloud": "gke", "name": "c", "location": "us-central1", "zones": ["us-central1-a"]},
        "nodePools": {"l4": {"machineType": "g2-standard-8", "accelerator": {"type": "nvidia-l4"}}},
    })
    pool = cfg.node_pools["l4"]
    assert pool.spot is True and pool.dra is True and pool.accelerator.count == 1
    assert cfg.cluster.private_nodes is True
    assert cfg.cluster.control_plane.public_endpoint is False
    assert cfg.drivers.nvidia_dra.version.startswith("0.4.")
    assert cfg.drivers.tpu_dra.version == "0.2.0"


def test_config_is_not_mutated():
    raw = namespace_of("dev")
    before = copy.deepcopy(raw)
    parse_stack_config(raw)
    assert raw == before


def test_catalog_publishes_nvml_memory_not_marketing_memory():
    assert catalog.GPUS["nvidia-h100-80gb"].published_memory_mib == 81559
    assert catalog.GPUS["nvidia-a100-80gb"].product_name == "NVIDIA A100-SXM4-80GB"
    for needed in ("nvidia-tesla-a100", "nvidia-a100-80gb", "nvidia-h100-80gb", "nvidia-h200-141gb", "nvidia-l4",
                   "nvidia-tesla-t4", "nvidia-a10g", "nvidia-l40s", "nvidia-b200"):
        assert needed in catalog.GPUS
    assert {"tpu-v5-lite-podslice", "tpu-v5p-slice", "tpu-v6e-slice"} <= set(catalog.TPUS)
    for shape in [*gke_machines.MACHINES.values(), *eks_machines.MACHINES.values()]:
        assert catalog.accelerator(shape.accelerator), f"{shape.name} names an unknown accelerator"


# ---- the broken-config corpus -------------------------------------------------

GKE = {
    "cluster": {"cloud": "gke", "name": "gpu", "location": "us-central1", "zones": ["us-central1-c"]},
    "nodePools": {
        "a100-80gb": {"machineType": "a2-ultragpu-1g", "accelerator": {"type": "nvidia-a100-80gb", "count": 1},
                      "autoscaling": {"min": 1, "max": 2}},
        "a100-40gb": {"machineType": "a2-highgpu-2g", "accelerator": {"type": "nvidia-tesla-a100", "count": 2},
                      "autoscaling": {"min": 0, "max": 2}},
        "v6e": {"machineType": "ct6e-standard-1t", "accelerator": {"type": "tpu-v6e-slice"}},
    },
    "computeClasses": {"ccc": {"pools": ["a100-80gb", "a100-40gb"]}},
    "workloads": {"vllm": {"computeClass": "ccc", "model": "google/gemma-4-31B-it"}},
}

EKS = {
    "cluster": {"cloud": "eks", "name": "gpu", "location": "us-west-2", "zones": ["us-west-2a", "us-west-2b"]},
    "nodePools": {
        "l40s": {"instanceTypes": ["g6e.xlarge"], "accelerator": {"type": "nvidia-l40s"},
                 "autoscaling": {"min": 1, "max": 2}},
        "a10g": {"instanceTypes": ["g5.12xlarge"], "accelerator": {"type": "nvidia-a10g", "count": 4},
                 "autoscaling": {"min": 1, "max": 2}},
    },
    "computeClasses": {"gpus": {"pools": ["l40s", "a10g"]}},
}


def _set(doc: dict, path: str, value) -> None:
    keys = path.split("/")
    for key in keys[:-1]:
        doc = doc[int(key)] if isinstance(doc, list) else doc.setdefault(key, {})
    if value is DELETE:
        del doc[keys[-1]]
    else:
        doc[keys[-1]] = value


DELETE = object()

# (id, base, [(path, value)], expected key path, expected words in the message)
CORPUS = [
    ("max-below-min", GKE, [("nodePools/a100-40gb/autoscaling/min", 3)], "nodePools.a100-40gb.autoscaling.max", "below the minimum (3)"),
    ("max-zero", GKE, [("nodePools/a100-40gb/autoscaling/max", 0)], "nodePools.a100-40gb.autoscaling.max", "greater than or equal to 1"),
    ("negative-min", GKE, [("nodePools/a100-40gb/autoscaling/min", -1)], "nodePools.a100-40gb.autoscaling.min", "greater than or equal to 0"),
    ("old-kubernetes", GKE, [("cluster/kubernetesVersion", "1.33")], "cluster.kubernetesVersion", "1.34 or later"),
    ("garbage-version", GKE, [("cluster/kubernetesVersion", "latest")], "cluster.kubernetesVersion", "not a Kubernetes version"),
    ("unknown-cloud", GKE, [("cluster/cloud", "azure")], "cluster.cloud", "'gke', 'eks' or 'aks'"),
    ("missing-name", GKE, [("cluster/name", DELETE)], "cluster.name", "required"),
    ("bad-cluster-name", GKE, [("cluster/name", "GPU_cluster")], "cluster.name", "not a cluster name: 1-40 lowercase letters"),
    ("no-zones", GKE, [("cluster/zones", [])], "cluster.zones", "at least 1"),
    ("typo-in-pool-key", GKE, [("nodePools/a100-80gb/acelerator", {"type": "nvidia-l4"})], "nodePools.a100-80gb.acelerator", "accepted here: accelerator"),
    ("typo-top-level", GKE, [("nodepools", {})], "nodepools", "accepted: "),
    ("unknown-accelerator", GKE, [("nodePools/a100-80gb/accelerator/type", "nvidia-a100-81gb")], "nodePools.a100-80gb.accelerator.type", "unknown accelerator type"),
    ("machine-accelerator-mismatch", GKE, [("nodePools/a100-40gb/machineType", "a2-highgpu-4g")], "nodePools.a100-40gb.accelerator", "carries 4 x nvidia-tesla-a100"),
    ("unknown-machine", GKE, [("nodePools/a100-80gb/machineType", "n2-standard-8")], "nodePools.a100-80gb.machineType", "a2-ultragpu-1g"),
    ("gke-pool-with-instance-types", GKE, [("nodePools/a100-80gb/instanceTypes", ["p4de.24xlarge"])], "nodePools.a100-80gb.instanceTypes", "for EKS"),
    ("count-too-high", GKE, [("nodePools/a100-80gb/accelerator/count", 32)], "nodePools.a100-80gb.accelerator.count", "less than or equal to 16"),
    ("class-names-missing-pool", GKE, [("computeClasses/ccc/pools", ["a100-80gb", "h100"])], "computeClasses.ccc.pools[1]", "no node pool named 'h100'"),
    ("class-mixes-families", GKE, [("computeClasses/ccc/pools", ["a100-80gb", "v6e"])], "computeClasses.ccc.pools", "mixes GPU and TPU"),
    ("class-lists-pool-twice", GKE, [("computeClasses/ccc/pools", ["a100-80gb", "a100-80gb"])], "computeClasses.ccc.pools", "listed twice"),
    ("class-empty", GKE, [("computeClasses/ccc/pools", [])], "computeClasses.ccc.pools", "at least 1"),
    ("pool-in-two-classes", GKE, [("computeClasses/other", {"pools": ["a100-40gb"]})], "computeClasses.other.pools[0]", "already belongs to compute class ccc"),
    ("class-with-non-dra-pool", GKE, [("nodePools/a100-40gb/dra", False)], "computeClasses.ccc.pools[1]", "dra: false"),
    ("workload-unknown-class", GKE, [("workloads/vllm/computeClass", "nope")], "workloads.vllm.computeClass", "no compute class named 'nope'"),
    ("workload-unknown-pool", GKE, [("workloads/vllm/computeClass", DELETE), ("workloads/vllm/pool", "h100")], "workloads.vllm.pool", "no node pool named 'h100'"),
    ("workload-two-placements", GKE, [("workloads/vllm/pool", "a100-80gb")], "workloads.vllm", "exactly one of computeClass, pool or sharedClaim"),
    ("workload-no-model", GKE, [("workloads/vllm/model", DELETE)], "workloads.vllm.model", "required"),
    ("workload-negative-replicas", GKE, [("workloads/vllm/replicas", -1)], "workloads.vllm.replicas", "-1 is below 0"),
    ("memory-floor-above-alternative", GKE, [("workloads/vllm/minAcceleratorMemoryGi", 81)], "workloads.vllm.minAcceleratorMemoryGi", "alternative a100-80gb"),
    ("public-without-loadbalancer", GKE, [("workloads/vllm/service", {"public": True})], "workloads.vllm.service", "type: LoadBalancer"),
    ("public-endpoint-without-allow-list", GKE, [("cluster/controlPlane", {"publicEndpoint": True})], "cluster.controlPlane.publicEndpoint", "needs authorized_networks"),
    ("bad-cidr", GKE, [("cluster/controlPlane", {"publicEndpoint": True, "authorizedNetworks": ["10.0.0.1/8"]})], "cluster.controlPlane.authorizedNetworks", "not a CIDR block"),
    ("pool-zone-outside-cluster", GKE, [("nodePools/a100-80gb/zones", ["us-east1-b"])], "nodePools.a100-80gb.zones", "not in cluster.zones"),
    ("on-demand-fallback-but-spot", GKE, [("nodePools/a100-80gb/onDemandFallback", True)], "nodePools.a100-80gb.onDemandFallback", "spot: false"),
    ("mig-bad-profile", GKE, [("workloads/mig", {"pool": "a100-80gb", "mig": [
        {"name": "big", "profile": "3g.20gb", "model": "a", "port": 8000}]})], "workloads.mig.mig[0].profile", "accepted: 1g.10gb"),
    ("mig-on-class", GKE, [("workloads/vllm/mig", [{"name": "s", "profile": "1g.10gb", "model": "a", "port": 8000}])], "workloads.vllm", "runs on one pool"),
    ("shared-claim-missing", GKE, [("workloads/vllm/computeClass", DELETE), ("workloads/vllm/sharedClaim", "gpu")], "workloads.vllm.sharedClaim", "no sharedClaims entry"),
    ("device-class-reserved-name", GKE, [("deviceClasses", {"gpu.nvidia.com": {"minMemoryGi": 40}})], "deviceClasses.gpu.nvidia.com", "created by a DRA driver"),
    ("mig-with-workload-model", GKE, [("workloads/mig", {"pool": "a100-80gb", "model": "m", "mig": [
        {"name": "big", "profile": "3g.40gb", "model": "a", "port": 8000}]})], "workloads.mig.model", "one model each"),
    ("pool-name-not-a-dns-label", GKE, [("nodePools/Bad_Pool", {"machineType": "g2-standard-8", "accelerator": {"type": "nvidia-l4"}})], "nodePools.Bad_Pool", "not a valid name: use lowercase letters"),
    ("cluster-not-a-mapping", GKE, [("cluster", "gke")], "cluster", "must be a mapping"),
    ("zones-not-a-list", GKE, [("cluster/zones", "us-central1-c")], "cluster.zones", "must be a list"),
    ("bad-node-label-key", GKE, [("nodePools/a100-80gb/labels", {"team name": "ml"})], "nodePools.a100-80gb.labels.team name", "is not a valid key"),
    ("bad-node-label-value", GKE, [("nodePools/a100-80gb/labels", {"team": "ML team"})], "nodePools.a100-80gb.labels.team", "is not a valid value"),
    ("bad-taint-key", GKE, [("nodePools/a100-80gb/taints", [{"key": "Example.COM/x"}])], "nodePools.a100-80gb.taints[0]", "invalid prefix"),
    ("bad-taint-effect", GKE, [("nodePools/a100-80gb/taints", [{"key": "dedicated", "effect": "NO_SCHEDULE"}])], "nodePools.a100-80gb.taints[0].effect", "'NoSchedule'"),
    ("device-class-compute-domain-name", GKE, [("deviceClasses", {"compute-domain-daemon.nvidia.com": {}})], "deviceClasses.compute-domain-daemon.nvidia.com", "created by a DRA driver"),
    ("unpinned-chart", GKE, [("drivers", {"nvidiaDra": {"chart": "oci://x/y", "version": "", "namespace": "dra"}})], "drivers.nvidiaDra.version", "at least 1 character"),
    ("eks-machine-type", EKS, [("nodePools/l40s/machineType", "a2-highgpu-1g")], "nodePools.l40s.machineType", "for GKE"),
    ("eks-missing-instance-types", EKS, [("nodePools/l40s/instanceTypes", DELETE)], "nodePools.l40s.instanceTypes", "required on EKS"),
    ("eks-mixed-gpu-shapes", EKS, [("nodePools/a10g/instanceTypes", ["g5.12xlarge", "g6.12xlarge"])], "nodePools.a10g.instanceTypes[1]", "all instance types of a group must match"),
    ("eks-unknown-instance", EKS, [("nodePools/l40s/instanceTypes", ["g7.xlarge"])], "nodePools.l40s.instanceTypes[0]", "unknown GPU instance type"),
    ("eks-tpu", EKS, [("nodePools/tpu", {"instanceTypes": ["g6e.xlarge"], "accelerator": {"type": "tpu-v6e-slice"}})], "nodePools.tpu.accelerator.type", "not offered on EKS"),
    ("gke-only-accelerator", GKE, [("nodePools/a10g", {"machineType": "g2-standard-8", "accelerator": {"type": "nvidia-a10g"}})], "nodePools.a10g.accelerator.type", "not offered on GKE"),
]


def _issues_for(base: dict, edits: list) -> list[tuple[str, str]]:
    """Every problem the loader reports: the config model's, then (when it parses) the config rules and the
    components' checks together."""
    doc = copy.deepcopy(base)
    for path, value in edits:
        _set(doc, path, value)
    try:
        parse_stack_config(doc)
    except ConfigError as exc:
        return exc.issues
    raise AssertionError("expected the config to be refused")


@pytest.mark.parametrize(("base", "edits", "path", "words"), [c[1:] for c in CORPUS], ids=[c[0] for c in CORPUS])
def test_broken_config_names_the_key_path(base, edits, path, words):
    issues = _issues_for(base, edits)
    matching = [m for p, m in issues if p == path]
    assert matching, f"expected an issue at {path}, got {issues}"
    assert any(words in m for m in matching), f"{path}: expected {words!r} in {matching}"


def test_each_problem_is_reported_once_at_the_key_the_user_wrote():
    """Label keys are kept as written (never camelCased); a pool's taint is reported at the pool only,
    not again by every component that tolerates it."""
    issues = _issues_for(GKE, [
        ("nodePools/a100-80gb/labels", {"cost_center x": "ml"}),
        ("nodePools/a100-80gb/taints", [{"key": "Example.COM/x"}]),
        ("cluster/labels", {"cost_center": "ML Platform"}),
    ])
    assert [p for p, _ in issues] == [
        "cluster.labels.cost_center", "nodePools.a100-80gb.labels.cost_center x", "nodePools.a100-80gb.taints[0]"]


def test_valid_kubernetes_labels_and_taints_are_accepted():
    doc = copy.deepcopy(GKE)
    doc["nodePools"]["a100-80gb"]["labels"] = {"team": "ml", "example.com/cost-center": "a-1_b.2", "empty": ""}
    doc["nodePools"]["a100-80gb"]["taints"] = [{"key": "example.com/dedicated", "value": "inference"}]
    pool = parse_stack_config(doc).node_pools["a100-80gb"]
    assert pool.labels["example.com/cost-center"] == "a-1_b.2" and pool.taints[0].effect == "NoSchedule"


def test_corpus_is_large_enough():
    assert len(CORPUS) >= 25


def test_the_bases_are_valid():
    parse_stack_config(copy.deepcopy(GKE))
    parse_stack_config(copy.deepcopy(EKS))


def test_all_structural_errors_are_reported_at_once():
    issues = _issues_for(GKE, [
        ("cluster/name", "GPU_cluster"),
        ("nodePools/a100-40gb/autoscaling/min", -1),
        ("nodePools/a100-80gb/diskSizeGb", 10),
    ])
    paths = {p for p, _ in issues}
    assert {"cluster.name", "nodePools.a100-40gb.autoscaling.min", "nodePools.a100-80gb.diskSizeGb"} <= paths


def test_all_component_check_errors_are_reported_at_once():
    issues = _issues_for(GKE, [
        ("cluster/kubernetesVersion", "1.30"),
        ("nodePools/a100-40gb/autoscaling/min", 5),
        ("nodePools/a100-80gb/machineType", "n2-standard-8"),
        ("workloads/vllm/model", DELETE),
    ])
    paths = {p for p, _ in issues}
    assert {"cluster.kubernetesVersion", "nodePools.a100-40gb.autoscaling.max",
            "nodePools.a100-80gb.machineType", "workloads.vllm.model"} <= paths


def test_rule_and_component_errors_are_reported_at_once():
    issues = _issues_for(GKE, [
        ("cluster/kubernetesVersion", "1.30"),
        ("nodePools/a100-40gb/autoscaling/min", 5),
        ("nodePools/a100-80gb/accelerator/type", "nvidia-x"),
    ])
    paths = {p for p, _ in issues}
    assert {"cluster.kubernetesVersion", "nodePools.a100-40gb.autoscaling.max",
            "nodePools.a100-80gb.accelerator.type"} <= paths


def test_all_cross_field_errors_are_reported_at_once():
    issues = _issues_for(GKE, [
        ("computeClasses/ccc/pools", ["a100-80gb", "nope"]),
        ("workloads/vllm/computeClass", "other"),
        ("nodePools/a100-40gb/zones", ["us-east1-b"]),
    ])
    paths = {p for p, _ in issues}
    assert {"computeClasses.ccc.pools[1]", "workloads.vllm.computeClass", "nodePools.a100-40gb.zones"} <= paths


def test_cross_field_and_pool_shape_errors_are_reported_at_once():
    issues = _issues_for(GKE, [
        ("computeClasses/ccc/pools", ["a100-80gb", "nope"]),
        ("workloads/vllm/computeClass", "other"),
        ("nodePools/a100-40gb/machineType", "a2-highgpu-8g"),
    ])
    paths = {p for p, _ in issues}
    assert {"computeClasses.ccc.pools[1]", "workloads.vllm.computeClass", "nodePools.a100-40gb.accelerator"} <= paths


def test_more_than_eight_alternatives_is_an_error():
    doc = copy.deepcopy(GKE)
    for i in range(9):
        doc["nodePools"][f"l4-{i}"] = {"machineType": "g2-standard-8", "accelerator": {"type": "nvidia-l4"}}
    doc["computeClasses"]["ccc"]["pools"] = [f"l4-{i}" for i in range(9)]
    issues = _issues_for(doc, [])
    assert any(p == "computeClasses.ccc.pools" and "at most 8" in m for p, m in issues), issues


def test_error_message_lists_every_problem_with_its_path():
    doc = copy.deepcopy(GKE)
    doc["nodePools"]["a100-40gb"]["autoscaling"]["min"] = 3
    with pytest.raises(ConfigError) as caught:
        run_stack(doc)  # the loader: the model, then the components' checks in key paths
    text = str(caught.value)
    assert text.startswith("invalid stack config: 1 problem")
    assert "nodePools.a100-40gb.autoscaling.max: 2 is below the minimum (3)" in text


def test_eks_dra_group_at_zero_warns():
    doc = copy.deepcopy(EKS)
    doc["nodePools"]["a10g"]["autoscaling"]["min"] = 0
    warnings = config_warnings(parse_stack_config(doc))
    assert any("nodePools.a10g.autoscaling.min is 0" in w and "scale up from zero" in w for w in warnings), warnings
    assert not config_warnings(parse_stack_config(copy.deepcopy(EKS)))
