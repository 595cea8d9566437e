"""CEL device selectors generated from the accelerator catalog.

Every expression here is evaluated by the scheduler against the devices the
DRA drivers publish in their ResourceSlices, so each one is written against
what the drivers really publish:

- NVIDIA (``gpu.nvidia.com``): string attributes ``productName``,
  ``architecture``, ``type`` (``gpu`` or ``mig``), MIG ``profile`` and
  ``parentUUID``; capacity ``memory`` is the NVML total, which is *not* the
  marketing figure (an H100 80GB publishes 81559Mi). A pool's accelerator is
  therefore matched on its ``productName``, never on ``memory == quantity(..)``;
  memory is only ever compared as a lower bound with ``compareTo``.
- Google TPU (``tpu.google.com``): string attribute ``tpuGen`` (``v6e``,
  ``v5p``, ``v5litepod``, ...), derived by the driver from the node's
  ``cloud.google.com/gke-tpu-accelerator`` label.

All functions are pure and return plain strings, so they can be compiled and
evaluated by a CEL engine in tests without Pulumi.
"""

from . import catalog

NVIDIA_DRIVER = "gpu.nvidia.com"
TPU_DRIVER = "tpu.google.com"

#: DeviceClasses the DRA drivers install (charts dra-driver-nvidia-gpu / dra-driver-google-tpu).
GPU_DEVICE_CLASS = "gpu.nvidia.com"
MIG_DEVICE_CLASS = "mig.nvidia.com"
TPU_DEVICE_CLASS = "tpu.google.com"

#: The selectors of the DeviceClasses the drivers' charts install (the ones the stack's claims name).
DRIVER_DEVICE_CLASS_SELECTORS: dict[str, list[str]] = {
    GPU_DEVICE_CLASS: ["device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"],
    MIG_DEVICE_CLASS: ["device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"],
    TPU_DEVICE_CLASS: ["device.driver == 'tpu.google.com'"],
}

#: The attribute all MIG slices of one physical GPU share (for matchAttribute constraints).
MIG_PARENT_ATTRIBUTE = f"{NVIDIA_DRIVER}/parentUUID"


def cel_string(value: str) -> str:
    """A CEL single-quoted string literal for ``value``."""
    escaped = value.replace("\\", "\\\\").replace("'", "\\'")
    return f"'{escaped}'"


def attribute(driver: str, name: str) -> str:
    return f"device.attributes[{cel_string(driver)}].{name}"


def capacity(driver: str, name: str) -> str:
    return f"device.capacity[{cel_string(driver)}].{name}"


def driver_is(driver: str) -> str:
    return f"device.driver == {cel_string(driver)}"


def product_name_is(product_name: str) -> str:
    """Exactly one NVIDIA GPU model, by the NVML product name the driver publishes."""
    return f"{attribute(NVIDIA_DRIVER, 'productName')} == {cel_string(product_name)}"


def one_of(driver: str, name: str, values: list[str]) -> str:
    """The attribute equals one of ``values`` (a single value is an equality)."""
    if len(values) == 1:
        return f"{attribute(driver, name)} == {cel_string(values[0])}"
    return f"{attribute(driver, name)} in [{', '.join(cel_string(v) for v in values)}]"


def memory_at_least(gib: int, driver: str = NVIDIA_DRIVER) -> str:
    """Device memory >= ``gib`` GiB. ``compareTo`` is the Kubernetes quantity library's ordering."""
    return f"{capacity(driver, 'memory')}.compareTo(quantity({cel_string(f'{gib}Gi')})) >= 0"


def whole_gpu() -> str:
    """A full GPU, not a MIG slice (both carry the NVIDIA driver's attributes)."""
    return f"{attribute(NVIDIA_DRIVER, 'type')} == 'gpu'"


def mig_slice() -> str:
    """A MIG slice, not a whole GPU."""
    return f"{attribute(NVIDIA_DRIVER, 'type')} == 'mig'"


def mig_profile_is(profile: str) -> str:
    return f"{attribute(NVIDIA_DRIVER, 'profile')} == {cel_string(profile)}"


def tpu_driver_generation(accelerator_type: str) -> str:
    """The ``tpuGen`` the TPU DRA driver publishes for a GKE TPU accelerator label value.

    The driver's rule: the second dash-separated field (``v5``, ``v5p``, ``v6e``),
    plus ``lite`` for lite types, plus ``pod`` for v5 lite podslices
    (``tpu-v5-lite-podslice`` -> ``v5litepod``, ``tpu-v6e-slice`` -> ``v6e``).
    """
    parts = accelerator_type.split("-")
    if len(parts) < 2 or parts[0] != "tpu" or not parts[1].startswith("v"):
        raise ValueError(f"{accelerator_type!r} is not a GKE TPU accelerator type such as tpu-v6e-slice")
    generation = parts[1]
    if "lite" in accelerator_type:
        generation += "lite"
    if generation.startswith("v5") and "podslice" in accelerator_type:
        generation += "pod"
    return generation


def tpu_generation_is(accelerator_type: str) -> str:
    return f"{attribute(TPU_DRIVER, 'tpuGen')} == {cel_string(tpu_driver_generation(accelerator_type))}"


def accelerator_selector(accelerator_type: str) -> str:
    """The selector that picks exactly this catalog accelerator and no other.

    GPUs are matched on the catalog's ``productName``; TPUs on the driver's
    ``tpuGen``. The driver check comes first, so the expression is false
    (never a "no such key" error) for any other driver's device. Raises
    ValueError for a type the catalog does not know.
    """
    model = catalog.accelerator(accelerator_type)
    if model is None:
        raise ValueError(f"unknown accelerator type {accelerator_type!r}")
    if isinstance(model, catalog.GpuModel):
        return f"{driver_is(NVIDIA_DRIVER)} && {product_name_is(model.product_name)}"
    return f"{driver_is(TPU_DRIVER)} && {tpu_generation_is(model.type)}"


def mig_slice_selector(accelerator_type: str, profile: str) -> str:
    """One MIG profile carved out of this catalog GPU.

    MIG devices carry ``type: mig``, ``profile`` and their parent's
    ``productName``; a whole GPU has no ``profile``, so ``type`` is checked first.
    """
    model = catalog.GPUS.get(accelerator_type)
    if model is None:
        raise ValueError(f"{accelerator_type!r} is not a catalog GPU")
    if profile not in model.mig_profiles:
        raise ValueError(f"{profile!r} is not a MIG profile of {accelerator_type}")
    return " && ".join((driver_is(NVIDIA_DRIVER), f"{attribute(NVIDIA_DRIVER, 'type')} == 'mig'",
                        mig_profile_is(profile), product_name_is(model.product_name)))


def device_class_expression(
    driver: str,
    *,
    min_memory_gi: int | None = None,
    product_names: list[str] | None = None,
    architectures: list[str] | None = None,
    expressions: list[str] | None = None,
    devices: str = "gpu",
) -> str:
    """The one CEL expression of a DeviceClass: every clause must hold.

    The driver check comes first: CEL's ``&&`` then never looks up another
    driver's attributes (a missing attribute is an error that aborts
    allocation). An NVIDIA class admits only whole GPUs (``devices="gpu"``,
    the default), so that a ``3g.40gb`` MIG slice never satisfies a "40Gi or
    more" class meant for GPUs, or only MIG slices (``devices="mig"``), whose
    ``memory`` is the slice's (NVML's, below the profile name's figure). User
    ``expressions`` are parenthesised and ANDed last.
    """
    clauses = [driver_is(driver)]
    if driver == NVIDIA_DRIVER:
        clauses.append(mig_slice() if devices == "mig" else whole_gpu())
    if min_memory_gi is not None:
        clauses.append(memory_at_least(min_memory_gi, driver))
    if product_names:
        clauses.append(one_of(driver, "productName", product_names))
    if architectures:
        clauses.append(one_of(driver, "architecture", architectures))
    clauses.extend(f"({e})" for e in expressions or [])
    return " && ".join(clauses)
