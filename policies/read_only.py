"""Checking that no policy changes what the pack's runtime shares between policies.

pulumi-policy's runtime gives each policy its own decoding of a request; :mod:`policies.runtime` decodes
once per call and gives every policy the same objects (the properties, their proxies, the options, the
provider, the stack's resources, the rules' plain copies). That is only the same as the runtime as it ships
while no policy changes them. The runtime refuses the one write its proxies offer (``props[key] = value``)
during a call; with :data:`CHECK_ENV` set in the pack's environment it also records each shared value's
:func:`fingerprint` when it is made and compares it when the call ends, failing the call (naming what
changed and where) when a policy changed it. tests/test_policy_runtime.py runs the whole pack so, over the
shipped stacks' plans and previews.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: Set (to anything but ``0``) in the pack's environment to check every call (a deep walk of each shared
#: value twice per call: for tests, not for large previews).
CHECK_ENV = "GPU_FUNGIBILITY_CHECK_SHARED_INPUTS"
#: The error of a write through a shared proxy.
READ_ONLY = ("a policy's resource properties are shared by every policy of the pack within a call "
             "(policies/runtime.py) and are read-only: copy them (stack_view.plain) to change them")

_SCALARS = (str, bytes, int, float, bool, type(None))


class SharedInputChanged(RuntimeError):
    """A policy changed a value the runtime shares between the policies of a call."""


def fingerprint(value: Any) -> Any:
    """A comparable description of everything reachable from ``value``: maps and lists (in order), objects'
    types and attributes, a value met again named by when it was first met (so cycles end and a changed
    link shows)."""
    return _fingerprint(value, {})


def _fingerprint(value: Any, seen: dict[int, int]) -> Any:
    if isinstance(value, _SCALARS):
        return value
    if id(value) in seen:
        return ("seen", seen[id(value)])
    seen[id(value)] = len(seen)
    if isinstance(value, dict):
        return ("map", tuple((key, _fingerprint(item, seen)) for key, item in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_fingerprint(item, seen) for item in value))
    if isinstance(value, (set, frozenset)):
        return (type(value).__name__, tuple(sorted(repr(item) for item in value)))
    state = _attributes(value)
    if state is None:
        return (type(value).__qualname__, repr(value))
    return (type(value).__qualname__, tuple((name, _fingerprint(item, seen)) for name, item in state))


def _attributes(value: Any) -> list[tuple[str, Any]] | None:
    names = set(getattr(value, "__dict__", {}))
    for klass in type(value).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names.update((slots,) if isinstance(slots, str) else slots)
    if not names:
        return None
    return [(name, getattr(value, name)) for name in sorted(names) if hasattr(value, name)]


def first_difference(before: Any, after: Any, where: str = "") -> str:
    """Where two fingerprints first differ (``.spec.containers[0]``, ``.parent``), '' when they do not."""
    if before == after:
        return ""
    if (isinstance(before, tuple) and isinstance(after, tuple) and len(before) == len(after) == 2
            and before[0] == after[0] and isinstance(before[1], tuple) and isinstance(after[1], tuple)):
        kind, left, right = before[0], before[1], after[1]
        keyed = kind not in ("list", "tuple", "set", "frozenset")
        if keyed and [key for key, _ in left] != [key for key, _ in right]:
            return f"{where or '.'} (its keys: {[k for k, _ in left]} then {[k for k, _ in right]})"
        if not keyed and len(left) != len(right):
            return f"{where or '.'} (its length: {len(left)} then {len(right)})"
        for index, (one, other) in enumerate(zip(left, right, strict=True)):
            if keyed:
                found = first_difference(one[1], other[1], f"{where}.{one[0]}")
            else:
                found = first_difference(one, other, f"{where}[{index}]")
            if found:
                return found
    return f"{where or '.'} ({_short(before)} then {_short(after)})"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def is_shared_input(value: Any) -> bool:
    """Whether the runtime watches ``value`` when it shares it: data (maps, lists), and the runtime's own
    objects (proxies, options, providers, resources); not the rules' own per-call indexes, which fill as
    they are read."""
    if value is None or isinstance(value, _SCALARS):
        return False
    return isinstance(value, (Mapping, Sequence)) or type(value).__module__.startswith("pulumi_policy")


class Watch:
    """The values one call shared between its policies, each with its fingerprint when made."""

    def __init__(self) -> None:
        self.items: list[tuple[str, Any, Any]] = []

    def add(self, what: str, value: Any) -> None:
        if is_shared_input(value):
            self.items.append((what, value, fingerprint(value)))

    def verify(self) -> None:
        """Raise :class:`SharedInputChanged` naming each shared value a policy changed."""
        changed = [f"{what} at {first_difference(before, fingerprint(value))}"
                   for what, value, before in self.items if fingerprint(value) != before]
        if changed:
            raise SharedInputChanged("a policy changed what the runtime shares between the policies of a call "
                                     "(policies/runtime.py): " + "; ".join(changed))
