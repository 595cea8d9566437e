"""Read the files a user hands a command (stack YAML, preview JSON, policy config, snapshots) within limits.

Every command reads its input files through :func:`read_yaml` or :func:`read_json`, so a malformed,
huge or hostile file is an :class:`InputFileError` naming the file and the reason, raised within seconds
and bounded memory, never a ``RecursionError``, ``UnicodeDecodeError`` or ``MemoryError`` traceback:

- size: the file is read up to ``max_bytes`` + 1 bytes and refused past that; only regular files are
  opened (a FIFO or ``/dev/zero`` would block or never end);
- encoding: UTF-8 (a BOM is accepted), no NUL bytes (a binary file); UTF-16 and UTF-32 text (what
  PowerShell's ``>`` writes) is named as such, with how to convert it;
- depth: collections nested deeper than ``max_depth`` are refused while parsing, before Python's
  recursion limit is reached;
- YAML aliases: the document's size with every alias expanded (an "alias bomb": a few lines that
  expand to billions of values once anything walks them) is counted while composing and refused past
  ``max_nodes``; an anchor that refers to itself is refused;
- YAML duplicate keys: a key written twice in one mapping is refused naming both lines (PyYAML would keep
  the last one silently; YAML 1.2 requires unique keys).
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)

NUL = b"\0"


class InputFileError(ValueError):
    """A file that cannot be read as the command's input; ``str()`` is ``<file>: <reason>``."""

    def __init__(self, path: Path | str, reason: str, where: str = "file"):
        self.path = str(path)
        self.reason = reason
        self.where = where
        super().__init__(f"{path}: {reason}")


@dataclass(frozen=True)
class Limits:
    """How large, deep and (YAML) alias-expanded an input may be."""

    max_bytes: int
    max_depth: int = 64
    max_nodes: int = 200_000

    def describe_bytes(self) -> str:
        return f"{self.max_bytes / 2**20:g} MiB" if self.max_bytes >= 2**20 else f"{self.max_bytes} bytes"


#: A Pulumi.<stack>.yaml: a few KB in practice; 1 MiB holds tens of thousands of config lines.
STACK_FILE = Limits(max_bytes=2**20, max_depth=32, max_nodes=100_000)
#: A ``pulumi preview --json`` document or an offline plan.json (Kubernetes objects nest about 15 deep).
PREVIEW_JSON = Limits(max_bytes=256 * 2**20, max_depth=100)
#: A ``--policy-pack-config`` file.
POLICY_CONFIG = Limits(max_bytes=2**20, max_depth=32)
#: A ``kubectl get -o json`` snapshot of a cluster.
SNAPSHOT_JSON = Limits(max_bytes=512 * 2**20, max_depth=100)


def check_file(path: Path, limits: Limits) -> None:
    """Refuse, naming the path, anything but an existing regular file of at most ``limits.max_bytes``."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise InputFileError(path, "no such file") from None
    except OSError as exc:
        raise InputFileError(path, f"cannot be read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputFileError(path, "is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise InputFileError(path, "is not a regular file (a device, pipe or socket)")
    if info.st_size > limits.max_bytes:
        raise InputFileError(path, f"is {info.st_size} bytes; at most {limits.describe_bytes()} is read")


def read_text(path: Path | str, limits: Limits) -> str:
    """The file's text: a regular file, at most ``limits.max_bytes``, UTF-8 without NUL bytes."""
    path = Path(path)
    check_file(path, limits)
    try:
        with open(path, "rb") as handle:
            data = handle.read(limits.max_bytes + 1)
    except OSError as exc:
        raise InputFileError(path, f"cannot be read ({exc.strerror or exc})") from None
    if len(data) > limits.max_bytes:
        raise InputFileError(path, f"is larger than {limits.describe_bytes()}")
    wide = wide_encoding(data)
    if wide:
        raise InputFileError(path, f"is {wide} text, not UTF-8 (PowerShell's `>` and `Out-File` write UTF-16); "
                                   "save it as UTF-8, e.g. `Out-File -Encoding utf8` or `iconv -f "
                                   f"{wide.split()[0]} -t UTF-8`")
    if NUL in data:
        raise InputFileError(path, f"is a binary file (a NUL byte at offset {data.index(NUL)}), not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputFileError(path, f"is not UTF-8 text (invalid byte at offset {exc.start})") from None


_WIDE_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32LE"), (b"\x00\x00\xfe\xff", "UTF-32BE"),
              (b"\xff\xfe", "UTF-16LE"), (b"\xfe\xff", "UTF-16BE"))


def wide_encoding(data: bytes) -> str | None:
    """``"UTF-16LE"`` (etc.) when ``data`` is UTF-16 or UTF-32 text, by its byte order mark or, without one,
    by ASCII text with a NUL after (or before) every character; None otherwise."""
    for bom, name in _WIDE_BOMS:
        if data.startswith(bom):
            return name
    sample = data[:512]
    if len(sample) >= 4 and len(sample) % 2 == 0:
        odd, even = sample[1::2], sample[0::2]
        if odd.count(0) == len(odd) and 0 not in even:
            return "UTF-16LE (without a byte order mark)"
        if even.count(0) == len(even) and 0 not in odd:
            return "UTF-16BE (without a byte order mark)"
    return None


# ---- JSON --------------------------------------------------------------------------------------------


def read_json(path: Path | str, limits: Limits) -> Any:
    """The file parsed as JSON, within ``limits`` (depth checked without recursion)."""
    return parse_json(read_text(path, limits), path, limits)


class NotJsonConstant(ValueError):
    """``NaN``, ``Infinity`` or ``-Infinity``: Python's decoder takes them, JSON (RFC 8259) has no such numbers."""

    def __init__(self, name: str):
        self.name = name
        super().__init__(f"{name} is not a JSON number (RFC 8259 has no NaN or Infinity; "
                         "`pulumi preview --json` never writes one)")


def reject_constant(name: str) -> Any:
    """``parse_constant`` for :mod:`json`: refuse the input instead of handing a float NaN on to the reader."""
    raise NotJsonConstant(name)


def parse_json(text: str, path: Path | str, limits: Limits) -> Any:
    try:
        data = json.loads(text, parse_constant=reject_constant)
    except NotJsonConstant as exc:
        raise InputFileError(path, f"not valid JSON: {exc}") from None
    except RecursionError:
        raise InputFileError(path, f"nested too deep (more than {limits.max_depth} levels)") from None
    except json.JSONDecodeError as exc:
        raise InputFileError(path, f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})",
                             where=f"line {exc.lineno}, column {exc.colno}") from None
    depth = nesting_depth(data, limits.max_depth)
    if depth > limits.max_depth:
        raise InputFileError(path, f"nested too deep (more than {limits.max_depth} levels)")
    return data


def nesting_depth(value: Any, stop_after: int) -> int:
    """How deep lists and mappings nest in ``value`` (level by level, no recursion; stops counting past
    ``stop_after``, so a structure that refers to itself counts as too deep)."""
    containers = (dict, list, tuple)
    level = [value] if isinstance(value, containers) else []
    depth = 0
    while level:
        depth += 1
        if depth > stop_after:
            return depth
        below: list[Any] = []
        for node in level:
            below += [c for c in (node.values() if isinstance(node, dict) else node) if isinstance(c, containers)]
        level = below
    return depth


# ---- YAML --------------------------------------------------------------------------------------------


def read_yaml(path: Path | str, limits: Limits) -> Any:
    """The file parsed as YAML (safe tags only), within ``limits``."""
    return parse_yaml(read_text(path, limits), path, limits)


def parse_yaml(text: str, path: Path | str, limits: Limits) -> Any:
    """``text`` as YAML: the event stream is checked first (depth, alias-expanded size), then loaded.

    Both passes use libyaml when PyYAML has it (``CSafeLoader``, about ten times faster than the
    pure-Python loader); the check walks events in a loop, so no depth reaches Python's recursion.
    """
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        _check_events(yaml.parse(text, Loader=loader), path, limits)
        return yaml.load(text, Loader=loader)  # noqa: S506 (a safe loader)
    except InputFileError:
        raise
    except yaml.YAMLError as exc:
        where, message = yaml_problem(exc)
        raise InputFileError(path, message, where=where) from None
    except RecursionError:
        raise InputFileError(path, "nested too deep") from None


def _check_events(events: Any, path: Path | str, limits: Limits) -> None:
    """Refuse collections nested past ``max_depth``, documents larger than ``max_nodes`` values once
    every alias is expanded (each anchor's expanded size is counted once and reused), cycles, and a
    mapping key written twice (YAML 1.2 requires keys to be unique; PyYAML would keep the last silently)."""
    # one entry per open collection: [expanded size so far, anchor, keys seen (None in a sequence), children]
    open_collections: list[list[Any]] = []
    expanded: dict[str, int | None] = {}  # anchor -> expanded size (None while its collection is open)
    total = 0

    def refuse(reason: str, mark: Any) -> InputFileError:
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "file"
        return InputFileError(path, f"{reason} (at {where})", where=where)

    def add(size: int, mark: Any) -> None:
        nonlocal total
        if open_collections:
            open_collections[-1][0] += size
            size = open_collections[-1][0]
        else:
            total += size
            size = total
        if size > limits.max_nodes:
            raise refuse(f"expands to more than {limits.max_nodes} values once its aliases (*name) are "
                         "expanded; write the values out or use fewer aliases", mark)

    def child(event: Any) -> None:
        """Count a child of the open collection; a mapping's even children are its keys."""
        if not open_collections:
            return
        parent = open_collections[-1]
        keys, index = parent[2], parent[3]
        parent[3] += 1
        if keys is None or index % 2 or not isinstance(event, ScalarEvent) or event.value == "<<":
            return
        key = (event.value, event.tag, event.style is None)
        line = event.start_mark.line + 1 if event.start_mark is not None else 0
        if key in keys:
            raise refuse(f"the key {event.value!r} is written twice in one mapping (lines {keys[key]} and {line}); "
                         "YAML keeps only one of them: remove or merge the other", event.start_mark)
        keys[key] = line

    for event in events:
        if isinstance(event, (SequenceStartEvent, MappingStartEvent)):
            if len(open_collections) >= limits.max_depth:
                raise refuse(f"nested too deep (more than {limits.max_depth} levels)", event.start_mark)
            child(event)
            open_collections.append([1, event.anchor, {} if isinstance(event, MappingStartEvent) else None, 0])
            if event.anchor:
                expanded[event.anchor] = None
        elif isinstance(event, (SequenceEndEvent, MappingEndEvent)):
            size, anchor, _keys, _children = open_collections.pop()
            if anchor:
                expanded[anchor] = size
            add(size, event.start_mark)
        elif isinstance(event, ScalarEvent):
            child(event)
            if event.anchor:
                expanded[event.anchor] = 1
            add(1, event.start_mark)
        elif isinstance(event, AliasEvent):
            child(event)
            if event.anchor in expanded and expanded[event.anchor] is None:
                raise refuse(f"the alias *{event.anchor} refers to the collection it is inside (a cycle)",
                             event.start_mark)
            add(expanded.get(event.anchor) or 1, event.start_mark)  # an unknown anchor: the loader says so


def yaml_problem(exc: yaml.YAMLError) -> tuple[str, str]:
    """A YAML error as (position, message), without the parser's traceback."""
    mark = getattr(exc, "problem_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "file"
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    context_mark = getattr(exc, "context_mark", None)
    if context and context_mark is not None:
        problem += f" ({context} at line {context_mark.line + 1})"
    return where, f"not valid YAML: {problem}"
