"""The cache of one analyzer call: what its policies share, computed once per input object.

:mod:`policies.runtime` wraps pulumi-policy's ``Analyze`` and ``AnalyzeStack`` with :func:`one_cache_per_call`
and routes the runtime's decoding through :func:`shared`, so the second and later policies of a call get the
very objects the first got; the pack's own conversions (``stack_view.plain``, the stack's index) use
:func:`shared` too. Outside a call (the rules' unit tests, or the runtime as it ships) :func:`shared` just
computes. The inputs are held until the call ends, so an object's id is never reused within it. Nothing here
touches pulumi-policy.
"""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Callable
from typing import Any

from .read_only import Watch

_calls = threading.local()


def current() -> dict[Any, Any] | None:
    """The running call's cache on this thread (None outside a call)."""
    return getattr(_calls, "cache", None)


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
    watch(function, result)
    return result


def watch(what: Any, value: Any) -> None:
    """Record a value shared between the call's policies (``what`` made it: a function, or its name), when the
    call is checked (:mod:`policies.read_only`)."""
    checking = getattr(_calls, "watch", None)
    if checking is not None:
        function = getattr(what, "func", what)  # a functools.partial: the function it calls
        checking.add(what if isinstance(what, str) else getattr(function, "__name__", repr(function)), value)


def memoized(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` computed once per call for each object it is given alone (with more arguments, each time)."""
    @functools.wraps(function)
    def wrapper(value: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs:
            return function(value, *args, **kwargs)
        return shared(function, value)

    return wrapper


def memoized_method(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method(self, message)`` computed once per call for each message."""
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
    watch(method, result)
    return result


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


def one_cache_per_call(method: Callable[..., Any], checked: bool = False) -> Callable[..., Any]:
    """The call with its own cache of what its policies share; ``checked``: failing when a policy changed any
    of it (:mod:`policies.read_only`)."""
    @functools.wraps(method)
    def wrapper(self: Any, request: Any, context: Any) -> Any:
        with _collector_paused:
            _calls.cache = {}
            _calls.watch = Watch() if checked else None
            try:
                response = method(self, request, context)
                if _calls.watch is not None:
                    _calls.watch.verify()
                return response
            finally:
                _calls.cache = _calls.watch = None

    return wrapper
