"""Generated CEL selectors, compiled and evaluated by a real CEL engine (dra_cel).

Devices are built the way the drivers publish them: the NVIDIA driver's
productName/type/architecture attributes and NVML memory (an H100 80GB
publishes 81559Mi), MIG slices with profile/parentUUID, TPU chips with tpuGen.
"""

from __future__ import annotations

import pytest
from gpu_fungibility import catalog, device_selectors, dra_cel


def gpu_device(model: catalog.GpuModel, *, memory: str | None = None) -> dra_cel.Device:
    return dra_cel.Device.from_slice_device("gpu.nvidia.com", {
        "attributes": {
            "type": {"string": "gpu"},
            "productName": {"string": model.product_name},
            "brand": {"string": model.brand},
            "architecture": {"string": model.architecture},
            "cudaComputeCapability": {"version": model.cuda_compute_capability},
            "uuid": {"string": f"GPU-{model.type}"},
        },
        "capacity": {"memory": {"value": memory or f"{model.published_memory_mib}Mi"}},
    })


def mig_device(model: catalog.GpuModel, profile: str) -> dra_cel.Device:
    memory_gb = int(profile.split(".")[1].removesuffix("gb"))
    return dra_cel.Device.from_slice_device("gpu.nvidia.com", {
        "attributes": {
            "type": {"string": "mig"},
            "profile": {"string": profile},
            "parentUUID": {"string": f"GPU-{model.type}"},
            "productName": {"string": model.product_name},
            "architecture": {"string": model.architecture},
            "uuid": {"string": f"MIG-{model.type}-{profile}"},
        },
        "capacity": {"memory": {"value": f"{memory_gb * 1024}Mi"}},
    })


def tpu_device(generation: str) -> dra_cel.Device:
    return dra_cel.Device.from_slice_device("tpu.google.com", {
        "attributes": {"index": {"int": 0}, "uuid": {"string": "tpu-1"}, "tpuGen": {"string": generation}},
    })


GPU_DEVICES = {t: gpu_device(m) for t, m in catalog.GPUS.items()}
TPU_DEVICES = {t: tpu_device(device_selectors.tpu_driver_generation(t)) for t in catalog.TPUS}
ALL_DEVICES = {**GPU_DEVICES, **TPU_DEVICES}


@pytest.mark.parametrize("accelerator_type", catalog.known_accelerator_types())
def test_each_catalog_selector_compiles_and_selects_only_its_accelerator(accelerator_type):
    expression = device_selectors.accelerator_selector(accelerator_type)
    program = dra_cel.compile_expression(expression)
    chosen = [t for t, device in ALL_DEVICES.items() if dra_cel.matches(program, device)]
    assert chosen == [accelerator_type], f"{expression} selects {chosen}"


def test_h100_publishing_81559mi_is_selected_where_memory_equality_misses_it():
    h100 = catalog.GPUS["nvidia-h100-80gb"]
    device = gpu_device(h100, memory="81559Mi")
    assert dra_cel.matches(device_selectors.accelerator_selector("nvidia-h100-80gb"), device)
    assert not dra_cel.matches("device.capacity['gpu.nvidia.com'].memory == quantity('80Gi')", device)
    assert not dra_cel.matches(device_selectors.accelerator_selector("nvidia-a100-80gb"), device)


def test_a100_80gb_selector_rejects_the_40gb_model_and_h100_of_similar_memory():
    expression = device_selectors.accelerator_selector("nvidia-a100-80gb")
    assert dra_cel.matches(expression, GPU_DEVICES["nvidia-a100-80gb"])
    for other in ("nvidia-tesla-a100", "nvidia-h100-80gb", "nvidia-l4"):
        assert not dra_cel.matches(expression, GPU_DEVICES[other]), other


def test_gpu_selectors_are_false_not_errors_on_tpu_chips_and_vice_versa():
    for gpu in catalog.GPUS:
        for tpu in TPU_DEVICES.values():
            assert dra_cel.matches(device_selectors.accelerator_selector(gpu), tpu) is False
    for tpu in catalog.TPUS:
        for gpu in GPU_DEVICES.values():
            assert dra_cel.matches(device_selectors.accelerator_selector(tpu), gpu) is False


@pytest.mark.parametrize(("accelerator_type", "generation"), [
    ("tpu-v6e-slice", "v6e"), ("tpu-v5p-slice", "v5p"), ("tpu-v5-lite-podslice", "v5litepod"),
])
def test_tpu_generation_follows_the_tpu_driver_naming(accelerator_type, generation):
    assert device_selectors.tpu_driver_generation(accelerator_type) == generation


def test_tpu_generation_refuses_a_non_tpu_type():
    with pytest.raises(ValueError, match="not a GKE TPU accelerator type"):
        device_selectors.tpu_driver_generation("nvidia-l4")


def test_mig_selector_picks_its_profile_of_its_gpu_only():
    a100 = catalog.GPUS["nvidia-a100-80gb"]
    h100 = catalog.GPUS["nvidia-h100-80gb"]
    expression = device_selectors.mig_slice_selector("nvidia-a100-80gb", "3g.40gb")
    program = dra_cel.compile_expression(expression)
    assert dra_cel.matches(program, mig_device(a100, "3g.40gb"))
    assert not dra_cel.matches(program, mig_device(a100, "1g.10gb"))
    assert not dra_cel.matches(program, mig_device(h100, "3g.40gb"))
    assert dra_cel.matches(program, gpu_device(a100)) is False  # a whole GPU has no profile: false, not an error
    assert dra_cel.matches(program, TPU_DEVICES["tpu-v6e-slice"]) is False


def test_mig_selector_refuses_a_profile_the_gpu_does_not_have():
    with pytest.raises(ValueError, match="not a MIG profile"):
        device_selectors.mig_slice_selector("nvidia-tesla-a100", "3g.40gb")


def test_seed_002_high_memory_class_selects_gpus_with_40gi_or_more():
    expression = device_selectors.device_class_expression("gpu.nvidia.com", min_memory_gi=40)
    assert expression == (
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu' && "
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"
    )
    program = dra_cel.compile_expression(expression)
    selected = sorted(t for t, d in GPU_DEVICES.items() if dra_cel.matches(program, d))
    expected = sorted(t for t, m in catalog.GPUS.items() if m.published_memory_mib >= 40 * 1024)
    assert selected == expected
    assert "nvidia-h100-80gb" in selected and "nvidia-tesla-a100" in selected and "nvidia-l4" not in selected
    a100 = catalog.GPUS["nvidia-a100-80gb"]
    assert not dra_cel.matches(program, mig_device(a100, "3g.40gb")), "a 40GB MIG slice is not a high-memory GPU"
    assert dra_cel.matches(program, TPU_DEVICES["tpu-v6e-slice"]) is False


def test_device_class_with_products_architectures_and_user_expressions():
    expression = device_selectors.device_class_expression(
        "gpu.nvidia.com", product_names=["NVIDIA L4", "NVIDIA L40S"], architectures=["Ada Lovelace"],
        expressions=["device.attributes['gpu.nvidia.com'].cudaComputeCapability.compareTo(semver('8.9.0')) >= 0"],
    )
    program = dra_cel.compile_expression(expression)
    assert sorted(t for t, d in GPU_DEVICES.items() if dra_cel.matches(program, d)) == ["nvidia-l4", "nvidia-l40s"]


def test_tpu_device_class_pins_the_tpu_driver():
    program = dra_cel.compile_expression(device_selectors.device_class_expression("tpu.google.com"))
    assert all(dra_cel.matches(program, d) for d in TPU_DEVICES.values())
    assert not any(dra_cel.matches(program, d) for d in GPU_DEVICES.values())


def test_string_literals_are_escaped():
    name = "Odd 'quoted' \\ GPU"
    device = dra_cel.Device.from_slice_device("gpu.nvidia.com", {"attributes": {"productName": {"string": name}}})
    assert dra_cel.matches(device_selectors.product_name_is(name), device)
    assert not dra_cel.matches(device_selectors.product_name_is("Odd"), device)


def test_unknown_accelerator_is_refused():
    with pytest.raises(ValueError, match="unknown accelerator type"):
        device_selectors.accelerator_selector("nvidia-tesla-v100")
