"""Write a command's outputs inside its output folder, atomically, never through a symbolic link.

Every file a command writes (plan.json, manifests/, summary.md, FAILED, diff.md, diff.json, verify.md)
goes through :func:`write_text` or :func:`write_bytes`, with ``root`` the folder the command may write in
(``build/``, or ``--out``)::

    from output_files import OutputError, write_text
    write_text(build / "dev" / "verify.md", report, root=build)

- **Inside root only.** ``path`` must lie strictly inside ``root``; every component below ``root``
  (folders and the file itself) that exists must be a real folder or file, not a symbolic link: a link
  planted at ``build/dev/verify.md`` or ``build/dev`` would make the command write outside ``build/``.
  ``root`` itself may be a link (a user's ``build -> /scratch/build``), but not a file.
- **Atomic.** The text goes to a temporary file beside the target, which replaces it with
  :func:`os.replace` once complete: a reader sees the old file or the new one, never half of one.
- **No partial file on a failure.** A full disk (``ENOSPC``), a read-only folder or a quota ends in
  :class:`OutputError` naming the file and the reason; the temporary file is removed and the previous
  file, if any, is left as it was.

:func:`make_dir` creates folders under the same rules. Errors are :class:`OutputError`
(``str()`` is ``<path>: <reason>``), which a command reports with exit 2.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path


class OutputError(ValueError):
    """An output that cannot be written where it belongs; ``str()`` is ``<path>: <reason>``."""

    def __init__(self, path: Path | str, reason: str):
        self.path, self.reason = str(path), reason
        super().__init__(f"{path}: {reason}")


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "no space left on device; nothing was written (an earlier file is left as it was)"
    if exc.errno == errno.EDQUOT:
        return "disk quota exceeded; nothing was written (an earlier file is left as it was)"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"cannot be written ({os.strerror(exc.errno)})"
    return f"cannot be written ({exc.strerror or exc})"


def check_root(root: Path | str) -> Path:
    """``root`` as an absolute path; OutputError when it exists and is not a folder (``--out`` naming a file)."""
    root = Path(os.path.abspath(root))
    try:
        info = os.stat(root)
    except FileNotFoundError:
        return root
    except OSError as exc:
        raise OutputError(root, _reason(exc)) from None
    if not stat.S_ISDIR(info.st_mode):
        raise OutputError(root, "is a file, not a folder: outputs are written into a folder")
    return root


def check_path(path: Path | str, root: Path | str) -> Path:
    """``path`` (absolute) when it lies strictly inside ``root`` and nothing below ``root`` on it is a
    symbolic link (or, for a folder on the way, a file); else OutputError."""
    root = check_root(root)
    path = Path(os.path.abspath(path))
    try:
        relative = path.relative_to(root)
    except ValueError:
        raise OutputError(path, f"is outside {root}; outputs stay inside it") from None
    if not relative.parts or ".." in relative.parts:
        raise OutputError(path, f"is not a file inside {root}")
    current = root
    for index, part in enumerate(relative.parts):
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            break
        except OSError as exc:
            raise OutputError(current, _reason(exc)) from None
        if stat.S_ISLNK(info.st_mode):
            raise OutputError(current, f"is a symbolic link; remove it (outputs stay inside {root} and are "
                                       "never written through a link)")
        last = index == len(relative.parts) - 1
        if not last and not stat.S_ISDIR(info.st_mode):
            raise OutputError(current, "is a file where a folder of outputs belongs; remove it")
    return path


def make_dir(folder: Path | str, root: Path | str) -> Path:
    """Create ``folder`` (and its parents) inside ``root`` under :func:`check_path`'s rules."""
    folder = check_path(folder, root)
    if folder.is_dir():
        return folder
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise OutputError(folder, "is a file where a folder of outputs belongs; remove it") from None
    except OSError as exc:
        raise OutputError(folder, _reason(exc)) from None
    return check_path(folder, root)


def write_bytes(path: Path | str, data: bytes, *, root: Path | str) -> Path:
    """Write ``data`` to ``path`` inside ``root``: a temporary file beside it, then :func:`os.replace`."""
    path = check_path(path, root)
    top = check_root(root)
    if path.parent == top:
        try:
            top.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(top, _reason(exc)) from None
    else:
        make_dir(path.parent, top)
    if path.is_dir():
        raise OutputError(path, "is a folder where a file of outputs belongs; remove it")
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    except OSError as exc:
        raise OutputError(path, _reason(exc)) from None
    try:
        _write_all(handle, data)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except OSError as exc:
        _remove_quietly(temporary)
        raise OutputError(path, _reason(exc)) from None
    except BaseException:
        _remove_quietly(temporary)
        raise
    return path


def write_text(path: Path | str, text: str, *, root: Path | str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` inside ``root``, as :func:`write_bytes` does."""
    return write_bytes(path, text.encode("utf-8"), root=root)


def _write_all(handle: int, data: bytes) -> None:
    """Write ``data`` to the open file ``handle`` and close it (tests replace this to fill the disk)."""
    with os.fdopen(handle, "wb") as out:
        out.write(data)


def _remove_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
