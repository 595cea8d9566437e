"""Each cloud's support calendar per Kubernetes minor, and whether it serves DRA there: cited, dated data.

The clouds publish these dates; they move. :data:`AS_OF` says when they were read, :data:`REVIEW_BY` when they
must be read again (after that date ``make lint`` warns and the weekly calendar-review workflow fails, so a
stale calendar cannot quietly refuse or admit a minor; ``make test`` never reads today's date).

- ``standard_support_ends``: the first day a minor is no longer in the cloud's standard support. A stack on a
  minor past it is refused (policy ``kubernetes-version-supported``); within :data:`ADVISORY_DAYS` of it, warned.
  Where a cloud gives only a month, the first day of that month is used (the earlier date: an upgrade planned
  against it is never late).
- DRA availability: ``on`` (served by default: resource.k8s.io/v1 and DynamicResourceAllocation on),
  ``off`` (a source says the cloud does not enable it), ``unconfirmed`` (no source either way).

A GKE cluster in a release channel is upgraded to the channel's default minor when ``minMasterVersion`` is
below it: :func:`effective_minor` is the minor the simulator and the rehearsal model. Support is judged on the
minor the cluster is *created* with, alike on every cloud: pulumi-gcp sends ``minMasterVersion`` as the
cluster's ``initialClusterVersion``, EKS ``version`` and AKS ``kubernetesVersion`` are the create version
(:func:`create_minor`).

Each cloud's rows live in its folder (``clouds/<cloud>/calendar.py``, the profile's ``support_calendar`` and,
for a cloud with release channels, ``channel_default_minor``); this module asks the registered clouds.

A minor more than one past every cloud's newest minor in :func:`calendar` is offered by no cloud (as read on
:data:`AS_OF`): :func:`unoffered_minor_problem` refuses it. The next minor after the newest, and a minor newer
than one cloud's newest entry but not than all, are only warned (the upstream release and a cloud's rapid
channel or preview may come before the calendar is read again).
"""

import datetime as dt
from collections.abc import Mapping
from typing import Literal, NamedTuple

from .errors import UnknownCloudError

#: When every cloud's calendar was read from its sources.
AS_OF = dt.date(2026, 11, 26)
#: Read every source again by this date; ``tools/calendar_review.py`` warns (make lint) and fails (weekly CI) after it.
REVIEW_BY = dt.date(2027, 1, 15)
#: A minor whose standard support ends within this many days gets an advisory.
ADVISORY_DAYS = 90

DraState = Literal["on", "off", "unconfirmed"]


class MinorSupport(NamedTuple):
    """One minor on one cloud."""

    standard_support_ends: dt.date
    dra: DraState
    support_source: str
    dra_source: str


def calendar() -> dict[str, Mapping[str, MinorSupport]]:
    """Every registered cloud's calendar by cloud: each cloud keeps its rows in its folder
    (``clouds/<cloud>/calendar.py``) and its profile's ``support_calendar``."""
    from . import clouds

    return {name: clouds.profile(name).support_calendar for name in clouds.names()}


def _rows(cloud: str) -> Mapping[str, MinorSupport]:
    """The cloud's calendar; empty for a cloud the registry does not know (nothing is dated there)."""
    from . import clouds

    try:
        return clouds.profile(cloud).support_calendar
    except UnknownCloudError:
        return {}


def _channel_defaults(cloud: str) -> Mapping[str, str]:
    from . import clouds

    try:
        return clouds.profile(cloud).channel_default_minor
    except UnknownCloudError:
        return {}


def _key(minor: str) -> tuple[int, int]:
    major, minor_part = minor.split(".")[:2]
    return int(major), int(minor_part)


def minor_of(version: str) -> str:
    """``"1.35"`` for ``"1.35.4-gke.100"``, ``"v1.35"`` or ``"1.35"``."""
    return ".".join(str(version).lstrip("v").split("-")[0].split(".")[:2])


def effective_minor(cloud: str, version: str, release_channel: str | None = None) -> str:
    """The minor the cluster will run: in a cloud's release channel (GKE), never below the channel's default."""
    minor = minor_of(version)
    default = _channel_defaults(cloud).get((release_channel or "").upper())
    if default and _key(default) > _key(minor):
        return default
    return minor


def create_minor(version: str) -> str:
    """The minor a cluster is created with: the pinned version's (``"1.34"`` for ``"1.34.6-gke.1307000"``), on
    every cloud; a release channel's default does not raise it (see the module's docstring)."""
    return minor_of(version)


def newest_minor(cloud: str | None = None) -> str:
    """The newest minor the calendar dates for ``cloud`` (any cloud when None)."""
    minors = [m for c, entries in calendar().items() if cloud in (None, c) for m in entries]
    return max(minors, key=_key)


def unoffered_minor_problem(cloud: str, version: str) -> str | None:
    """Why no cloud offers this version's minor (more than one past every cloud's newest calendar entry), or
    None."""
    minor = minor_of(version)
    newest = _key(newest_minor())
    try:
        too_new = _key(minor) > (newest[0], newest[1] + 1)
    except ValueError:
        return None
    if not too_new:
        return None
    own = newest_minor(cloud)
    return (f"Kubernetes {minor} is offered by no cloud: the newest minor in the support calendar (read {AS_OF}) "
            f"is {newest_minor()}, and {cloud.upper()}'s newest is {own}; write \"{own}\" (quoted)")


def support(cloud: str, minor: str) -> MinorSupport | None:
    """The calendar entry, or None when no source dates this minor on this cloud."""
    return _rows(cloud).get(minor_of(minor))


def support_problem(cloud: str, minor: str, today: dt.date) -> str | None:
    """Why this minor is past the end of standard support on this cloud (a refusal), or None."""
    entry = support(cloud, minor)
    if entry and today >= entry.standard_support_ends:
        return (f"Kubernetes {minor} on {cloud.upper()} left standard support on {entry.standard_support_ends} "
                f"({entry.support_source}): move to a supported minor")
    return None


def support_advisories(cloud: str, minor: str, today: dt.date) -> list[str]:
    """Warnings about this minor on this cloud: standard support ending soon, no dated source, DRA unconfirmed."""
    entry = support(cloud, minor)
    if entry is None:
        return [f"no cited support calendar entry for Kubernetes {minor} on {cloud.upper()} "
                f"(components/support_calendar.py, read {AS_OF}): check the cloud's calendar before relying on it"]
    notes = []
    left = (entry.standard_support_ends - today).days
    if 0 < left <= ADVISORY_DAYS:
        notes.append(f"Kubernetes {minor} on {cloud.upper()} leaves standard support on "
                     f"{entry.standard_support_ends}, in {left} days: plan the upgrade")
    if entry.dra == "unconfirmed":
        notes.append(f"DRA on {cloud.upper()} {minor} is unconfirmed: {entry.dra_source}; `make verify` checks "
                     f"that resource.k8s.io/v1 is served before anything else")
    return notes


def dra_problem(cloud: str, minor: str) -> str | None:
    """Why DRA cannot be used on this cloud and minor (a source says it is off), or None."""
    entry = support(cloud, minor)
    if entry and entry.dra == "off":
        return f"{cloud.upper()} does not serve DRA at Kubernetes {minor}: {entry.dra_source}"
    return None
