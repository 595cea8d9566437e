"""Which parts of ``device`` a selector reads, so results can be shared between equal devices.

A selector's result depends only on the device values it reads. When every
use of ``device`` is a path with literal keys (``device.driver``,
``device.attributes['gpu.nvidia.com'].productName``, ``device.capacity[...]``),
two devices that agree on those paths get the same result, and a caller may
evaluate once for both (a cluster's nodes publish identical GPUs that differ
only in ``uuid``). Any other use (``device`` passed whole, a computed key) makes
the selector depend on the whole device, and no sharing happens.
"""

from __future__ import annotations

import lark

Path = tuple[str, ...]
WHOLE_DEVICE: Path = ("device",)


def _string_literal(expr: object) -> str | None:
    """The value of an expression that is just a plain quoted string literal."""
    node = expr
    while isinstance(node, lark.Tree):
        if node.data == "literal":
            token = node.children[0]
            text = str(token)
            if getattr(token, "type", "") != "STRING_LIT" or "\\" in text or len(text) < 2:
                return None
            if text[0] in "'\"" and text[-1] == text[0]:
                return text[1:-1]
            return None
        if len(node.children) != 1:
            return None
        node = node.children[0]
    return None


def _path(node: object) -> Path | None:
    if not isinstance(node, lark.Tree):
        return None
    if node.data in ("member", "primary") and len(node.children) == 1:
        return _path(node.children[0])
    if node.data in ("ident", "dot_ident"):
        return WHOLE_DEVICE if str(node.children[0]) == "device" else None
    if node.data == "member_dot":
        base = _path(node.children[0])
        if base is None or len(base) >= 4:
            return None
        return (*base, str(node.children[1]))
    if node.data == "member_index":
        base = _path(node.children[0])
        key = _string_literal(node.children[1])
        if base is None or key is None or len(base) >= 4:
            return None
        return (*base, key)
    return None


def device_paths(tree: lark.Tree) -> tuple[Path, ...]:
    """Every maximal ``device`` path the expression reads, sorted; ``("device",)`` means all of it."""
    found: set[Path] = set()

    def visit(node: object) -> None:
        path = _path(node)
        if path is not None:
            found.add(path)
            return
        if isinstance(node, lark.Tree):
            for child in node.children:
                visit(child)

    visit(tree)
    if any(p == WHOLE_DEVICE or (len(p) == 2 and p[1] in ("attributes", "capacity")) for p in found):
        return (WHOLE_DEVICE,)
    return tuple(sorted(found))
