"""The dependency direction of docs/architecture.md, held by the import statements themselves.

- A command (a package's ``__main__``) is an entry point: no other module imports it; what two commands share
  lives in a library module they both import.
- The policy pack stands alone: besides itself it imports only the component library (it is installed by
  itself, from its own lock, beside a wheel of the library).
- The component library imports nothing of the project around it.
- The rehearsal reads a plan through the offline plan's public model (``offline_plan.model``), not through
  the policy pack's view.
"""

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("components", "stacks", "policies", "offline_plan", "plan_diff", "policy_gate", "simulator", "verify",
            "preflight", "rehearse", "pulumi_engine", "input_files", "tools")
#: The names the project's packages are imported under (the library is installed as gpu_fungibility).
IMPORT_NAMES = {"gpu_fungibility": "components", **{p: p for p in PACKAGES if p != "components"}}


def modules(package: str) -> Iterator[Path]:
    for path in sorted((ROOT / package).rglob("*.py")):
        if not any(part.endswith(".egg-info") or part == "__pycache__" for part in path.parts):
            yield path


def imports(path: Path) -> Iterator[tuple[int, str]]:
    """Every absolute module name a file imports (``from a.b import c`` also yields ``a.b.c``)."""
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.lineno, node.module
            for alias in node.names:
                yield node.lineno, f"{node.module}.{alias.name}"


def project_package(name: str) -> str | None:
    return IMPORT_NAMES.get(name.split(".")[0])


def test_no_module_imports_a_command():
    found = [f"{path.relative_to(ROOT)}:{line}: {name}"
             for package in PACKAGES for path in modules(package) for line, name in imports(path)
             if name.endswith(".__main__") and project_package(name)]
    assert not found, "move what the commands share into a library module:\n" + "\n".join(found)


def test_the_policy_pack_imports_only_itself_and_the_library():
    allowed = {"policies", "components"}
    found = [f"{path.relative_to(ROOT)}:{line}: {name}" for path in modules("policies")
             for line, name in imports(path) if project_package(name) not in (None, *allowed)]
    assert not found, found


def test_the_library_imports_nothing_of_the_project_around_it():
    found = [f"{path.relative_to(ROOT)}:{line}: {name}" for path in modules("components")
             for line, name in imports(path) if project_package(name) not in (None, "components")]
    assert not found, found


def test_the_rehearsal_reads_plans_through_the_offline_plans_model():
    found = [f"{path.relative_to(ROOT)}:{line}: {name}" for path in modules("rehearse")
             for line, name in imports(path) if project_package(name) == "policies"]
    assert not found, found
