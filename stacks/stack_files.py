"""Stack names as every command takes them, and the one folder a command may write a stack's outputs to.

A stack name picks ``Pulumi.<stack>.yaml`` and names ``build/<stack>/``, so a name that is a path
(``../stacks``, ``/tmp/x``, ``""``, ``..``) would make a command read or move files it must never touch.
Every command (plan, diff, simulate, preflight, verify) checks the name here, where it enters, with the
rule Pulumi itself applies to a stack name: 1 to 100 characters out of letters, digits, ``-``, ``_`` and
``.`` (pulumi/pulumi ``pkg/backend/diy/backend.go``, ``validateStackName``: ``^[A-Za-z0-9_.-]{1,100}$``, the
same pattern as the service's). A name made of dots alone (``.``, ``..``) passes that pattern but is a
path here, so it is refused too.

Output folders are resolved (symbolic links followed) and must lie strictly inside ``build/``; anything
that would rename or delete a stack's old outputs goes through :func:`build_dir` or :func:`output_dir`.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STACK_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")
STACK_NAME_RULE = "1-100 letters, digits, '-', '_' or '.' (Pulumi's stack name rule), not '.' or '..'"


class StackNameError(ValueError):
    """A stack name that Pulumi would refuse, or that would reach outside ``build/``."""


def check_stack_name(name: str) -> str:
    """``name`` when it is a stack name Pulumi accepts and no path; else :class:`StackNameError`."""
    if not isinstance(name, str) or not STACK_NAME.fullmatch(name) or set(name) == {"."}:
        raise StackNameError(f"{name!r} is not a stack name: use {STACK_NAME_RULE}")
    return name


def output_dir(name: str, out_root: Path) -> Path:
    """``out_root/<name>`` (``out_root`` resolved); raises StackNameError unless it lies strictly inside
    ``out_root``, and :class:`output_files.OutputError` when ``out_root`` is a file or ``<name>`` or
    ``<name>.failed`` is a symbolic link or a file (a command would write or move outputs through it)."""
    from output_files import check_path, check_root

    check_stack_name(name)
    root = check_root(Path(out_root).resolve())
    folder = root / name
    for path in (folder, folder.with_name(folder.name + ".failed")):
        check_path(path / "x", root)  # neither the folder nor anything on its way is a link or a file
    if folder.resolve().parent != root:
        raise StackNameError(f"the outputs of stack {name!r} would go to {folder.resolve()}, outside {root}")
    return folder


def build_dir(name: str, root: Path = ROOT) -> Path:
    """``<root>/build/<name>``: validated, resolved, inside ``<root>/build``."""
    return output_dir(name, Path(root) / "build")


def stack_name_argument(value: str) -> str:
    """``argparse`` type for ``--stack``: a bad name is a usage error (exit 2) naming the rule."""
    try:
        return check_stack_name(value)
    except StackNameError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
