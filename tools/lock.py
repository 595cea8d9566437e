"""Compile every hash lock of the repository from its source, with ``uv pip compile``.

Each entry of :data:`LOCKS` is one lock: its source (a ``pyproject.toml`` or a
``*.in`` file), the lock file, and the arguments that only it takes. Every lock
is universal (one file for every OS and every Python the source allows) and
pins every package, transitive ones included, with its hashes; the command that
made it is in its header, so a dependency bot can run it again.

Adding a lock is one line in :data:`LOCKS` (a lock that constrains itself by
another one comes after it). Needs ``uv`` and the package index; standard
library only, so it runs without the project's virtualenv.

Usage (from anywhere):
    python3 tools/lock.py [--uv PATH] [--upgrade]   refresh every lock (make lock [UPGRADE=1])
    python3 tools/lock.py --check [--uv PATH]       exit 1 when a lock is not what its source compiles to
"""

from __future__ import annotations

import argparse
import difflib
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Arguments every lock is compiled with.
COMMON_ARGS = ("--generate-hashes", "--universal")


@dataclass(frozen=True)
class Lock:
    source: str  #: pyproject.toml or requirements .in file, relative to the repository root
    output: str  #: the lock file it compiles to
    args: tuple[str, ...] = ()  #: extra ``uv pip compile`` arguments (``--opt=value`` form)

    def inputs(self) -> list[str]:
        """Every repository file the compilation reads: the source and any constraint files."""
        constraints = [a.split("=", 1)[1] for a in self.args if a.startswith("--constraint=")]
        return [self.source, *constraints]

    def command(self, uv: str = "uv", *, upgrade: bool = False) -> list[str]:
        """The compile command, run from the repository root; ``uv`` writes it into the header."""
        return [uv, "pip", "compile", "--quiet", *(["--upgrade"] if upgrade else []), *COMMON_ARGS,
                *self.args, f"--output-file={self.output}", self.source]

    def header_command(self) -> str:
        """The command as the lock header records it (uv leaves out --quiet and --upgrade)."""
        return " ".join(["uv", "pip", "compile", *COMMON_ARGS, *self.args, f"--output-file={self.output}",
                         self.source])


#: Every lock in the repository, in compile order.
LOCKS: tuple[Lock, ...] = (
    # The project: program, policy pack, offline tools and tests (all optional groups).
    Lock("pyproject.toml", "requirements.txt", ("--all-extras",)),
    # The policy pack, pinned to the project's versions: one locked set under `pulumi up`.
    Lock("policies/pyproject.toml", "policies/requirements.txt", ("--constraint=requirements.txt",)),
    # The component package's plugin (PulumiPlugin.yaml), pinned to the project's versions.
    Lock("components/requirements.in", "components/requirements.txt", ("--constraint=requirements.txt",)),
    # The uv that `make` bootstraps when none of that version is on PATH.
    Lock("tools/uv-requirements.in", "tools/uv-requirements.txt"),
    # zizmor, the workflows' static analysis that `make lint` installs beside that uv.
    Lock("tools/zizmor-requirements.in", "tools/zizmor-requirements.txt"),
)


def compile_all(locks: tuple[Lock, ...], root: Path, uv: str, *, upgrade: bool = False) -> None:
    for lock in locks:
        print(f"lock: {lock.output} <- {lock.source}", file=sys.stderr)
        subprocess.run(lock.command(uv, upgrade=upgrade), cwd=root, check=True)


def check_all(locks: tuple[Lock, ...], root: Path, uv: str) -> list[str]:
    """Recompile every lock in a scratch copy (current pins as preferences); the locks that change."""
    stale = []
    with tempfile.TemporaryDirectory(prefix="lock-check-") as scratch:
        work = Path(scratch)
        for lock in locks:
            for name in {*lock.inputs(), lock.output}:
                if (root / name).is_file():
                    (work / name).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(root / name, work / name)
        compile_all(locks, work, uv)
        for lock in locks:
            before = (root / lock.output).read_text() if (root / lock.output).is_file() else ""
            after = (work / lock.output).read_text()
            if before != after:
                stale.append(lock.output)
                sys.stdout.writelines(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                                           lock.output, f"{lock.output} (recompiled)", n=1))
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uv", default="uv", help="uv executable (default: uv on PATH)")
    parser.add_argument("--upgrade", action="store_true", help="move every pin to the newest allowed version")
    parser.add_argument("--check", action="store_true", help="fail when a lock differs from a fresh compile")
    args = parser.parse_args(argv)
    uv = str(Path(args.uv).resolve()) if "/" in args.uv else args.uv  # the compile runs in other folders
    if args.check:
        stale = check_all(LOCKS, ROOT, uv)
        if stale:
            print(f"lock: stale: {', '.join(stale)}; run `make lock`", file=sys.stderr)
            return 1
        print("lock: every lock matches its source", file=sys.stderr)
        return 0
    compile_all(LOCKS, ROOT, uv, upgrade=args.upgrade)
    return 0


if __name__ == "__main__":
    sys.exit(main())
