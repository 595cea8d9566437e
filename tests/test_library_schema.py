"""The component library as a Pulumi component package: every public component typed and documented.

The schema is what Pulumi infers from the type annotations when another
language adds the package (``pulumi package add``); it is built here offline.
"""

import ast
import inspect
import json
import re
import sys
from pathlib import Path

import gpu_fungibility
import pytest
from gpu_fungibility.base import LibraryComponent, type_token
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.experimental.util import camel_case

LIBRARY = Path(gpu_fungibility.__file__).resolve().parent
REQUIRED = {"GkeCluster", "GkeGpuNodePool", "GkeTpuNodePool", "EksCluster", "EksGpuNodeGroup", "AksNetwork",
            "AksCluster", "AksGpuNodePool", "AksAutoscalerPriorities", "NvidiaDraDriver",
            "TpuDraDriver", "NvidiaDevicePlugin", "GkeComputeClass", "DraClaims", "VllmWorkload"}
CAMEL = re.compile(r"^[a-z][A-Za-z0-9]*$")


@pytest.fixture(scope="module")
def schema() -> dict:
    return json.loads(ComponentProvider(gpu_fungibility.components(), "gpu-fungibility").schema)


def _described(prop: dict) -> bool:
    return bool(prop.get("description", "").strip())


def _typed(prop: dict) -> bool:
    return "type" in prop or "$ref" in prop


def test_every_public_component_is_in_the_schema_under_its_index_token(schema):
    names = {c.__name__ for c in gpu_fungibility.components()}
    assert REQUIRED <= names
    assert set(schema["resources"]) == {type_token(n) for n in names}
    assert all(r["isComponent"] for r in schema["resources"].values())


@pytest.mark.parametrize("component", gpu_fungibility.components(), ids=lambda c: c.__name__)
def test_inputs_and_outputs_are_typed_and_documented(schema, component):
    resource = schema["resources"][type_token(component.__name__)]
    assert resource.get("description", "").strip(), "the class docstring is the component's description"
    assert resource["inputProperties"], "a component takes arguments"
    assert resource["properties"], "a component gives outputs"
    for kind in ("inputProperties", "properties"):
        for name, prop in resource[kind].items():
            assert CAMEL.match(name), f"{kind}.{name} is not camelCase"
            assert _typed(prop), f"{kind}.{name} has no type"
            assert _described(prop), f"{kind}.{name} has no description (a docstring after the field)"
    assert set(resource["properties"]) == {camel_case(n) for n in component.output_names()}


def test_every_shared_type_is_documented(schema):
    for token, type_ in schema["types"].items():
        assert type_.get("description"), token
        for name, prop in type_["properties"].items():
            assert _typed(prop) and _described(prop), f"{token}.{name}"


@pytest.mark.parametrize("component", gpu_fungibility.components(), ids=lambda c: c.__name__)
def test_every_component_follows_the_template(component):
    assert issubclass(component, LibraryComponent)
    params = list(inspect.signature(component.__init__).parameters.values())
    assert [p.name for p in params] == ["self", "name", "args", "opts"]
    assert params[3].default is None
    assert params[2].annotation is component.args_type()
    assert component.args_type().__name__.endswith("Args")
    if component.LEGACY_TYPE:
        assert component.LEGACY_TYPE != type_token(component.__name__)


def test_a_component_refuses_bad_arguments_naming_each_one():
    from gpu_fungibility import ComponentArgsError, GkeGpuNodePool

    issues = GkeGpuNodePool.check("p", {"cluster": "c", "location": "us-central1", "zones": ["us-central1-a"],
                                        "machine_type": "a2-ultragpu-1g", "accelerator_type": "nvidia-a100-80gb",
                                        "service_account": "sa", "autoscaling": {"min_nodes": 3, "max_nodes": 1},
                                        "spot": "yes"})
    assert ("spot", "must be true or false, got 'yes'") in issues
    issues = GkeGpuNodePool.check("p", {"cluster": "c", "location": "us-central1", "zones": ["us-central1-a"],
                                        "machine_type": "a2-ultragpu-1g", "accelerator_type": "nvidia-l4",
                                        "service_account": "sa", "autoscaling": {"min_nodes": 3, "max_nodes": 1}})
    paths = [p for p, _ in issues]
    assert "accelerator" in paths and "autoscaling.max_nodes" in paths
    assert issubclass(ComponentArgsError, ValueError)


# ---- one dependency direction -------------------------------------------------------------------

PROJECT = LIBRARY.parent
PACKAGES = ("stacks", "simulator", "policies", "offline_plan", "policy_gate", "preflight")


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_the_library_imports_nothing_of_the_stack_program_and_reads_real_annotations():
    for path in LIBRARY.rglob("*.py"):
        if "build" in path.relative_to(LIBRARY).parts:
            continue
        text = path.read_text()
        if "dra_cel" not in path.relative_to(LIBRARY).parts:  # the modules the component analyzer reads
            assert "from __future__ import annotations" not in text, f"{path.name}: the analyzer needs real annotations"
        wrong = _imports(path) & {*PACKAGES, "components"}
        assert not wrong, f"{path.name} imports {wrong}"


def test_no_package_imports_another_in_a_cycle():
    graph = {}
    for package in PACKAGES:
        deps = set()
        for path in (PROJECT / package).rglob("*.py"):
            deps |= _imports(path) & set(PACKAGES)
        graph[package] = deps - {package}

    def reaches(start, goal, seen=()):
        return any(d == goal or (d not in seen and reaches(d, goal, (*seen, d))) for d in graph[start])

    cycles = [p for p in PACKAGES if reaches(p, p)]
    assert not cycles, {p: graph[p] for p in cycles}
    assert "stacks" not in graph["policies"], "the policy pack stands alone"


def _library_module(path: Path) -> str:
    """A library file's dotted name inside the package (``clouds.gke.pools``; a package is its folder)."""
    parts = path.relative_to(LIBRARY).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_time_statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements that run when a module is imported: not those in functions nor under TYPE_CHECKING."""
    found = []
    for node in body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            found += _import_time_statements(node.orelse)
        elif isinstance(node, ast.If | ast.Try):
            inner = [*node.body, *node.orelse, *getattr(node, "finalbody", []),
                     *(s for h in getattr(node, "handlers", []) for s in h.body)]
            found += _import_time_statements(inner)
        else:
            found.append(node)
    return found


def test_the_library_modules_import_each_other_without_cycles():
    """At import time (a function may import a module that imports its own: the registry and the catalog)."""
    graph = {}
    for path in LIBRARY.rglob("*.py"):
        if "build" in path.relative_to(LIBRARY).parts:
            continue
        name, deps = _library_module(path), set()
        package = name.split(".") if path.stem == "__init__" else name.split(".")[:-1]
        for node in _import_time_statements(ast.parse(path.read_text()).body):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package[:len(package) - node.level + 1]
                targets = [node.module] if node.module else [a.name for a in node.names]
                deps |= {".".join([*base, t]).lstrip(".") for t in targets}
        graph[name] = {d for d in deps if d != name}

    def reaches(start, goal, seen=()):
        return any(d == goal or (d not in seen and reaches(d, goal, (*seen, d))) for d in graph.get(start, ()))

    assert not [m for m in graph if reaches(m, m)]


def test_only_the_cloud_profiles_branch_on_a_clouds_name():
    pattern = re.compile(r"""(==|!=)\s*["'](gke|eks)["']|["'](gke|eks)["']\s*(==|!=)""")
    offenders = []
    for package in (LIBRARY, *(PROJECT / p for p in ("stacks", "simulator", "policies"))):
        for path in package.rglob("*.py"):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if pattern.search(line):
                    offenders.append(f"{path.relative_to(PROJECT)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def test_no_library_module_shadows_a_standard_library_module():
    # A plugin host or a script run from the package folder puts it first on sys.path: a module named like a
    # standard one (selectors, types, ...) would then replace it for asyncio, grpc and everything else.
    shadowing = sorted(p.stem for p in LIBRARY.glob("*.py") if p.stem in sys.stdlib_module_names)
    assert not shadowing


def _local_imports(path: Path) -> set[str]:
    """The project modules (``package.module``) one file imports, absolute or relative."""
    package = path.parent.name
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 1:
                module = f"{package}.{module}" if module else package
            found |= {f"{module}.{a.name}" for a in node.names} | {module}
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_the_modules_of_each_package_import_each_other_one_way(package):
    modules = {f"{package}.{p.stem}": p for p in (PROJECT / package).glob("*.py") if p.stem != "__init__"}
    graph = {name: _local_imports(path) & set(modules) - {name} for name, path in modules.items()}

    def reaches(start, goal, seen=()):
        return any(d == goal or (d not in seen and reaches(d, goal, (*seen, d))) for d in graph[start])

    cycles = sorted(m for m in graph if reaches(m, m))
    assert not cycles, {m: sorted(graph[m]) for m in cycles}


def test_a_shared_type_taken_as_an_input_keeps_input_fields(schema):
    """``Taint`` is an input of the drivers (``pulumi.Input[list[Taint]]``): another language's SDK must accept an
    output for its fields, whichever cloud's components are registered."""
    fields = schema["types"]["gpu-fungibility:index:Taint"]["properties"]
    assert not [name for name, field in fields.items() if field.get("plain")]
