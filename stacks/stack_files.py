"""Stack names and the build folder (minimal; the full rules live here)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")


class StackNameError(ValueError):
    """A stack name that is not a plain Pulumi stack name."""


def check_stack_name(name: str) -> str:
    if not _NAME.match(name or "") or name in {".", ".."}:
        raise StackNameError(f"{name!r} is not a stack name (letters, digits, '-', '_', '.')")
    return name


def build_dir(name: str, root: Path = ROOT) -> Path:
    path = (root / "build" / check_stack_name(name)).resolve()
    if (root / "build").resolve() not in path.parents:
        raise StackNameError(f"{name!r} resolves outside build/")
    return path
