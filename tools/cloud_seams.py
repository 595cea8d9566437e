"""Where shared code still knows the clouds by name.

A module is *per-cloud* when it lives in a folder named after a cloud (``components/clouds/gke/``) or when
its own name starts with a cloud's name (``policies/rules/gke_compute_class.py``, ``stacks/eks.py``); everything else is shared.
Shared code should ask the cloud registry (``gpu_fungibility.registry``) and never name a cloud. This scan
counts the two ways it still does:

- **branch sites**: a comparison with a cloud's name (``cloud == "gke"``, ``x in ("eks", "aks")``), a
  dict key or subscript that is a cloud's name (``{"gke": ...}``, ``table["aks"]``, ``.get("eks")``), and a
  function or class defined in a shared module whose name starts with a cloud's name (``def gke_...``);
- **files naming every cloud**: shared modules whose code (not docstrings or comments) names all of the
  clouds, each one a parallel structure a new cloud must extend.

``python -m tools.cloud_seams`` prints both; ``tests/test_cloud_seams.py`` holds them to a ceiling.
"""

import ast
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from gpu_fungibility.clouds import SHIPPED_CLOUDS

ROOT = Path(__file__).resolve().parents[1]
#: The clouds the scan looks for: the names the shipped clouds register under.
CLOUD_NAMES = SHIPPED_CLOUDS
#: Folders that are not the project's shared code: tests, generated or vendored trees, build outputs.
SKIPPED_PARTS = frozenset({"tests", "build", "bench", ".venv", "node_modules", "__pycache__", ".engine-cache",
                           "egg-info", "examples", "input_files", "output_files", ".git"})


@dataclass(frozen=True)
class Site:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def _cloud_of_word(word: str) -> str | None:
    low = word.lower()
    for name in CLOUD_NAMES:
        if low == name or low.startswith(name + "_") or low.startswith(name + "-"):
            return name
    return None


def is_per_cloud(relative: Path) -> bool:
    """Whether a module belongs to one cloud: a cloud-named folder on its path, or a cloud-named file."""
    for part in relative.parts[:-1]:
        if _cloud_of_word(part):
            return True
    return _cloud_of_word(relative.stem) is not None


def shared_modules(root: Path = ROOT) -> Iterator[Path]:
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if any(part in SKIPPED_PARTS or part.endswith(".egg-info") or part.startswith(".")
               for part in relative.parts[:-1]):
            continue
        if not is_per_cloud(relative):
            yield path


def _is_cloud_string(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.lower() in CLOUD_NAMES:
        return node.value.lower()
    return None


def _docstring_nodes(tree: ast.AST) -> set[int]:
    """Strings standing alone as statements: docstrings, and the attribute docstrings of fields (a TypedDict's,
    a class's), which Pulumi's analyzer and Sphinx read as documentation."""
    return {id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}


def branch_sites(path: Path, root: Path = ROOT) -> list[Site]:
    tree = ast.parse(path.read_text(), filename=str(path))
    rel = str(path.relative_to(root))
    sites: list[Site] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for operand in operands:
                elements = operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand]
                names = [n for n in map(_is_cloud_string, elements) if n]
                if names:
                    sites.append(Site(rel, node.lineno, f"compares with {', '.join(names)}"))
                    break
        elif isinstance(node, ast.Dict):
            names = [n for n in map(_is_cloud_string, [k for k in node.keys if k is not None]) if n]
            if names:
                sites.append(Site(rel, node.lineno, f"table keyed by {', '.join(names)}"))
        elif isinstance(node, ast.Subscript):
            name = _is_cloud_string(node.slice)
            if name:
                sites.append(Site(rel, node.lineno, f"looks up {name}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("get", "pop", "setdefault") and node.args:
            name = _is_cloud_string(node.args[0])
            if name:
                sites.append(Site(rel, node.lineno, f".{node.func.attr}({name!r})"))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = _cloud_of_word(node.name.lstrip("_"))
            if name and node.name.lstrip("_").lower() != name:
                sites.append(Site(rel, node.lineno, f"defines {node.name}"))
    return sorted(set(sites), key=lambda s: (s.path, s.line, s.what))


def clouds_named(path: Path) -> set[str]:
    """The clouds a module's code names: string constants and identifiers, not docstrings or comments."""
    tree = ast.parse(path.read_text(), filename=str(path))
    docstrings = _docstring_nodes(tree)
    named: set[str] = set()
    for node in ast.walk(tree):
        words: Iterable[str] = ()
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            words = [node.value]
        elif isinstance(node, ast.Name):
            words = [node.id]
        elif isinstance(node, ast.Attribute):
            words = [node.attr]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            words = [node.name]
        elif isinstance(node, ast.alias):
            words = [node.name.rsplit(".", 1)[-1], node.asname or ""]
        for word in words:
            for token in _tokens(word):
                if token in CLOUD_NAMES:
                    named.add(token)
    return named


def _tokens(word: str) -> Iterator[str]:
    current = []
    for ch in word:
        if ch.isalnum():
            current.append(ch.lower())
        else:
            if current:
                yield "".join(current)
            current = []
    if current:
        yield "".join(current)


def scan(root: Path = ROOT) -> tuple[list[Site], list[str]]:
    sites: list[Site] = []
    every: list[str] = []
    for path in shared_modules(root):
        sites.extend(branch_sites(path, root))
        if clouds_named(path) >= set(CLOUD_NAMES):
            every.append(str(path.relative_to(root)))
    return sites, every


def main(argv: list[str]) -> int:
    sites, every = scan()
    for site in sites:
        print(site)
    print(f"\n{len(sites)} branch sites in {len({s.path for s in sites})} shared files")
    for path in every:
        print(f"names every cloud: {path}")
    print(f"{len(every)} shared files name every cloud")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
