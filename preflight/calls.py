"""Network calls with a deadline, bounded retries and clear errors: the one layer every preflight uses.

A preflight makes every cloud call through one :class:`Calls` object::

    calls = Calls(CallPolicy(run_seconds=120, call_seconds=20))
    body = calls.run("compute regions.get us-central1", fetch, parse=parse_region, needs="compute.regions.get")

- ``fetch(seconds)`` does one attempt of the call and must finish within ``seconds`` (pass it on as the
  socket or SDK timeout). It returns the raw answer (``None`` is allowed: "not found"), or raises
  :class:`CallError` with a ``kind`` when the cloud refused (the client adapter of each cloud does
  that: :mod:`preflight.google_api`, :mod:`preflight.aws_calls`). Any other exception becomes kind
  ``failed``.
- The attempt runs in a daemon thread that the caller waits for at most ``seconds``: a reply that
  trickles one byte at a time, or an SDK that retries on its own, cannot hold the run past its deadline
  (a socket timeout alone only bounds the gap between two bytes).
- ``parse(raw)`` turns the answer into what the preflight reads. Any ``ValueError``, ``TypeError``,
  ``KeyError``, ``IndexError`` or ``AttributeError`` it raises (truncated JSON, a list where an object
  belongs, ``"limit": "lots"``) becomes a ``malformed`` :class:`CallError` naming the call.
- :func:`http_error` maps an HTTP status (with ``Retry-After``) to a CallError for any REST adapter.
- Kinds ``throttled`` (429, AWS throttling codes) and ``server`` (5xx) are retried, at most
  ``attempts`` tries in all, after ``Retry-After`` when the cloud sent one, else after an exponential
  backoff (``backoff_seconds`` x 2^n, at most ``backoff_cap_seconds``); never past the run's deadline.
- ``call_seconds`` bounds each attempt, ``run_seconds`` the whole run: once it has passed, every further
  call fails at once with kind ``timeout``, so the preflight still prints what it has.

Every failure is also kept in :attr:`Calls.failures` and every answer counted in :attr:`Calls.answered`,
so a command can tell "some optional signal could not be read" (warnings, exit 0 or 1) from "nothing
could be checked" (exit 2). Kinds ``credentials`` and ``disabled`` (the API is off for the project) are
``fatal``: the caller stops the run, since no other call can succeed either.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

#: The kinds of :class:`CallError`.
DENIED, CREDENTIALS, DISABLED = "denied", "credentials", "disabled"
THROTTLED, SERVER, TIMEOUT, UNREACHABLE, MALFORMED, FAILED = (
    "throttled", "server", "timeout", "unreachable", "malformed", "failed")
RETRIED_KINDS = frozenset({THROTTLED, SERVER})
FATAL_KINDS = frozenset({CREDENTIALS, DISABLED})
PARSE_ERRORS = (ValueError, TypeError, KeyError, IndexError, AttributeError)


class CallError(Exception):
    """One call gave no usable answer. ``str()`` names the call, says why, and what it needs."""

    def __init__(self, kind: str, detail: str, *, call: str = "", needs: str = "",
                 retry_after: float | None = None):
        super().__init__(detail)
        self.kind, self.detail, self.call, self.needs, self.retry_after = kind, detail, call, needs, retry_after

    @property
    def fatal(self) -> bool:
        return self.kind in FATAL_KINDS

    def __str__(self) -> str:
        needs = f" (needs {self.needs})" if self.needs and self.kind == DENIED else ""
        return f"{self.call}: {self.detail}{needs}" if self.call else f"{self.detail}{needs}"


@dataclass(frozen=True)
class CallPolicy:
    """Deadlines (seconds) and retries. Defaults suit a person or a CI job waiting on the preflight."""

    run_seconds: float = 120.0
    call_seconds: float = 20.0
    attempts: int = 4
    backoff_seconds: float = 0.5
    backoff_cap_seconds: float = 8.0

    def backoff(self, retry: int) -> float:
        """Wait before retry number ``retry`` (0 for the first retry)."""
        return min(self.backoff_cap_seconds, self.backoff_seconds * 2 ** retry)


@dataclass
class Calls:
    """Runs calls under one :class:`CallPolicy`; the run's deadline starts when this object is made."""

    policy: CallPolicy = field(default_factory=CallPolicy)
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    answered: int = 0
    failures: list[CallError] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.deadline = self.clock() + self.policy.run_seconds

    def remaining(self) -> float:
        return self.deadline - self.clock()

    def run(self, call: str, fetch: Callable[[float], Any], parse: Callable[[Any], T] | None = None,
            *, needs: str = "") -> T:
        """``parse(fetch(seconds))`` within the deadlines, retried as the module docstring says."""
        retry = 0
        while True:
            error = self._attempt(call, fetch, parse)
            if not isinstance(error, CallError):
                self.answered += 1
                return error
            error.call, error.needs = error.call or call, error.needs or needs
            if error.kind in RETRIED_KINDS:
                if retry + 1 >= self.policy.attempts:
                    error.detail += f" (gave up after {retry + 1} attempts)"
                else:
                    wait = error.retry_after if error.retry_after is not None else self.policy.backoff(retry)
                    if wait < self.remaining():
                        self.sleep(max(wait, 0.0))
                        retry += 1
                        continue
                    error.detail += f" (a retry in {wait:g} s would pass the run's {self.policy.run_seconds:g} s " \
                                    "deadline)"
            self.failures.append(error)
            raise error

    def _attempt(self, call: str, fetch: Callable[[float], Any], parse: Callable[[Any], T] | None) -> Any:
        seconds = min(self.policy.call_seconds, self.remaining())
        if seconds <= 0:
            return CallError(TIMEOUT, f"not made: the run's {self.policy.run_seconds:g} s deadline has passed")
        try:
            raw = within(seconds, fetch)
        except CallError as exc:
            return exc
        except TimeoutError:
            return CallError(TIMEOUT, f"no complete answer within {seconds:g} s")
        except Exception as exc:  # noqa: BLE001 - any failure of one call is reported, never a traceback
            return CallError(FAILED, f"{type(exc).__name__}: {first_line(exc)}")
        if parse is None:
            return raw
        try:
            return parse(raw)
        except PARSE_ERRORS as exc:
            return CallError(MALFORMED, f"malformed answer ({type(exc).__name__}: {first_line(exc)})")


def within(seconds: float, fetch: Callable[[float], T]) -> T:
    """``fetch(seconds)`` in a daemon thread; TimeoutError when it has not returned after ``seconds``."""
    outcome: dict[str, Any] = {}
    done = threading.Event()

    def attempt() -> None:
        try:
            outcome["value"] = fetch(seconds)
        except BaseException as exc:  # noqa: BLE001 - handed back to the waiting thread
            outcome["error"] = exc
        finally:
            done.set()

    threading.Thread(target=attempt, name="preflight-call", daemon=True).start()
    if not done.wait(seconds):
        raise TimeoutError(f"no answer within {seconds:g} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def http_error(status: int, said: str, headers: dict[str, str] | None = None) -> CallError:
    """The :class:`CallError` for an HTTP status any REST API may answer (429, 5xx, 401, 403, others).

    ``said`` is what the service said (status and message); ``Retry-After`` is taken from ``headers``.
    Cloud adapters refine it where their API says more (a disabled API, a throttling error code).
    """
    retry_after = retry_after_seconds({k.lower(): v for k, v in (headers or {}).items()}.get("retry-after"))
    if status == 429:
        return CallError(THROTTLED, f"throttled ({said})", retry_after=retry_after)
    if status >= 500:
        return CallError(SERVER, f"server error ({said})", retry_after=retry_after)
    if status == 401:
        return CallError(CREDENTIALS, f"credentials refused ({said})")
    if status == 403:
        return CallError(DENIED, f"permission denied ({said})")
    return CallError(FAILED, f"unexpected answer ({said})")


def retry_after_seconds(value: str | None) -> float | None:
    """``Retry-After`` in seconds (RFC 9110 allows seconds or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    text = value.strip()
    if text.isascii() and text.isdigit():
        return float(text)
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())


#: The longest ``--deadline`` / ``--call-timeout`` a command takes, in seconds.
MAX_SECONDS = 3600.0


def seconds_argument(text: str) -> float:
    """``argparse`` type for ``--deadline`` and ``--call-timeout``: a finite number of seconds in
    (0, :data:`MAX_SECONDS`]; ``nan``, ``inf``, ``0``, ``-1`` or a word is a usage error (exit 2)."""
    import argparse
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or not 0 < value <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and {MAX_SECONDS:g} seconds")
    return value


def first_line(exc: BaseException) -> str:
    text = str(exc.args[0]) if exc.args else str(exc)
    return (text.splitlines() or [type(exc).__name__])[0][:300]


def number(value: Any, what: str) -> float:
    """A quota or shape figure from a reply; ValueError (so: a malformed answer) when it is not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"{what} is {value!r}, not a number")
    try:
        parsed = float(value)
    except ValueError:
        raise ValueError(f"{what} is {value!r}, not a number") from None
    if parsed != parsed or parsed in (float("inf"), float("-inf")):
        raise ValueError(f"{what} is {value!r}, not a finite number")
    return parsed


def mapping(value: Any, what: str) -> dict[str, Any]:
    """A JSON object from a reply; TypeError (a malformed answer) for a list, string or null."""
    if not isinstance(value, dict):
        raise TypeError(f"{what} is a {type(value).__name__}, not an object")
    return value
