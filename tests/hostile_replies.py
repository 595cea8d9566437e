"""Hostile cloud answers, one table for every preflight: each cloud's tests turn a row into its wire format.

A row says what the cloud does to one call (status, body, Retry-After, a trickling body) and what the
preflight must make of it: the :class:`preflight.calls.CallError` kind that names the call, or, for
``recovers`` rows, the ordinary result after a retry. A new cloud's preflight renders each ``body``
in its own protocol (JSON for Compute, XML for EC2, JSON 1.1 for Service Quotas) and runs the table.

Bodies: ``answer`` (a good answer), ``truncated`` (a good answer cut in half), ``list`` (a JSON list or
an XML element of the wrong shape where an object belongs), ``non-numeric`` (a figure such as a quota
limit that is not a number), ``html`` (a proxy's error page), ``empty``, ``error`` (the cloud's error
document for the status).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from preflight.calls import DENIED, MALFORMED, SERVER, THROTTLED, TIMEOUT, CallPolicy


@dataclass(frozen=True)
class HostileReply:
    name: str
    status: int = 200
    body: str = "answer"
    retry_after: str | None = None
    trickle: bool = False  # the body arrives one byte at a time, far too slowly
    recovers: bool = False  # the next attempt gets a good answer
    kind: str = ""  # the CallError kind when it does not recover

    @property
    def id(self) -> str:
        return self.name.replace(" ", "-")


HOSTILE_REPLIES = (
    HostileReply("truncated answer", body="truncated", kind=MALFORMED),
    HostileReply("list where an object belongs", body="list", kind=MALFORMED),
    HostileReply("non-numeric figure", body="non-numeric", kind=MALFORMED),
    HostileReply("empty 200", body="empty", kind=MALFORMED),
    HostileReply("429 every time", status=429, body="error", kind=THROTTLED),
    HostileReply("503 every time", status=503, body="error", kind=SERVER),
    HostileReply("html 502 from a proxy", status=502, body="html", kind=SERVER),
    HostileReply("429 with Retry-After past the deadline", status=429, body="error", retry_after="3600",
                 kind=THROTTLED),
    HostileReply("429 then an answer", status=429, body="error", recovers=True),
    HostileReply("503 with Retry-After 0 then an answer", status=503, body="error", retry_after="0", recovers=True),
    HostileReply("access denied", status=403, body="error", kind=DENIED),
    HostileReply("trickling answer", trickle=True, kind=TIMEOUT),
)

#: What the report says for each kind (the call's name comes first).
KIND_TEXT = {
    THROTTLED: "throttled (",
    SERVER: "server error (",
    MALFORMED: "malformed answer",
    TIMEOUT: "no complete answer within",
    DENIED: "(needs ",
}

def names_call(text: str, call: str, kind: str) -> bool:
    """``text`` says ``call`` failed the way ``kind`` reads (the kind's words follow the call's name)."""
    start = text.find(call + ": ")
    return start >= 0 and KIND_TEXT[kind] in text[start:start + 600]


#: Deadlines and backoffs for the table: generous per call (a loaded CI machine still answers a loopback call
#: in time), tight for the trickling row, whose only way out is the per-call deadline.
TEST_POLICY = CallPolicy(run_seconds=6.0, call_seconds=2.0, attempts=3, backoff_seconds=0.01,
                         backoff_cap_seconds=0.02)
TRICKLE_POLICY = CallPolicy(run_seconds=6.0, call_seconds=0.5, attempts=3, backoff_seconds=0.01,
                            backoff_cap_seconds=0.02)


def policy_for(row: HostileReply) -> CallPolicy:
    return TRICKLE_POLICY if row.trickle else TEST_POLICY


TRICKLE_SECONDS = 0.05  # between two bytes: well under the per-call timeout, so only a deadline stops it
HTML_PAGE = b"<html><head><title>502 Bad Gateway</title></head><body>upstream timed out</body></html>"


def scripted_replies(row: HostileReply, good: dict, figures: list[tuple[str, ...]], error_body: bytes,
                     reply: Callable[..., Any]) -> list[Any]:
    """The row as a REST API answers it, in a loopback fake's ``reply(status, body, headers, trickle)`` type.

    ``good`` is the real answer, ``figures`` the paths to numbers in it (``"lots"`` replaces them in the
    non-numeric row), ``error_body`` what the API sends with an error status.
    """
    text = json.dumps(good).encode()
    bodies = {
        "answer": text,
        "truncated": text[: len(text) // 2],
        "list": json.dumps([good]).encode(),
        "non-numeric": json.dumps(with_value(good, figures, "lots")).encode(),
        "html": HTML_PAGE,
        "empty": b"",
        "error": error_body,
    }
    headers = {"Retry-After": row.retry_after} if row.retry_after is not None else {}
    if row.body == "html":
        headers["Content-Type"] = "text/html"
    first = reply(row.status, bodies[row.body], headers, TRICKLE_SECONDS if row.trickle else 0.0)
    return [first, reply(200, text)] if row.recovers else [first]


def with_value(body: dict, paths: list[tuple[str, ...]], value: object) -> dict:
    """A copy of ``body`` with ``value`` at every path (list indexes as digit strings)."""
    copy = json.loads(json.dumps(body))
    for path in paths:
        target = copy
        for key in path[:-1]:
            target = target[int(key)] if isinstance(target, list) else target[key]
        target[path[-1]] = value
    return copy
