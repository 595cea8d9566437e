"""Values unknown during a preview: how every rule of the pack tests, reads and reports them.

In a stack's first ``pulumi preview`` the engine cannot know what providers compute: a cloud resource's ids,
ARNs, e-mails and endpoints, and everything a Kubernetes resource outputs (the Kubernetes provider's
kubeconfig is itself built from the cluster's unknown endpoint, so the provider is not configured and every
resource it manages previews with empty outputs). The engine marks such a value with a sentinel string
(pulumi sdk ``resource/sig``; pulumi-policy 1.21 ``proxy.py`` holds the same constants); a policy that reads
one through the runtime's proxy gets ``UnknownValueError``, and :func:`stack_view.plain` turns each into
:data:`UNKNOWN`.

The pack's rule: **no rule reads an unknown value as absent.** A rule judges what is known, decides from
what it knows where it can (a node pool's labels and taints are known in a first preview; a Helm release's
namespace is not), and records what it cannot judge in a :class:`Pending`; at the end of the rule,
:meth:`Pending.finish` raises :class:`NotJudged` when anything is pending, which the policy runtime reports
as an *advisory* diagnostic ("can't run policy ... during preview: not judged until known: ..."), after the
mandatory violations the rule did find. The same stack, previewed again once the resources exist (or run
by ``pulumi up``), has every value known and is judged in full.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pulumi_policy import proxy as _proxy
from pulumi_policy.proxy import UnknownValueError

#: What :func:`stack_view.plain` makes of any of the engine's sentinels.
UNKNOWN = "[unknown]"

#: The engine's sentinels for a value unknown during a preview (string, bool, number, array, asset, archive,
#: object), as pulumi-policy names them.
SENTINELS = frozenset(
    getattr(_proxy, name) for name in ("UNKNOWN_STRING_VALUE", "UNKNOWN_BOOLEAN_VALUE", "UNKNOWN_NUMBER_VALUE",
                                       "UNKNOWN_ARRAY_VALUE", "UNKNOWN_ASSET_VALUE", "UNKNOWN_ARCHIVE_VALUE",
                                       "UNKNOWN_OBJECT_VALUE") if isinstance(getattr(_proxy, name, None), str))


def is_unknown(value: Any) -> bool:
    """Whether ``value`` is a value unknown during the preview (a sentinel, or :data:`UNKNOWN`)."""
    return isinstance(value, str) and (value == UNKNOWN or value in SENTINELS)


def known(value: Any, default: Any = None) -> Any:
    """``value``, or ``default`` when it is unknown. Only for a value whose absence and unknown mean the same to
    the caller; a rule deciding something from the value tests :func:`is_unknown` first."""
    return default if is_unknown(value) else value


def unknown_paths(value: Any, path: str = "") -> Iterator[str]:
    """The dotted path of every unknown value inside ``value`` (``spec.devices.requests[0].count``)."""
    if is_unknown(value):
        yield path or "."
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from unknown_paths(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from unknown_paths(item, f"{path}[{index}]")


def has_unknown(value: Any) -> bool:
    return next(unknown_paths(value), None) is not None


def dig_known(node: Any, *path: str | int) -> tuple[bool, Any]:
    """``(True, node[path...])``, ``(True, None)`` when a step is absent, ``(False, where)`` when a step on the way
    is unknown (``where``: the dotted path up to it)."""
    walked = ""
    for key in path:
        if is_unknown(node):
            return False, walked or "."
        if isinstance(key, int):
            if not isinstance(node, list) or key >= len(node):
                return True, None
            walked += f"[{key}]"
        else:
            if not isinstance(node, Mapping) or key not in node:
                return True, None
            walked += f".{key}" if walked else key
        node = node[key]
    if is_unknown(node):
        return False, walked or "."
    return True, node


def outputs_unknown(props: Mapping[str, Any] | None, type_: str) -> bool:
    """Whether a resource's properties are unknown as a whole: a provider resource (``pkg:module:Type``, not a
    component of this project) with no property at all is one whose provider was not configured during the
    preview, and the engine hands a stack policy its empty outputs (pulumi v3.274.1,
    ``sdk/go/common/resource/plugin/provider_plugin.go``, ``Create``: an unconfigured provider's preview returns
    an empty property map). A Kubernetes object, a Helm release or a cloud resource always has properties
    once they are known."""
    if props:
        return False
    package = type_.split(":", 1)[0]
    return package not in ("pulumi", "gpu-fungibility", "") and type_.count(":") >= 2


class NotJudged(UnknownValueError):
    """Raised at the end of a rule that could not judge everything: the runtime reports it as an advisory."""

    def __init__(self, items: list[str]):
        super().__init__(_proxy.UNKNOWN_STRING_VALUE, [])
        self.items = items
        self.message = "not judged until known: " + "; ".join(items)

    def __str__(self) -> str:
        return self.message


class Pending:
    """What one run of a rule could not judge while values are unknown; :meth:`finish` reports it (advisory)."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, what: str, where: str) -> None:
        """``what`` (the unknown value, or the decision it blocks) of ``where`` (the resource) is not judged."""
        item = f"{what} of {where}"
        if item not in self.items:
            self.items.append(item)

    def add_outputs(self, title: str, urn: str) -> None:
        self.add("every property (unknown until its provider is configured)", f"{title} ({urn})")

    def __bool__(self) -> bool:
        return bool(self.items)

    def finish(self) -> None:
        """Raise :class:`NotJudged` naming everything pending (nothing when all was judged)."""
        if self.items:
            raise NotJudged(self.items)
