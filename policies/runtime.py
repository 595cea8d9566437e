"""One decoding of a resource's properties per analyzer call, shared by every policy of the pack.

The Python policy runtime (pulumi-policy 1.21, ``policy.py``, ``Analyze`` and ``AnalyzeStack``) decodes a
resource's properties again for each policy: ``json_format.MessageToDict``, ``deserialize_properties``,
``unknown_checking_proxy``, and builds its options and provider, once per policy and resource. With sixteen policies, ten of them over the
whole stack, that decoding is most of the pack's time on a large preview (about 1 ms per resource and stack
policy for a Deployment), and grows with the number of policies as well as with the stack.

:func:`install` keeps, for the length of one ``Analyze`` or ``AnalyzeStack`` call, what those functions
(and the servicer's ``_get_resource_options`` and ``_get_provider_resource``) returned for each input object, so the second and later policies get the very same decoded
properties (and :func:`shared` lets the pack's own conversions, such as ``stack_view.plain``, do the same).
The inputs are held until the call ends, so an object's id is never reused within it. Nothing changes in
what a policy sees: the same values, read-only by this pack's rules (they copy them with ``plain``). On a
runtime without these names (another pulumi-policy layout) nothing is installed and the pack runs as before.
"""

from __future__ import annotations

import functools
import gc
import math
import threading
from collections.abc import Callable
from typing import Any

_calls = threading.local()
_MARK = "_gpu_fungibility_shared_decoding"
_NEEDED = ("json_format", "deserialize_properties", "unknown_checking_proxy", "_PolicyAnalyzerServicer")
#: The servicer's per-resource helpers (options, provider), also called once per policy and resource.
_PER_RESOURCE = ("_get_resource_options", "_get_provider_resource")


def shared(function: Callable[[Any], Any], value: Any) -> Any:
    """``function(value)``, computed once per input object within one analyzer call (plainly outside one)."""
    cache = getattr(_calls, "cache", None)
    if cache is None:
        return function(value)
    key = (function, id(value))
    hit = cache.get(key)
    if hit is not None and hit[0] is value:
        return hit[1]
    result = function(value)
    cache[key] = (value, result)
    return result


def _memoized(function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def wrapper(value: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs:
            return function(value, *args, **kwargs)
        return shared(function, value)

    return wrapper


def _memoized_method(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(self: Any, message: Any) -> Any:
        return _shared_method(method, self, message)

    return wrapper


def _shared_method(method: Callable[..., Any], owner: Any, message: Any) -> Any:
    cache = getattr(_calls, "cache", None)
    if cache is None:
        return method(owner, message)
    key = (method, id(message))
    hit = cache.get(key)
    if hit is not None and hit[0] is message:
        return hit[1]
    result = method(owner, message)
    cache[key] = (message, result)
    return result


def _provider_by_content(method: Callable[..., Any]) -> Callable[..., Any]:
    """``_get_provider_resource`` decoding each distinct provider once per call, whichever resource carries it.

    Every resource of a request carries its provider's whole resource (type, URN, name, properties); a stack
    has a handful of providers, so AnalyzeStack decoded the same provider properties once per resource. The
    same bytes give the same provider, which the policies only read.
    """
    @functools.wraps(method)
    def wrapper(self: Any, message: Any) -> Any:
        cache = getattr(_calls, "cache", None)
        if cache is None or not message.HasField("provider"):
            return method(self, message)
        key = ("provider", message.provider.SerializeToString(deterministic=True))
        hit = cache.get(key)
        if hit is None:
            hit = cache[key] = (method(self, message),)
        return hit[0]

    return wrapper


class _Converted:
    """``MessageToDict``'s result on its way to ``deserialize_properties`` (kept only until then)."""

    __slots__ = ("message", "value")

    def __init__(self, message: Any, value: Any) -> None:
        self.message, self.value = message, value


class _Decoded:
    """A message already decoded in this call: ``deserialize_properties`` hands back its result."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class _JsonFormat:
    """The runtime's ``json_format`` module whose ``MessageToDict``, within a call, converts a message once.

    Inside ``Analyze`` and ``AnalyzeStack`` the runtime only ever passes ``MessageToDict``'s result to
    ``deserialize_properties``; the pair is shared per message, and the intermediate dictionary is dropped
    as soon as it is deserialized (only the deserialized properties are kept for the call).
    """

    def __init__(self, module: Any) -> None:
        self._module = module
        self._generic = module.MessageToDict

    def _convert(self, message: Any, *args: Any, **kwargs: Any) -> Any:
        if not args and not kwargs and getattr(message, "DESCRIPTOR", None) is not None \
                and message.DESCRIPTOR.full_name == "google.protobuf.Struct":
            return struct_to_dict(message)
        return self._generic(message, *args, **kwargs)

    def MessageToDict(self, message: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 (the module's name)
        cache = getattr(_calls, "cache", None)
        if cache is None or args or kwargs:
            return self._convert(message, *args, **kwargs)
        hit = cache.get(("decoded", id(message)))
        if hit is not None and hit[0] is message:
            return _Decoded(hit[1])
        return _Converted(message, self._convert(message))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)


def struct_to_dict(struct: Any) -> dict[str, Any]:
    """``json_format.MessageToDict`` of a ``google.protobuf.Struct``, without its generic printer.

    protobuf's printer (json_format.py, pure Python under every backend) dispatches on descriptors for each
    value; a resource's properties are a Struct of nested Values only, whose JSON form is fixed by the proto3
    JSON mapping: null -> None, number -> float (infinity and NaN refused, as the printer refuses them), string,
    bool, struct -> dict, list -> list. The same result, several times faster (tests/test_policy_runtime.py
    compares them on every shipped plan's resources).
    """
    return {key: _value(value) for key, value in struct.fields.items()}


def _value(value: Any) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        return value.string_value
    if kind == "struct_value":
        return {key: _value(item) for key, item in value.struct_value.fields.items()}
    if kind == "list_value":
        return [_value(item) for item in value.list_value.values]
    if kind == "bool_value":
        return value.bool_value
    if kind == "number_value":
        number = value.number_value
        if math.isinf(number) or math.isnan(number):
            raise ValueError(f"Fail to serialize {number} for Value.number_value, which would parse as string_value")
        return number
    return None


def _deserializing(function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def wrapper(value: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(value, _Decoded):
            return value.value
        if isinstance(value, _Converted):
            result = function(value.value, *args, **kwargs)
            cache = getattr(_calls, "cache", None)
            if cache is not None and not args and not kwargs:
                cache[("decoded", id(value.message))] = (value.message, result)
            return result
        return function(value, *args, **kwargs)

    return wrapper


class _CollectorPaused:
    """The cyclic garbage collector held off while any analyzer call runs (calls may overlap on threads).

    A call allocates a few objects per property of every resource it reads (the decoded values, their
    proxies, the rules' plain copies) and keeps them until it returns, so the heap grows with the stack; each
    automatic collection then traverses that heap again, which made AnalyzeStack's time grow faster than the
    stack (about half its time at 10,000 resources). What a call leaves is freed by reference counting when
    it returns (the per-call cache is dropped); the collector is switched back on (if it was on) when the last
    running call ends, and then finds any cycles as before.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._was_enabled = False

    def __enter__(self) -> None:
        with self._lock:
            if self._running == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._running += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._running -= 1
            if self._running == 0 and self._was_enabled:
                gc.enable()


_collector_paused = _CollectorPaused()


def _one_cache_per_call(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(self: Any, request: Any, context: Any) -> Any:
        with _collector_paused:
            _calls.cache = {}
            try:
                return method(self, request, context)
            finally:
                _calls.cache = None

    return wrapper


def install() -> bool:
    """Share decoding in this process's policy runtime; False when its layout is not the one known."""
    from pulumi_policy import policy as runtime

    if getattr(runtime, _MARK, False):
        return True
    if not all(hasattr(runtime, name) for name in _NEEDED):
        return False
    runtime.json_format = _JsonFormat(runtime.json_format)
    runtime.deserialize_properties = _deserializing(runtime.deserialize_properties)
    runtime.unknown_checking_proxy = _memoized(runtime.unknown_checking_proxy)
    servicer = runtime._PolicyAnalyzerServicer
    if hasattr(servicer, "_get_provider_resource"):
        servicer._get_provider_resource = _provider_by_content(servicer._get_provider_resource)
    for name in _PER_RESOURCE:
        if hasattr(servicer, name):
            setattr(servicer, name, _memoized_method(getattr(servicer, name)))
    servicer.Analyze = _one_cache_per_call(servicer.Analyze)
    servicer.AnalyzeStack = _one_cache_per_call(servicer.AnalyzeStack)
    setattr(runtime, _MARK, True)
    return True
