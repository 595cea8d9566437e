"""Which machine carries which accelerator, per cloud, from the catalog (``components/catalog.py``).

``python -m tools.machine_table`` rewrites the table between the markers in ``docs/machines.md``;
tests/test_your_own_stack.py fails when the file and the catalog differ.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gpu_fungibility import catalog

DOC = Path(__file__).resolve().parent.parent / "docs" / "machines.md"
START, END = "<!-- machine-table:start -->\n", "<!-- machine-table:end -->"
SHAPES = {"gke": catalog.GKE_MACHINES, "eks": catalog.EKS_INSTANCES, "aks": catalog.AKS_VM_SIZES}
ATTACHABLE = {"gke": catalog.ATTACHABLE_GPUS}
CLOUDS = (("gke", "GKE `machineType`"), ("eks", "EKS `instanceTypes`"), ("aks", "AKS `vmSize`"))


def _cell(cloud: str, accelerator: str) -> str:
    shapes = SHAPES[cloud]
    by_count: dict[int, list[str]] = {}
    for shape in shapes.values():
        if shape.accelerator == accelerator:
            by_count.setdefault(shape.count, []).append(f"`{shape.name}`")
    for prefix, (gpu, counts) in ATTACHABLE.get(cloud, {}).items():
        if gpu == accelerator:
            for count in counts:
                by_count.setdefault(count, []).append(f"`{prefix}*` (attached)")
    return "<br>".join(f"{count}: {', '.join(names)}" for count, names in sorted(by_count.items())) or "-"


def render() -> str:
    header = "| accelerator `type` | memory | " + " | ".join(title for _, title in CLOUDS) + " |"
    rows = [header, "|---|---|" + "---|" * len(CLOUDS)]
    for type_ in catalog.known_accelerator_types():
        model = catalog.accelerator(type_)
        memory = (f"{model.memory_gib} GB" if isinstance(model, catalog.GpuModel)
                  else f"{model.hbm_gib_per_chip} GiB HBM per chip ({model.generation})")
        rows.append(f"| `{type_}` | {memory} | " + " | ".join(_cell(c, type_) for c, _ in CLOUDS) + " |")
    return "\n".join(rows) + "\n"


def embedded(text: str) -> str:
    return text[text.index(START) + len(START):text.index(END)]


def main() -> int:
    text = DOC.read_text()
    before, after = text[:text.index(START) + len(START)], text[text.index(END):]
    DOC.write_text(before + render() + after)
    return 0


if __name__ == "__main__":
    sys.exit(main())
