"""Each side of a diff imports its own tree: packages mapped to other folder names included."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from plan_diff.planning import import_path

LIBRARY_PYPROJECT = """\
[project]
name = "library"
[tool.setuptools]
packages = ["gpu_fungibility"]
package-dir = { "gpu_fungibility" = "." }
"""


def _tree(root: Path, marker: str) -> Path:
    library = root / "components"
    library.mkdir(parents=True)
    (library / "pyproject.toml").write_text(LIBRARY_PYPROJECT)
    (library / "__init__.py").write_text(f"TREE = {marker!r}\n")
    (library / "selectors.py").write_text("from . import catalog\n")  # a module named like a stdlib one
    return root


def _import(tree: Path, shim: Path, *extra_path: Path) -> str:
    path = import_path(tree, shim) + [str(p) for p in extra_path]
    code = "import socket, gpu_fungibility; print(gpu_fungibility.TREE)"  # socket imports stdlib selectors
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    return subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_a_package_mapped_to_another_folder_name_imports_from_its_own_tree(tmp_path):
    base = _tree(tmp_path / "base", "base")
    working = _tree(tmp_path / "working", "working tree")
    # the working tree's copy is also reachable (as an editable install would make it), but later
    other_shim = tmp_path / "other"
    import_path(working, other_shim)
    assert _import(base, tmp_path / "shim", other_shim) == "base"


def test_a_project_folder_that_is_a_package_does_not_shadow_the_standard_library(tmp_path):
    tree = _tree(tmp_path / "t", "t")
    path = import_path(tree, tmp_path / "shim")
    assert str(tree / "components") not in path
    assert path[0] == str(tree)
