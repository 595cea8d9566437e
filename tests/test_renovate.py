"""Renovate's regex managers find every pinned chart and image in components/pins.py.

The managers' patterns are JavaScript regular expressions; with named groups
rewritten from ``(?<x>`` to ``(?P<x>`` they run under Python's ``re`` the same
way, so each pin is matched here as Renovate would match it (``matchStrings``
applied independently, or each one inside the previous match for the
``recursive`` strategy).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PINS_PATH = "components/pins.py"
PINS_SOURCE = (ROOT / PINS_PATH).read_text()
#: The module's constants, read from its source (pins.py holds literals only).
PINS = {target.id: ast.literal_eval(node.value) for node in ast.parse(PINS_SOURCE).body
        if isinstance(node, ast.Assign) for target in node.targets if isinstance(target, ast.Name)}
CONFIG = json.loads((ROOT / "renovate.json").read_text())


def python_pattern(javascript: str) -> re.Pattern:
    return re.compile(javascript.replace("(?<", "(?P<").replace("(?P<=", "(?<=").replace("(?P<!", "(?<!"))


def applies_to(manager: dict, path: str) -> bool:
    return any(python_pattern(pattern.strip("/")).search(path) for pattern in manager["managerFilePatterns"])


def extract(manager: dict, text: str) -> list[dict[str, str]]:
    """The dependencies one regex manager extracts from ``text``, as Renovate's strategies do."""
    patterns = [python_pattern(p) for p in manager["matchStrings"]]
    strategy = manager.get("matchStringsStrategy", "any")
    if strategy == "any":
        found = [m.groupdict() for p in patterns for m in p.finditer(text)]
    elif strategy == "recursive":
        level: list[tuple[dict, str]] = [({}, text)]
        for pattern in patterns:
            level = [({**groups, **{k: v for k, v in m.groupdict().items() if v is not None}}, m.group(0))
                     for groups, scope in level for m in pattern.finditer(scope)]
        found = [groups for groups, _ in level]
    else:
        raise AssertionError(f"strategy {strategy} is not modelled here")
    deps = []
    for groups in found:
        dep = {k: v for k, v in groups.items() if v is not None}
        if "datasourceTemplate" in manager:
            dep.setdefault("datasource", manager["datasourceTemplate"])
        deps.append(dep)
    return deps


def pins_managers() -> list[dict]:
    return [m for m in CONFIG["customManagers"] if m["customType"] == "regex" and applies_to(m, PINS_PATH)]


def extracted() -> list[dict[str, str]]:
    return [dep for manager in pins_managers() for dep in extract(manager, PINS_SOURCE)]


def pinned_constants() -> list[str]:
    """Module-level pins: chart versions, images and image tags by Kubernetes minor."""
    return [n for n in PINS if n.endswith(("_VERSION", "_IMAGE", "_BY_MINOR"))]


def ignored_constants() -> set[str]:
    """Pins marked ``# renovate: ignore (<reason>)`` on the line above (never pulled from a registry)."""
    return set(re.findall(r"^# renovate: ignore \(.+\)\n(?:#:.*\n)*([A-Z0-9_]+) =", PINS_SOURCE, re.MULTILINE))


def test_every_pin_is_covered_or_ignored_with_a_reason():
    constants = pinned_constants()
    assert len(constants) >= 10, constants
    deps = extracted()
    uncovered = []
    for name in set(constants) - ignored_constants():
        value = PINS[name]
        if name.endswith("_VERSION"):
            chart = PINS[name.removesuffix("_VERSION") + "_CHART"]
            if chart.startswith("oci://"):
                wanted = [{"datasource": "docker", "depName": chart.removeprefix("oci://"), "currentValue": value}]
            else:
                repo = PINS[name.removesuffix("_VERSION") + "_REPO"]
                wanted = [{"datasource": "helm", "depName": chart, "registryUrl": repo, "currentValue": value}]
        elif name.endswith("_BY_MINOR"):
            wanted = [{"datasource": "docker", "currentValue": tag} for tag in value.values()]
        else:
            reference, _, digest = value.partition("@")
            head, colon, tail = reference.rpartition(":")
            repository, tag = (head, tail) if colon and "/" not in tail else (reference, "")
            wanted = [{"datasource": "docker", "depName": repository,
                       **({"currentValue": tag} if tag else {}), **({"currentDigest": digest} if digest else {})}]
        for want in wanted:
            if not any(all(dep.get(k) == v for k, v in want.items()) for dep in deps):
                uncovered.append((name, want))
    assert uncovered == [], f"pins no Renovate manager extracts: {uncovered}"


def test_each_pin_is_extracted_once():
    deps = extracted()
    keys = [(d.get("depName"), d.get("currentValue"), d.get("currentDigest")) for d in deps]
    assert len(keys) == len(set(keys)), f"two managers extract the same pin: {keys}"
    assert all(d.get("depName") and d.get("datasource") for d in deps), deps


def test_only_the_cos_installer_is_ignored():
    assert ignored_constants() == {"COS_DRIVER_INSTALLER_IMAGE"}


def test_a_new_unannotated_pin_is_reported():
    text = PINS_SOURCE + '\nEXTRA_IMAGE = "example.org/extra:v1"\n'
    deps = [dep for manager in pins_managers() for dep in extract(manager, text)]
    assert not any(d.get("depName") == "example.org/extra" for d in deps)
    annotated = PINS_SOURCE + '\n# renovate: datasource=docker\nEXTRA_IMAGE = "example.org/extra:v1"\n'
    deps = [dep for manager in pins_managers() for dep in extract(manager, annotated)]
    assert {"depName": "example.org/extra", "currentValue": "v1", "datasource": "docker"} in deps


@pytest.mark.parametrize("workflow", sorted((ROOT / ".github" / "workflows").glob("*.yml")), ids=lambda p: p.name)
def test_setup_uv_versions_are_tracked(workflow):
    text = workflow.read_text()
    managers = [m for m in CONFIG["customManagers"] if applies_to(m, f".github/workflows/{workflow.name}")]
    deps = [dep for manager in managers for dep in extract(manager, text)]
    assert len(deps) == text.count("astral-sh/setup-uv@"), deps
    assert all(d == {"datasource": "pypi", "depName": "uv", "currentValue": deps[0]["currentValue"]} for d in deps)


def test_python_locks_and_ranges_are_managed():
    patterns = CONFIG["pip_requirements"]["managerFilePatterns"]
    for lock in ("requirements.txt", "policies/requirements.txt", "tools/uv-requirements.txt",
                 "tools/uv-requirements.in"):
        assert any(python_pattern(p.strip("/")).search(lock) for p in patterns), lock
    for manager in ("pip_requirements", "pep621"):  # pins + hashes of the locks; ranges of pyproject.toml
        assert CONFIG.get(manager, {}).get("enabled", True), f"{manager} is disabled"
        assert manager in CONFIG.get("enabledManagers", [manager]), f"{manager} is not enabled"


def test_the_generated_rehearsal_modfiles_are_left_alone():
    """rehearse/harness/k8s/<minor>/go.mod come from versions.json (gen_modfile.py); an update PR would break them."""
    import fnmatch

    rules = [r for r in json.loads((ROOT / "renovate.json").read_text())["packageRules"] if r.get("enabled") is False
             and "gomod" in r.get("matchManagers", [])]
    modfiles = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "rehearse" / "harness").rglob("go.mod"))
    assert modfiles and len(modfiles) >= 4
    for path in modfiles:
        assert any(fnmatch.fnmatch(path, pattern) for rule in rules for pattern in rule["matchFileNames"]), path
