"""Which machine carries which accelerator, per cloud, from each shipped cloud's machines
(``components/clouds/<cloud>/machines.py``) and the accelerator catalog (``components/catalog.py``).

``python -m tools.machine_table`` rewrites the table between the markers in ``docs/machines.md``;
tests/test_your_own_stack.py fails when the file and the catalog differ. The columns are the clouds the
project ships (``clouds.SHIPPED_CLOUDS``), in that order: the doc describes what ships, not what a test
registered.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gpu_fungibility import catalog, clouds

DOC = Path(__file__).resolve().parent.parent / "docs" / "machines.md"
START, END = "<!-- machine-table:start -->\n", "<!-- machine-table:end -->"


def _camel(snake: str) -> str:
    first, *rest = snake.split("_")
    return first + "".join(word.title() for word in rest)


def _title(cloud: clouds.CloudProfile) -> str:
    """The column's heading: the cloud and its pools' machine key in the stack config (``GKE `machineType```)."""
    return f"{cloud.title} `{_camel(cloud.pool_machine_argument)}`"


def _cell(cloud: clouds.CloudProfile, accelerator: str) -> str:
    by_count: dict[int, list[str]] = {}
    for shape in cloud.machines.values():
        if shape.accelerator == accelerator:
            by_count.setdefault(shape.count, []).append(f"`{shape.name}`")
    for prefix, (gpu, counts) in cloud.attachable_gpus.items():
        if gpu == accelerator:
            for count in counts:
                by_count.setdefault(count, []).append(f"`{prefix}*` (attached)")
    return "<br>".join(f"{count}: {', '.join(names)}" for count, names in sorted(by_count.items())) or "-"


def render() -> str:
    shipped = [clouds.profile(name) for name in clouds.SHIPPED_CLOUDS]
    header = "| accelerator `type` | memory | " + " | ".join(map(_title, shipped)) + " |"
    rows = [header, "|---|---|" + "---|" * len(shipped)]
    for type_ in catalog.known_accelerator_types():
        model = catalog.accelerator(type_)
        memory = (f"{model.memory_gib} GB" if isinstance(model, catalog.GpuModel)
                  else f"{model.hbm_gib_per_chip} GiB HBM per chip ({model.generation})")
        rows.append(f"| `{type_}` | {memory} | " + " | ".join(_cell(c, type_) for c in shipped) + " |")
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
