"""Record the AKS VM sizes the catalog uses, from their public sources, into tests/fixtures/aks_vm_sizes.json.

Three sources, each read at a commit and named with it in the fixture:

- **Azure's size pages** (MicrosoftDocs/azure-compute-docs, ``articles/virtual-machines/sizes/gpu-accelerated/
  <series>.md`` and the specs include each page names under "Host specifications"): per size the vCPUs, the
  memory (GiB), the GPU quantity as the page gives it (``1/6`` for a slice of one GPU), the GPU memory; per
  series the GPU model. Read from a bare git directory (``--docs-git``, at ``--docs-commit``, default the newest)
  or, where no clone is at hand, from copies laid out ``<dir>/<commit>/<path>`` (``--docs-copies``); copies carry
  their commit but not its date, which the fixture then records as null.
- **Azure's Resource SKUs** as cluster-autoscaler's Azure provider generates them from ``az vm list-skus``
  (kubernetes/autoscaler ``cluster-autoscaler/cloudprovider/azure/azure_instance_types.go``: ``VCPU``,
  ``MemoryMb`` = whole ``MemoryGB`` x 1024, ``GPU``): the same sizes and the general-purpose sizes the project
  names outside the catalog (the default system pool, the sizes of published node measurements).
- **AgentBaker's GRID driver list** (Azure/AgentBaker ``aks-node-controller/pkg/gpu/skus.go``,
  ``ConvergedGPUDriverSizes``): the sizes AKS drives with NVIDIA's GRID (vGPU) driver.

Usage (stdlib only)::

    python -m tools.record_aks_sizes --docs-git DIR | --docs-copies DIR \\
        --autoscaler-git DIR --agentbaker-git DIR [--docs-commit REF] [--autoscaler-commit REF] \\
        [--agentbaker-commit REF] [--out tests/fixtures/aks_vm_sizes.json] [--today YYYY-MM-DD]
"""

import argparse
import datetime
import json
import posixpath
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

TOOL = "tools/record_aks_sizes.py"
OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "aks_vm_sizes.json"

DOCS_REPOSITORY = "MicrosoftDocs/azure-compute-docs"
PAGE_DIR = "articles/virtual-machines/sizes/gpu-accelerated"
#: The series pages of the sizes in gpu_fungibility.clouds.aks.machines (MACHINES).
PAGES = ("nca100v4-series.md", "ncadsh100v5-series.md", "ndh100v5-series.md", "nvadsa10v5-series.md",
         "ncast4v3-series.md")

SKU_REPOSITORY = "kubernetes/autoscaler"
SKU_PATH = "cluster-autoscaler/cloudprovider/azure/azure_instance_types.go"
#: General-purpose sizes the project names outside the catalog: the default system pool
#: (components/clouds/aks/cluster.py) and the sizes of the published AKS node measurements
#: (tests/fixtures/azure_general_vm_sizes.csv).
OTHER_SIZES = ("Standard_D4ds_v5", "Standard_DS1_v2", "Standard_DS2_v2")

GRID_REPOSITORY = "Azure/AgentBaker"
GRID_PATH = "aks-node-controller/pkg/gpu/skus.go"
GRID_LIST = "ConvergedGPUDriverSizes"

COLUMNS = ["size", "series", "vcpus", "memory_gib", "gpus", "gpu_memory_gib"]
SKU_COLUMNS = ["size", "sku_family", "vcpus", "memory_mib", "gpus"]


class RecordError(Exception):
    """A source lacks what the recorder reads, or says it in a form it does not know."""


# --- sources -------------------------------------------------------------------------------------------------


class GitTree:
    """Files of a bare git directory at one commit, each with the commit that last changed it."""

    def __init__(self, git_dir: str, ref: str = "HEAD"):
        self.git_dir = git_dir
        self.commit = self._git("rev-parse", "--verify", f"{ref}^{{commit}}").strip()

    def _git(self, *args: str) -> str:
        done = subprocess.run(["git", f"--git-dir={self.git_dir}", *args], capture_output=True, text=True,
                              check=False)
        if done.returncode != 0:
            raise RecordError(f"git {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def read(self, path: str) -> str:
        return self._git("show", f"{self.commit}:{path}")

    def provenance(self, path: str) -> dict:
        last = self._git("log", "-1", "--format=%H %cI", self.commit, "--", path).split()
        if len(last) != 2:
            raise RecordError(f"{path}: no commit at {self.commit} changed it")
        return {"path": path, "commit": last[0], "committed": last[1], "read_at": self.commit}


class CopiedTree:
    """Copies of repository files laid out ``<root>/<commit>/<path>``: one copy of each path."""

    def __init__(self, root: str):
        self.root = Path(root)
        self.where: dict[str, str] = {}
        for commit_dir in sorted(p for p in self.root.iterdir() if p.is_dir()):
            if not re.fullmatch(r"[0-9a-f]{40}", commit_dir.name):
                raise RecordError(f"{commit_dir}: not named by a commit")
            for file in commit_dir.rglob("*"):
                if file.is_file():
                    path = file.relative_to(commit_dir).as_posix()
                    if path in self.where:
                        raise RecordError(f"{path}: copies at {self.where[path]} and {commit_dir.name}")
                    self.where[path] = commit_dir.name

    def read(self, path: str) -> str:
        if path not in self.where:
            raise RecordError(f"{path}: no copy under {self.root}")
        return (self.root / self.where[path] / path).read_text()

    def provenance(self, path: str) -> dict:
        return {"path": path, "commit": self.where[path], "committed": None, "read_at": None}


# --- parsing -------------------------------------------------------------------------------------------------


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Every pipe table of a Markdown text: (header cells, body rows), the separator row dropped."""
    found, block = [], []
    for line in [*text.splitlines(), ""]:
        if line.lstrip().startswith("|"):
            block.append(_cells(line))
            continue
        if len(block) >= 2 and all(re.fullmatch(r":?-{2,}:?", cell) for cell in block[1]):
            found.append((block[0], block[2:]))
        block = []
    return found


def quantity(text: str) -> Fraction:
    """A table figure: ``1,440`` or ``1/6``."""
    cleaned = text.replace(",", "").strip()
    if not re.fullmatch(r"\d+(\.\d+)?(/\d+)?", cleaned):
        raise RecordError(f"not a quantity: {text!r}")
    return Fraction(cleaned)


def _json_number(value: Fraction, column: str) -> int | float | str:
    """A figure for the fixture: whole numbers as ints, a GPU slice as the page writes it (``1/6``)."""
    if value.denominator == 1:
        return int(value)
    return f"{value.numerator}/{value.denominator}" if column == "gpus" else float(value)


#: Which size-table column holds which figure, by the start of its header.
SIZE_COLUMNS = {"vCPUs": "vcpus", "Memory": "memory_gib", "Accelerators (Qty": "gpus",
                "Accelerator-Memory": "gpu_memory_gib"}


def size_figures(text: str) -> dict[str, dict[str, Fraction]]:
    """Per size, the figures of a size page's tables (Basics, Accelerators), by COLUMNS name."""
    sizes: dict[str, dict[str, Fraction]] = {}
    for header, rows in tables(text):
        if not header or header[0] != "Size Name":
            continue
        wanted = {i: name for i, cell in enumerate(header) for start, name in SIZE_COLUMNS.items()
                  if cell.startswith(start)}
        if wanted and any(not cell.endswith(("(GB)", "(GiB)")) for i, cell in enumerate(header)
                          if wanted.get(i) in ("memory_gib", "gpu_memory_gib")):
            raise RecordError(f"memory in a unit the recorder does not know: {header}")
        for row in rows:
            for i, name in wanted.items():
                figures = sizes.setdefault(row[0], {})
                if name in figures and figures[name] != quantity(row[i]):
                    raise RecordError(f"{row[0]}: two {name} figures")
                figures[name] = quantity(row[i])
    return sizes


INCLUDE = re.compile(r"\[!INCLUDE \[[^\]]*\]\(([^)\s]+-specs\.md)\)")


def specs_include(page_path: str, text: str) -> str:
    """The repository path of the specs include a size page names."""
    found = INCLUDE.findall(text)
    if len(found) != 1:
        raise RecordError(f"{page_path}: {len(found)} specs includes")
    return posixpath.normpath(posixpath.join(posixpath.dirname(page_path), found[0]))


def gpu_model(text: str) -> str:
    """The accelerator a specs include names (its "Accelerators" row, last column)."""
    for _header, rows in tables(text):
        for row in rows:
            if row[0] == "Accelerators" and len(row) >= 3 and row[-1]:
                return row[-1]
    raise RecordError("no Accelerators row")


SKU_ENTRY = re.compile(r'^\t"(?P<name>[^"]+)": \{\n(?P<body>.*?)^\t\},', re.M | re.S)
SKU_FIELD = re.compile(r"^\t\t(?P<key>\w+):\s+(?P<value>\"[^\"]*\"|-?\d+),$", re.M)


def resource_skus(text: str) -> dict[str, dict[str, int | str]]:
    """cluster-autoscaler's generated Azure SKU table: per size, its fields (SkuFamily, VCPU, MemoryMb, GPU, ...)."""
    skus = {}
    for entry in SKU_ENTRY.finditer(text):
        fields = {m["key"]: (m["value"].strip('"') if m["value"].startswith('"') else int(m["value"]))
                  for m in SKU_FIELD.finditer(entry["body"])}
        if fields.get("InstanceType") != entry["name"]:
            raise RecordError(f"{entry['name']}: entry names {fields.get('InstanceType')!r}")
        skus[entry["name"]] = fields
    return skus


def go_bool_map(text: str, name: str) -> list[str]:
    """The keys mapped to true in a Go ``var <name> = map[string]bool{...}``."""
    found = re.search(rf"^var {re.escape(name)} = map\[string\]bool\{{\n(?P<body>.*?)^\}}", text, re.M | re.S)
    if found is None:
        raise RecordError(f"no map {name}")
    return sorted(re.findall(r'^\s*"([^"]+)":\s*true,', found["body"], re.M))


# --- recording -----------------------------------------------------------------------------------------------


def record_pages(docs) -> tuple[dict, dict, list[list]]:
    """(provenance per page, GPU model per page, size rows) from the size pages."""
    pages, models, rows = {}, {}, []
    for page in PAGES:
        path = f"{PAGE_DIR}/{page}"
        text = docs.read(path)
        include = specs_include(path, text)
        pages[page] = {**docs.provenance(path), "specs_include": docs.provenance(include)}
        models[page] = gpu_model(docs.read(include))
        for size, figures in size_figures(text).items():
            missing = [c for c in COLUMNS[2:] if c not in figures]
            if missing:
                raise RecordError(f"{page}: {size} lacks {missing}")
            rows.append([size, page, *(_json_number(figures[c], c) for c in COLUMNS[2:])])
    return pages, models, rows


def record(docs, skus_tree: GitTree, grid_tree: GitTree, today: str, docs_read_from: str) -> dict:
    pages, models, rows = record_pages(docs)
    sku_table = resource_skus(skus_tree.read(SKU_PATH))
    sku_rows = []
    for size in [row[0] for row in rows] + list(OTHER_SIZES):
        if size not in sku_table:
            raise RecordError(f"{size} is not in {SKU_PATH}")
        entry = sku_table[size]
        sku_rows.append([size, entry["SkuFamily"], entry["VCPU"], entry["MemoryMb"], entry["GPU"]])
    return {
        "recorded_by": TOOL,
        "recorded_on": today,
        "source": ("Azure's VM size pages (vCPUs, memory GiB, GPU quantity and memory per size; GPU model per "
                   "series), cross-checked with Azure's Resource SKUs as cluster-autoscaler generates them "
                   "(vCPUs, MemoryMb, GPUs) and AKS's GRID driver sizes from AgentBaker."),
        "size_pages": {"repository": DOCS_REPOSITORY, "read_from": docs_read_from, "pages": pages},
        "commits": {page: meta["commit"] for page, meta in pages.items()},
        "gpu_model": models,
        "columns": COLUMNS,
        "rows": rows,
        "resource_skus": {"repository": SKU_REPOSITORY, **skus_tree.provenance(SKU_PATH),
                          "columns": SKU_COLUMNS, "rows": sku_rows},
        "grid_driver_sizes": {"repository": GRID_REPOSITORY, **grid_tree.provenance(GRID_PATH), "list": GRID_LIST,
                              "sizes": go_bool_map(grid_tree.read(GRID_PATH), GRID_LIST)},
    }


def dump(data: dict) -> str:
    """JSON with one table row a line."""
    text = json.dumps(data, indent=1)
    return re.sub(r"\[\n\s+([^\[\]{}]*?)\n\s+\]", lambda m: "[" + re.sub(r",\n\s+", ", ", m[1]) + "]", text) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    docs = parser.add_mutually_exclusive_group(required=True)
    docs.add_argument("--docs-git", help=f"bare git directory of {DOCS_REPOSITORY}")
    docs.add_argument("--docs-copies", help="copies of its pages, laid out <dir>/<commit>/<path>")
    parser.add_argument("--docs-commit", default="HEAD")
    parser.add_argument("--autoscaler-git", required=True, help=f"bare git directory of {SKU_REPOSITORY}")
    parser.add_argument("--autoscaler-commit", default="HEAD")
    parser.add_argument("--agentbaker-git", required=True, help=f"bare git directory of {GRID_REPOSITORY}")
    parser.add_argument("--agentbaker-commit", default="HEAD")
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--today", default=datetime.date.today().isoformat())
    args = parser.parse_args(argv)
    try:
        if args.docs_git:
            source, read_from = GitTree(args.docs_git, args.docs_commit), "git"
        else:
            source, read_from = CopiedTree(args.docs_copies), "copies of the files at their commits"
        data = record(source, GitTree(args.autoscaler_git, args.autoscaler_commit),
                      GitTree(args.agentbaker_git, args.agentbaker_commit), args.today, read_from)
    except RecordError as error:
        print(f"record_aks_sizes: {error}", file=sys.stderr)
        return 1
    Path(args.out).write_text(dump(data))
    print(f"{args.out}: {len(data['rows'])} sizes from {len(data['size_pages']['pages'])} pages, "
          f"{len(data['resource_skus']['rows'])} resource SKUs, {len(data['grid_driver_sizes']['sizes'])} GRID sizes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
