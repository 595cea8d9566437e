"""Each MIG GPU instance profile as NVML reports it, and how a set of them is placed on one GPU.

A profile here is what ``nvmlDeviceGetGpuInstanceProfileInfoV`` returns (and the NVIDIA DRA
driver turns into a device): its GPU instance profile ``id``, ``memory_mib`` (``memorySizeMB``,
which nvml.h documents in MiB), compute slices (``sliceCount``), the engine counts, how many
instances one GPU holds (``instanceCount``), and the memory slices it spans and where it may start
(``nvmlDeviceGetGpuInstancePossiblePlacements_v2``: ``{start,...}:size`` as
``nvidia-smi mig -lgipp`` prints it). Every one of these GPUs has 7 compute and 8 memory slices.

Where each figure comes from:

- **H100 80GB HBM3 and H200**: read off real GPUs with NVML (driver 580.159.04), the project's
  ``reality/nvml`` files; ``tests/test_mig_geometry.py`` holds every figure against them.
- **A100 40GB / 80GB (SXM and PCIe), H100 NVL**: NVIDIA's MIG user guide, "Supported MIG Profiles"
  (docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html): fraction of memory
  and of SMs, NVDEC/JPEG/OFA, copy engines and instances per profile (the guide gives the A100
  40GB table and says the 80GB parts only rename the profiles; its H100 table covers the 94GB part
  the same way). The guide publishes no MiB figure, so memory comes from ``nvidia-smi mig -lgip``
  and gpu-feature-discovery output of real GPUs, taking the *lower* figure where sources differ
  (older drivers report slightly more), so a memory selector the library accepts also matches on a
  real node:

  * A100 40GB: NVIDIA developer forum thread "Why MIG instances can only sum up to 98 SMs"
    (forums.developer.nvidia.com/t/why-mig-instances-can-only-sum-up-to-98-sms-instead-of-the-108-sms-
    available/170488, ``-lgip``: 4.75 / 9.75 / 19.62 / 19.62 / 39.50 GiB)
    against NVIDIA/go-nvml ``pkg/nvml/mock/gpus/a100.go`` (4864 / 9856 / 19968 / 19968 / 40192 MiB):
    the lower, the mock's, is modelled.
  * A100 80GB: a published GPU-operator walkthrough on a real A100 80GB PCIe, driver 515.86.01
    (``-lgip`` 9.50 / 19.50 / 39.25 / 39.25 / 79.00 GiB, gpu-feature-discovery ``memory`` labels
    9728 / 19968 / 40192 MiB) against go-nvml's mock
    (7g: 80384 MiB); the SXM part is the same GA100 with the same memory.
  * H100 NVL (94GB): no measured figure is public. The memory is estimated from the NVML total
    with the smallest real-to-nominal ratio measured on a Hopper GPU per memory-slice count
    (H200 for 1 and 2 slices, H100 for 4 and 8), rounded down to 128 MiB: marked ``measured=False``.
  * A profile with one compute and two memory slices (``1g.10gb`` on A100 40GB, ``1g.20gb``, ...)
    has the memory of the ``2g`` profile: true on both measured GPUs.

The "+me" (media extensions) profiles are modelled: one instance per GPU, on any 1-slice placement,
with the GPU's JPEG and OFA engines; NVML lists them and the driver publishes them like any other.

How a layout is placed (``placements``): mig-parted (``pkg/mig/config/config.go``
``SetMigConfig``) and ``nvidia-smi mig -cgi`` both call ``nvmlDeviceCreateGpuInstance`` without a
placement, so NVML picks the start. NVML does not document its choice; on a real H100, seven
``-cgi 19`` calls took starts 6, 4, 5, 0, 1, 2, 3 in that order, which is "the free start that
blocks the fewest other placements, lowest first". :func:`place` follows that rule, largest
instances first, and tries the other orders (as mig-parted iterates permutations) when the first
does not fit. A start a real node picks differently changes only a MIG device's name suffix and its
``memorySlice<i>`` capacities, which nothing in the library selects on.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import permutations

COMPUTE_SLICES = 7
MEMORY_SLICES = 8

#: The suffix NVML and go-nvlib give a profile with media extensions.
MEDIA_EXTENSIONS = "+me"


@dataclass(frozen=True)
class MigProfile:
    """One GPU instance profile of one GPU model, in NVML's terms."""

    name: str  # go-nvlib's profile string: the driver's ``profile`` attribute
    profile_id: int  # the GPU instance profile id (nvidia-smi mig -lgip "ID")
    memory_mib: int  # memorySizeMB (MiB)
    compute_slices: int  # sliceCount
    memory_slices: int  # the placement size
    instance_count: int  # instanceCount: most instances of this profile on one GPU
    multiprocessors: int
    copy_engines: int
    decoders: int
    encoders: int
    jpeg_engines: int
    ofa_engines: int
    placements: tuple[int, ...]  # the memory slice each instance may start at
    measured: bool = True  # False: the memory is an estimate (see the module docstring)

    @property
    def most_per_gpu(self) -> int:
        return self.instance_count

    @property
    def media_extensions(self) -> bool:
        return self.name.endswith(MEDIA_EXTENSIONS)

    def slices_at(self, start: int) -> range:
        """The memory slices an instance starting at ``start`` occupies."""
        return range(start, start + self.memory_slices)


# (name, id, MiB, compute slices, memory slices, instances, SMs, CE, DEC, ENC, JPEG, OFA) per GPU, in
# nvidia-smi -lgip order. Sources: the module docstring.
_Row = tuple[str, int, int, int, int, int, int, int, int, int, int, int]
_TABLES: dict[str, tuple[tuple[_Row, ...], bool]] = {
    "nvidia-tesla-a100": ((
        ("1g.5gb", 19, 4864, 1, 1, 7, 14, 1, 0, 0, 0, 0),
        ("1g.5gb+me", 20, 4864, 1, 1, 1, 14, 1, 1, 0, 1, 1),
        ("1g.10gb", 15, 9856, 1, 2, 4, 14, 1, 1, 0, 0, 0),
        ("2g.10gb", 14, 9856, 2, 2, 3, 28, 2, 1, 0, 0, 0),
        ("3g.20gb", 9, 19968, 3, 4, 2, 42, 3, 2, 0, 0, 0),
        ("4g.20gb", 5, 19968, 4, 4, 1, 56, 4, 2, 0, 0, 0),
        ("7g.40gb", 0, 40192, 7, 8, 1, 98, 7, 5, 0, 1, 1),
    ), True),
    "nvidia-a100-80gb": ((
        ("1g.10gb", 19, 9728, 1, 1, 7, 14, 1, 0, 0, 0, 0),
        ("1g.10gb+me", 20, 9728, 1, 1, 1, 14, 1, 1, 0, 1, 1),
        ("1g.20gb", 15, 19968, 1, 2, 4, 14, 1, 1, 0, 0, 0),
        ("2g.20gb", 14, 19968, 2, 2, 3, 28, 2, 1, 0, 0, 0),
        ("3g.40gb", 9, 40192, 3, 4, 2, 42, 3, 2, 0, 0, 0),
        ("4g.40gb", 5, 40192, 4, 4, 1, 56, 4, 2, 0, 0, 0),
        ("7g.80gb", 0, 80384, 7, 8, 1, 98, 7, 5, 0, 1, 1),
    ), True),
    "nvidia-h100-80gb": ((  # reality/nvml/h100-80gb-hbm3.json
        ("1g.10gb", 19, 9984, 1, 1, 7, 16, 1, 1, 0, 1, 0),
        ("1g.10gb+me", 20, 9984, 1, 1, 1, 16, 1, 1, 0, 1, 1),
        ("1g.20gb", 15, 20096, 1, 2, 4, 26, 1, 1, 0, 1, 0),
        ("2g.20gb", 14, 20096, 2, 2, 3, 32, 2, 2, 0, 2, 0),
        ("3g.40gb", 9, 40448, 3, 4, 2, 60, 3, 3, 0, 3, 0),
        ("4g.40gb", 5, 40448, 4, 4, 1, 64, 4, 4, 0, 4, 0),
        ("7g.80gb", 0, 81152, 7, 8, 1, 132, 8, 7, 0, 7, 1),
    ), True),
    "nvidia-h100-nvl": ((  # engines as the H100 table; memory estimated (module docstring)
        ("1g.12gb", 19, 10880, 1, 1, 7, 16, 1, 1, 0, 1, 0),
        ("1g.12gb+me", 20, 10880, 1, 1, 1, 16, 1, 1, 0, 1, 1),
        ("1g.24gb", 15, 22144, 1, 2, 4, 26, 1, 1, 0, 1, 0),
        ("2g.24gb", 14, 22144, 2, 2, 3, 32, 2, 2, 0, 2, 0),
        ("3g.47gb", 9, 47488, 3, 4, 2, 60, 3, 3, 0, 3, 0),
        ("4g.47gb", 5, 47488, 4, 4, 1, 64, 4, 4, 0, 4, 0),
        ("7g.94gb", 0, 95232, 7, 8, 1, 132, 8, 7, 0, 7, 1),
    ), False),
    "nvidia-h200-141gb": ((  # reality/nvml/h200.json
        ("1g.18gb", 19, 16384, 1, 1, 7, 16, 1, 1, 0, 1, 0),
        ("1g.18gb+me", 20, 16384, 1, 1, 1, 16, 1, 1, 0, 1, 1),
        ("1g.35gb", 15, 33280, 1, 2, 4, 26, 1, 1, 0, 1, 0),
        ("2g.35gb", 14, 33280, 2, 2, 3, 32, 2, 2, 0, 2, 0),
        ("3g.71gb", 9, 71424, 3, 4, 2, 60, 3, 3, 0, 3, 0),
        ("4g.71gb", 5, 71424, 4, 4, 1, 64, 4, 4, 0, 4, 0),
        ("7g.141gb", 0, 143360, 7, 8, 1, 132, 8, 7, 0, 7, 1),
    ), True),
}

#: NVML's possible placements by (compute slices, memory slices): ``nvidia-smi mig -lgipp`` on the
#: measured GPUs, and the guide's placement figures for the others.
PLACEMENTS: dict[tuple[int, int], tuple[int, ...]] = {
    (1, 1): (0, 1, 2, 3, 4, 5, 6), (1, 2): (0, 2, 4, 6), (2, 2): (0, 2, 4), (3, 4): (0, 4), (4, 4): (0,),
    (7, 8): (0,),
}

#: The A100 80GB PCIe is the same GA100 with the same memory as the SXM part (the guide's one A100 80GB table).
_TABLES["nvidia-a100-80gb-pcie"] = _TABLES["nvidia-a100-80gb"]

GEOMETRY: dict[str, dict[str, MigProfile]] = {
    gpu: {row[0]: MigProfile(*row, placements=PLACEMENTS[(row[3], row[4])], measured=measured) for row in rows}
    for gpu, (rows, measured) in _TABLES.items()
}


def profiles_of(accelerator_type: str) -> dict[str, MigProfile]:
    """The MIG profiles of a catalog GPU (empty: the GPU has no MIG)."""
    return GEOMETRY.get(accelerator_type, {})


def profile(accelerator_type: str, name: str) -> MigProfile:
    """One profile; raises KeyError for a GPU or profile the table does not know."""
    return GEOMETRY[accelerator_type][name]


def _blocked(profiles: dict[str, MigProfile], used: int) -> dict[tuple[str, int], int]:
    """Every placement still free, as a bit mask of its memory slices."""
    masks = {}
    for p in profiles.values():
        for start in p.placements:
            mask = ((1 << p.memory_slices) - 1) << start
            if not used & mask:
                masks[(p.name, start)] = mask
    return masks


def _nvml_start(profiles: dict[str, MigProfile], piece: MigProfile, used: int) -> int | None:
    """The start NVML's default placement takes: the free one that blocks the fewest free placements."""
    free = _blocked(profiles, used)
    best: tuple[int, int] | None = None
    for start in piece.placements:
        mask = ((1 << piece.memory_slices) - 1) << start
        if used & mask:
            continue
        cost = sum(1 for other in free.values() if other & mask)
        if best is None or cost < best[0]:
            best = (cost, start)
    return None if best is None else best[1]


def _place_in_order(profiles: dict[str, MigProfile], order: Sequence[str]) -> tuple[int, ...] | None:
    used, starts = 0, []
    for name in order:
        piece = profiles[name]
        start = _nvml_start(profiles, piece, used)
        if start is None:
            return None
        used |= ((1 << piece.memory_slices) - 1) << start
        starts.append(start)
    return tuple(starts)


def _size_order(profiles: dict[str, MigProfile], layout: Sequence[str]) -> list[str]:
    return sorted(layout, key=lambda n: (-profiles[n].memory_slices, -profiles[n].compute_slices, n))


@lru_cache(maxsize=4096)
def _place(accelerator_type: str, layout: tuple[str, ...]) -> tuple[tuple[str, int], ...] | None:
    profiles = profiles_of(accelerator_type)
    if sum(profiles[n].compute_slices for n in layout) > COMPUTE_SLICES:
        return None
    if sum(profiles[n].memory_slices for n in layout) > MEMORY_SLICES:
        return None
    if any(layout.count(n) > profiles[n].instance_count for n in set(layout)):
        return None
    if sum(1 for n in layout if profiles[n].media_extensions) > 1:
        return None  # "a single 1g profile can include media extensions" (the guide)
    first = _size_order(profiles, layout)
    tried = set()
    for order in (first, *permutations(first)):
        if tuple(order) in tried:
            continue
        tried.add(tuple(order))
        starts = _place_in_order(profiles, order)
        if starts is not None:
            return tuple(sorted(zip(order, starts, strict=True), key=lambda p: (p[1], p[0])))
    return None


def place(accelerator_type: str, layout: Sequence[str]) -> list[tuple[MigProfile, int]] | None:
    """Where each slice of the layout lands on one GPU: ``(profile, placement start)`` by start; None: no fit.

    Raises KeyError for a profile the GPU does not have.
    """
    profiles = profiles_of(accelerator_type)
    for name in layout:
        profiles[name]  # noqa: B018 - KeyError for an unknown profile
    placed = _place(accelerator_type, tuple(sorted(layout)))
    return None if placed is None else [(profiles[name], start) for name, start in placed]


def layout_problem(accelerator_type: str, layout: Sequence[str]) -> str | None:
    """Why these slices cannot all be cut from one GPU of this type, or None when they can."""
    profiles = profiles_of(accelerator_type)
    if not profiles:
        return f"{accelerator_type} has no MIG profiles"
    unknown = sorted({name for name in layout if name not in profiles})
    if unknown:
        return (f"{', '.join(unknown)} {'is not a MIG profile' if len(unknown) == 1 else 'are not MIG profiles'} "
                f"of {accelerator_type}; accepted: {', '.join(profiles)}")
    if place(accelerator_type, layout) is not None:
        return None
    compute = sum(profiles[name].compute_slices for name in layout)
    memory = sum(profiles[name].memory_slices for name in layout)
    counts = {name: list(layout).count(name) for name in dict.fromkeys(layout)}
    too_many = [f"one GPU holds at most {profiles[name].most_per_gpu} x {name}" for name, n in counts.items()
                if n > profiles[name].most_per_gpu]
    media = [name for name in layout if profiles[name].media_extensions]
    if not too_many and len(media) > 1:
        too_many = [f"only one instance per GPU has the media extensions ({', '.join(dict.fromkeys(media))})"]
    why = (f": {', '.join(too_many)}" if too_many else
           f": they take {compute} of {COMPUTE_SLICES} compute and {memory} of {MEMORY_SLICES} memory slices, "
           "and no placement in NVIDIA's MIG profile table holds them together")
    return f"{' + '.join(f'{n} x {name}' for name, n in counts.items())} do not fit one {accelerator_type}{why}"


def copies_per_gpu(accelerator_type: str, layout: Sequence[str]) -> int:
    """How many copies of this set of slices one GPU holds: 0 when not even one fits."""
    if not layout or not profiles_of(accelerator_type) or any(n not in profiles_of(accelerator_type) for n in layout):
        return 0
    copies = 0
    while copies < COMPUTE_SLICES and place(accelerator_type, list(layout) * (copies + 1)) is not None:
        copies += 1
    return copies
