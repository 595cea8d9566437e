"""Whether the support calendar (components/support_calendar.py) is due for review: a warning, never a test.

The calendar's dates were read from the clouds on ``AS_OF`` and must be read again by ``REVIEW_BY``. Someone who
just cloned the repository must not get a red ``make test`` because a date passed, so this is not a test:
``make lint`` prints the warning and goes on; the scheduled workflow (.github/workflows/calendar-review.yml)
runs ``python -m tools.calendar_review --strict``, which exits 1 once the review is due, so a maintainer hears
of it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys


def review_problem(today: dt.date, as_of: dt.date, review_by: dt.date) -> str | None:
    """Why the calendar needs reading again on ``today``, or None."""
    if today > review_by:
        return (f"components/support_calendar.py was read on {as_of} and is due for review since {review_by}: "
                "read every cited source again, update the dates (components/clouds/<cloud>/calendar.py), then "
                "move REVIEW_BY")
    if as_of > today:
        return f"components/support_calendar.py says it was read on {as_of}, after today ({today}): fix AS_OF"
    return None


def main(argv: list[str] | None = None, today: dt.date | None = None) -> int:
    from gpu_fungibility import support_calendar as cal

    parser = argparse.ArgumentParser(prog="python -m tools.calendar_review", description=__doc__.split("\n")[0])
    parser.add_argument("--strict", action="store_true", help="exit 1 when the review is due (scheduled CI)")
    args = parser.parse_args(argv)
    problem = review_problem(today or dt.date.today(), cal.AS_OF, cal.REVIEW_BY)
    if problem:
        print(f"{'error' if args.strict else 'warning'}: {problem}", file=sys.stderr)
    return 1 if problem and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
