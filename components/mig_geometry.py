"""How MIG slices really fit on a GPU: each profile's compute and memory slices and where it may start.

Source: NVIDIA Multi-Instance GPU User Guide, "Supported MIG Profiles"
(docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html), the tables for
A100-SXM4-40GB, A100-SXM4-80GB and A100-PCIE-80GB, H100-SXM5-80GB, H100 NVL (94GB) and H200-SXM5-141GB:
the profiles each GPU offers, the
fraction of memory and of SMs each takes, and the number of instances of each that fit. The
placements are the guide's "Placements" column (what ``nvidia-smi mig -lgipp`` prints,
``{start,...}:size`` in memory slices). The counts agree with NVIDIA/mig-parted's builder tests
(``pkg/mig/builder``, the per-GPU ``MaxCount`` of every profile).

Every one of these GPUs has 7 compute slices and 8 memory slices, and one geometry:

=========================  =======  ======  ===================  ==============
profile (A100 40GB/80GB,   compute  memory  placements (start)   most per GPU
H100 80GB, H200)           slices   slices
=========================  =======  ======  ===================  ==============
1g (1g.5gb/10gb/10gb/18gb)  1        1       0 1 2 3 4 5 6        7
1g, double memory           1        2       0 2 4 6              4
  (1g.10gb/20gb/20gb/35gb)
2g                          2        2       0 2 4                3
3g                          3        4       0 4                  2
4g                          4        4       0                    1
7g                          7        8       0                    1
=========================  =======  ======  ===================  ==============

So eight ``7g.80gb`` never fit one A100 80GB (one does), nor two ``4g.40gb``, nor ``4g`` next to two
``2g`` (4 + 2 memory slices start at 0 and 4 only). A layout fits when every slice gets a placement
whose memory slices no other slice uses, and the compute slices add up to 7 or fewer.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

COMPUTE_SLICES = 7
MEMORY_SLICES = 8


@dataclass(frozen=True)
class MigProfile:
    """One GPU instance profile: its name on one GPU model and its place in the geometry."""

    name: str
    compute_slices: int
    memory_slices: int
    placements: tuple[int, ...]  # the memory slice each instance may start at

    @property
    def most_per_gpu(self) -> int:
        return len(self.placements)


#: The shape of each profile tier, in the order of the table above.
_TIERS = ((1, 1, (0, 1, 2, 3, 4, 5, 6)), (1, 2, (0, 2, 4, 6)), (2, 2, (0, 2, 4)), (3, 4, (0, 4)),
          (4, 4, (0,)), (7, 8, (0,)))

#: Each GPU's profile names, tier by tier (the guide's tables; GPU names as the NVIDIA driver's
#: productName, catalog types as components/catalog.py names them).
_NAMES = {
    "nvidia-tesla-a100": ("1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"),
    "nvidia-a100-80gb": ("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"),
    "nvidia-a100-80gb-pcie": ("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"),
    "nvidia-h100-80gb": ("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"),
    "nvidia-h100-nvl": ("1g.12gb", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb"),
    "nvidia-h200-141gb": ("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"),
}

GEOMETRY: dict[str, dict[str, MigProfile]] = {
    gpu: {name: MigProfile(name, c, m, p) for name, (c, m, p) in zip(names, _TIERS, strict=True)}
    for gpu, names in _NAMES.items()
}


def profiles_of(accelerator_type: str) -> dict[str, MigProfile]:
    """The MIG profiles of a catalog GPU (empty: the GPU has no MIG)."""
    return GEOMETRY.get(accelerator_type, {})


@lru_cache(maxsize=4096)
def _fits(accelerator_type: str, layout: tuple[str, ...]) -> bool:
    profiles = profiles_of(accelerator_type)
    pieces = sorted((profiles[name] for name in layout), key=lambda p: (-p.memory_slices, -p.compute_slices))
    if sum(p.compute_slices for p in pieces) > COMPUTE_SLICES:
        return False
    if sum(p.memory_slices for p in pieces) > MEMORY_SLICES:
        return False

    def place(index: int, used: int) -> bool:
        if index == len(pieces):
            return True
        piece = pieces[index]
        for start in piece.placements:
            mask = ((1 << piece.memory_slices) - 1) << start
            if start + piece.memory_slices <= MEMORY_SLICES and not used & mask and place(index + 1, used | mask):
                return True
        return False

    return place(0, 0)


def layout_problem(accelerator_type: str, layout: Sequence[str]) -> str | None:
    """Why these slices cannot all be cut from one GPU of this type, or None when they can."""
    profiles = profiles_of(accelerator_type)
    if not profiles:
        return f"{accelerator_type} has no MIG profiles"
    unknown = sorted({name for name in layout if name not in profiles})
    if unknown:
        return (f"{', '.join(unknown)} {'is not a MIG profile' if len(unknown) == 1 else 'are not MIG profiles'} "
                f"of {accelerator_type}; accepted: {', '.join(profiles)}")
    if _fits(accelerator_type, tuple(sorted(layout))):
        return None
    compute = sum(profiles[name].compute_slices for name in layout)
    memory = sum(profiles[name].memory_slices for name in layout)
    counts = {name: list(layout).count(name) for name in dict.fromkeys(layout)}
    too_many = [f"one GPU holds at most {profiles[name].most_per_gpu} x {name}" for name, n in counts.items()
                if n > profiles[name].most_per_gpu]
    why = (f": {', '.join(too_many)}" if too_many else
           f": they take {compute} of {COMPUTE_SLICES} compute and {memory} of {MEMORY_SLICES} memory slices, "
           "and no placement in NVIDIA's MIG profile table holds them together")
    return f"{' + '.join(f'{n} x {name}' for name, n in counts.items())} do not fit one {accelerator_type}{why}"


def copies_per_gpu(accelerator_type: str, layout: Sequence[str]) -> int:
    """How many copies of this set of slices one GPU holds: 0 when not even one fits."""
    if not layout or not profiles_of(accelerator_type) or any(n not in profiles_of(accelerator_type) for n in layout):
        return 0
    copies = 0
    while copies < COMPUTE_SLICES and _fits(accelerator_type, tuple(sorted(list(layout) * (copies + 1)))):
        copies += 1
    return copies
