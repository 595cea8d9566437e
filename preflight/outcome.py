"""How a preflight run ends, the same on every cloud: exit codes, the one message when nothing could be
checked, and the list of calls that gave no usable answer."""

from __future__ import annotations

import sys

from preflight.calls import Calls

EXIT_OK, EXIT_NOT_SERVED, EXIT_CANNOT_CHECK = 0, 1, 2
MAX_LISTED = 8  # failed calls listed when nothing could be checked


def exit_code(checks: list) -> int:
    """1 when some pool is not served, else 0."""
    return EXIT_NOT_SERVED if any(c.verdict == "fail" for c in checks) else EXIT_OK


def nothing_answered(calls: Calls) -> bool:
    """Every call failed: not one signal was read (exit 2, not a report of warnings)."""
    return calls.answered == 0 and bool(calls.failures)


def nothing_checked(service: str, calls: Calls, needs: str) -> str:
    shown = list(dict.fromkeys(str(f) for f in calls.failures))
    more = f"\n  ... and {len(shown) - MAX_LISTED} more" if len(shown) > MAX_LISTED else ""
    return (f"preflight: nothing could be checked: no call to {service} was answered.\n"
            + "\n".join(f"  - {line}" for line in shown[:MAX_LISTED]) + more
            + f"\nThe preflight needs {needs}.")


def print_unanswered(calls: Calls) -> None:
    if calls.failures:
        print(f"{len(calls.failures)} call(s) gave no usable answer; what they feed is marked 'not checked' above:")
        for failure in dict.fromkeys(str(f) for f in calls.failures):
            print(f"  - {failure}")


def fail(message: str) -> int:
    """Say why nothing could be checked, on stderr; exit 2."""
    print(message, file=sys.stderr)
    return EXIT_CANNOT_CHECK
