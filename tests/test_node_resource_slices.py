"""``devices.node_resource_slices``: whole ResourceSlice objects as the pinned drivers publish them for one node."""

import pytest
from gpu_fungibility import catalog, devices, mig_geometry
from gpu_fungibility.clouds.aks import machines as aks_machines
from gpu_fungibility.clouds.eks import machines as eks_machines
from gpu_fungibility.clouds.gke import machines as gke_machines

from offline_plan.manifests import Manifest, validate

KUBERNETES = "1.35"


def _valid(obj: dict) -> None:
    result = validate(Manifest("urn", "slice.yaml", obj), KUBERNETES)
    assert result.status == "valid", result.detail


def test_a_gpu_node_publishes_one_slice_in_a_pool_named_after_the_node():
    (slice_,) = devices.node_resource_slices("gke-l4-0", "nvidia-l4", 4, cluster="c")
    assert slice_["apiVersion"] == "resource.k8s.io/v1" and slice_["kind"] == "ResourceSlice"
    assert slice_["metadata"]["generateName"] == "gke-l4-0-gpu.nvidia.com-"
    assert slice_["metadata"]["name"].startswith("gke-l4-0-gpu.nvidia.com-")
    spec = slice_["spec"]
    assert spec["driver"] == "gpu.nvidia.com" and spec["nodeName"] == "gke-l4-0"
    assert spec["pool"] == {"name": "gke-l4-0", "generation": 1, "resourceSliceCount": 1}
    assert [d["name"] for d in spec["devices"]] == ["gpu-0", "gpu-1", "gpu-2", "gpu-3"]
    assert spec["devices"][0]["capacity"] == {"memory": {"value": "23034Mi"}}
    _valid(slice_)


def test_the_same_inputs_give_the_same_slices():
    assert devices.node_resource_slices("n", "nvidia-h100-80gb", 8) == devices.node_resource_slices(
        "n", "nvidia-h100-80gb", 8)
    assert devices.node_resource_slices("n", "nvidia-h100-80gb", 1, cluster="a") != devices.node_resource_slices(
        "n", "nvidia-h100-80gb", 1, cluster="b")


def test_a_mig_node_publishes_the_slices_under_their_driver_names():
    (slice_,) = devices.node_resource_slices("a3-0", "nvidia-h100-80gb", 8, mig_profiles=["1g.10gb"])
    names = [d["name"] for d in slice_["spec"]["devices"]]
    assert len(names) == 56 and names[:7] == [f"gpu-0-mig-1g10gb-19-{i}" for i in range(7)]
    first = slice_["spec"]["devices"][0]
    assert first["capacity"]["memory"] == {"value": "9984Mi"}
    assert first["capacity"]["memorySlice0"] == {"value": "1"}
    assert first["attributes"]["profile"] == {"string": "1g.10gb"}
    _valid(slice_)


@pytest.mark.parametrize("gpu", sorted(mig_geometry.GEOMETRY))
def test_every_mig_profile_makes_valid_devices(gpu):
    model = catalog.GPUS[gpu]
    for profile in model.mig_profiles:
        (slice_,) = devices.node_resource_slices("node-1", gpu, 8, mig_profiles=[profile])
        _valid(slice_)
        for device in slice_["spec"]["devices"]:
            assert devices.device_problem(device) is None, device["name"]


def test_a_media_extension_profile_is_named_as_the_driver_names_it():
    (slice_,) = devices.node_resource_slices("n", "nvidia-h200-141gb", 1, mig_profiles=["1g.18gb+me", "3g.71gb"])
    names = [d["name"] for d in slice_["spec"]["devices"]]
    assert names == ["gpu-0-mig-1g18gb-me-20-0", "gpu-0-mig-3g71gb-9-4"]
    _valid(slice_)


def test_a_tpu_node_publishes_its_chips():
    (slice_,) = devices.node_resource_slices("gke-tpu-0", "tpu-v6e-slice", 4)
    assert slice_["spec"]["driver"] == "tpu.google.com"
    assert [d["name"] for d in slice_["spec"]["devices"]] == ["accel0", "accel1", "accel2", "accel3"]
    _valid(slice_)


def test_every_catalog_machine_fits_one_slice():
    for shape in (*gke_machines.MACHINES.values(), *eks_machines.MACHINES.values(), *aks_machines.MACHINES.values()):
        model = catalog.accelerator(shape.accelerator)
        smallest = [model.mig_profiles[0]] if isinstance(model, catalog.GpuModel) and model.mig_profiles else None
        slices = devices.node_resource_slices("n", shape.accelerator, shape.count, mig_profiles=smallest)
        assert len(slices) == 1 and len(slices[0]["spec"]["devices"]) <= devices.RESOURCE_SLICE_MAX_DEVICES


def test_more_than_128_devices_are_split_over_slices_of_one_pool():
    slices = devices.node_resource_slices("big", "nvidia-h100-80gb", 20, mig_profiles=["1g.10gb"])
    assert [len(s["spec"]["devices"]) for s in slices] == [128, 12]
    assert {s["spec"]["pool"]["resourceSliceCount"] for s in slices} == {2}
    assert len({s["metadata"]["name"] for s in slices}) == 2


@pytest.mark.parametrize(("args", "match"), [
    (("Bad_Node", "nvidia-l4", 1), "not a node name"),
    (("n", "nvidia-nope", 1), "unknown accelerator"),
])
def test_bad_input_is_refused(args, match):
    with pytest.raises(ValueError, match=match):
        devices.node_resource_slices(*args)


def test_a_layout_that_does_not_fit_is_refused():
    with pytest.raises(ValueError, match="do not fit"):
        devices.node_resource_slices("n", "nvidia-h100-80gb", 1, mig_profiles=["7g.80gb"], mig_sets=2)


def test_device_problem_finds_what_the_api_server_refuses():
    good = devices.published("c", "n", "nvidia-l4", 1)[1][0]
    assert devices.device_problem(good) is None
    assert "DNS label" in devices.device_problem({**good, "name": "gpu.0"})
    too_many = {**good, "capacity": {f"c{i}": {"value": "1"} for i in range(30)}}
    assert "at most 32" in devices.device_problem(too_many)
    assert "exactly one" in devices.device_problem({**good, "attributes": {"x": {"string": "a", "int": 1}}})
