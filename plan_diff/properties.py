"""Property paths, secrets and the leaf-by-leaf comparison of two resources' inputs.

Paths are tuples of keys (str) and list indexes (int), printed the way Pulumi prints a
property path: ``nodeConfig.guestAccelerators[0].count``, ``metadata.labels["nvidia.com/gpu.dra"]``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

Path = tuple[str | int, ...]

#: How the Pulumi engine marks a secret value in serialized properties (``sig.Secret``); a real
#: ``pulumi preview --json`` shows secrets in this form, the offline plan as ``[secret]``.
SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
SECRET_TEXT = "[secret]"
_DIGEST = re.compile(r"^\[secret:([0-9a-f]+)\]$")
_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")


class Missing:
    """The value on the side of an add or a delete that has none."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING = Missing()


def format_path(path: Path) -> str:
    """``("metadata", "labels", "a/b")`` -> ``metadata.labels["a/b"]``; ``("x", 0)`` -> ``x[0]``."""
    out = ""
    for element in path:
        if isinstance(element, int):
            out += f"[{element}]"
        elif element == "*":
            out += "[*]" if out else "*"
        elif _IDENTIFIER.match(element):
            out += f".{element}" if out else element
        else:
            out += f"[{json.dumps(element)}]"
    return out


def parse_path(text: str) -> Path:
    """The inverse of :func:`format_path`, also for resource options (``replaceOnChanges``):
    ``spec``, ``a.b[0]``, ``a[*].b``, ``metadata.labels["x.y/z"]``, ``*``."""
    elements: list[str | int] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == ".":
            i += 1
        elif ch == "[":
            end = text.index("]", i)
            inner = text[i + 1:end]
            if inner.startswith('"'):
                # a quoted key may itself hold "]": read the JSON string, then the closing bracket
                decoder = json.JSONDecoder()
                key, used = decoder.raw_decode(text, i + 1)
                elements.append(key)
                i = i + 1 + used + 1
                continue
            elements.append("*" if inner == "*" else int(inner))
            i = end + 1
        else:
            match = re.match(r"[^.\[]+", text[i:])
            elements.append(match.group(0))
            i += len(match.group(0))
    return tuple(elements)


def is_secret(value: Any) -> bool:
    if isinstance(value, str):
        return value == SECRET_TEXT or bool(_DIGEST.match(value))
    return isinstance(value, dict) and value.get(SECRET_SIG_KEY) == SECRET_SIG


def scrub(value: Any) -> Any:
    """The value with every secret shown as ``[secret]`` (offline digests and engine envelopes alike)."""
    if is_secret(value):
        return SECRET_TEXT
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def _secret_token(value: Any) -> tuple[str, str] | None:
    """What two secrets can be compared by, or None when this side cannot tell (a bare ``[secret]``)."""
    if isinstance(value, str):
        match = _DIGEST.match(value)
        return ("digest", match.group(1)) if match else None
    if isinstance(value, dict):
        rest = {k: v for k, v in value.items() if k != SECRET_SIG_KEY}
        return ("envelope", json.dumps(rest, sort_keys=True))
    return None


@dataclass
class PropertyChange:
    """One changed property of a resource: ``kind`` is add, delete or update."""

    path: Path
    kind: str
    old: Any
    new: Any
    secret: bool = False


@dataclass
class Comparison:
    changes: list[PropertyChange]
    #: paths where both sides hold a secret this comparison cannot see into (a plan without digests)
    uncompared_secrets: list[Path]


def compare_inputs(old: Any, new: Any) -> Comparison:
    """Every leaf that differs between two property trees, down to the deepest path both sides share.

    A key or list element present on one side only is one add or delete of its whole value.
    Secrets compare by their digests and are never shown (``[secret]`` on both sides).
    """
    result = Comparison([], [])
    _walk(old, new, (), result)
    return result


def _walk(old: Any, new: Any, path: Path, out: Comparison) -> None:
    if is_secret(old) or is_secret(new):
        if is_secret(old) and is_secret(new):
            a, b = _secret_token(old), _secret_token(new)
            if a is None or b is None or a[0] != b[0]:
                out.uncompared_secrets.append(path)
            elif a != b:
                out.changes.append(PropertyChange(path, "update", SECRET_TEXT, SECRET_TEXT, secret=True))
        else:  # a value that became, or stopped being, a secret: show neither side
            out.changes.append(PropertyChange(path, "update", SECRET_TEXT, SECRET_TEXT, secret=True))
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            if key not in new:
                out.changes.append(_one_sided(path + (key,), "delete", old[key]))
            elif key not in old:
                out.changes.append(_one_sided(path + (key,), "add", new[key]))
            else:
                _walk(old[key], new[key], path + (key,), out)
        return
    if isinstance(old, list) and isinstance(new, list):
        for index in range(max(len(old), len(new))):
            if index >= len(new):
                out.changes.append(_one_sided(path + (index,), "delete", old[index]))
            elif index >= len(old):
                out.changes.append(_one_sided(path + (index,), "add", new[index]))
            else:
                _walk(old[index], new[index], path + (index,), out)
        return
    if _canonical(old) != _canonical(new):
        out.changes.append(PropertyChange(path, "update", old, new))


def _one_sided(path: Path, kind: str, value: Any) -> PropertyChange:
    shown = scrub(value)
    old, new = (shown, MISSING) if kind == "delete" else (MISSING, shown)
    return PropertyChange(path, kind, old, new, secret=shown != value)


def _canonical(value: Any) -> str:
    """Equality as JSON sees it: ``1`` and ``1.0`` agree, ``True`` and ``1`` do not."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return json.dumps(value, sort_keys=True)


def value_at(tree: Any, path: Path) -> Any:
    """The value at ``path`` (``*`` matches every key or index: a list of the matches), or MISSING."""
    nodes = [tree]
    for element in path:
        following = []
        for node in nodes:
            if element == "*":
                following += list(node.values()) if isinstance(node, dict) else list(node) if isinstance(
                    node, list) else []
            elif isinstance(node, dict) and element in node:
                following.append(node[element])
            elif isinstance(node, list) and isinstance(element, int) and 0 <= element < len(node):
                following.append(node[element])
        nodes = following
    if not nodes:
        return MISSING
    return nodes if "*" in path else nodes[0]


def matches_prefix(pattern: Path, path: Path) -> bool:
    """True when ``pattern`` (``*`` matching any one element) is a prefix of ``path``."""
    if len(pattern) > len(path):
        return False
    return all(p == "*" or p == e for p, e in zip(pattern, path, strict=False))
