"""``kubernetes-version-supported`` (mandatory) and ``kubernetes-version-advisories`` (advisory), per cluster.

The minor a cluster is created with, read from the cluster resource alike on every cloud (GKE:
``minMasterVersion``, which pulumi-gcp sends as ``initialClusterVersion``; EKS: ``version``; AKS:
``kubernetesVersion``; a GKE release channel's higher default does not excuse an old pin), against the cited calendar in
:mod:`gpu_fungibility.support_calendar`: refused past the end of the cloud's standard support or where a source
says the cloud does not serve DRA at that minor; warned within 90 days of that end, where no source dates the
minor, and where DRA is unconfirmed. An EKS cluster that leaves ``upgradePolicy.supportType`` unset (EKS's
default is EXTENDED) is warned about the extended-support price.

Both rules depend on the date: the same plan passes today and is refused the day its minor leaves standard
support. They judge against :func:`judge_date`: the rule's ``judgeDate`` config (``YYYY-MM-DD``, e.g. in
``policies/config/<stack>.json`` to hold a CI run to one date), else the environment's
``GPU_FUNGIBILITY_JUDGE_DATE`` (the test suite sets it to the calendar's ``AS_OF``), else today.
"""

from __future__ import annotations

import datetime as dt

from gpu_fungibility.support_calendar import (
    create_minor,
    dra_problem,
    effective_minor,
    minor_of,
    support_advisories,
    support_problem,
)
from pulumi_policy import ReportViolation, ResourceValidationArgs

from .. import cloud_parts
from ..call_cache import shared
from ..stack_view import UNKNOWN, dig, plain
from ..unknowns import NotJudged, is_unknown
from .versions import MIN_VERSION

#: The environment variable that fixes the date when the rule's config does not.
JUDGE_DATE_ENV = "GPU_FUNGIBILITY_JUDGE_DATE"


def judge_date(config: object = None, environ: object = None) -> dt.date:
    """The date support is judged on: ``judgeDate`` in the rule's config, else :data:`JUDGE_DATE_ENV`, else
    today. ValueError names the setting when it is not a ``YYYY-MM-DD`` date."""
    import os

    given = (config or {}).get("judgeDate") if isinstance(config, dict) else None
    source = "judgeDate"
    if not given:
        given, source = (os.environ if environ is None else environ).get(JUDGE_DATE_ENV), JUDGE_DATE_ENV
    if not given:
        return dt.date.today()
    try:
        return dt.date.fromisoformat(str(given))
    except ValueError:
        raise ValueError(f"{source} {given!r} is not a date (YYYY-MM-DD)") from None


def _today(args: ResourceValidationArgs, today: dt.date | None, report_violation: ReportViolation) -> dt.date | None:
    if today is not None:
        return today
    try:
        return judge_date(args.get_config())
    except ValueError as exc:
        report_violation(str(exc), None)
        return None


def cluster_minor(resource_type: str, props: dict, created: bool = False) -> tuple[str, str] | None:
    """``(cloud, minor)`` the cluster resource will run (``created``: the minor it is created with), or None when
    it is not a cluster or not known yet."""
    cloud = cloud_parts.cloud_of_cluster(resource_type)
    if cloud is None:
        return None
    reads = cloud_parts.part(cloud)
    version = props.get(reads.CLUSTER_VERSION)
    channel = dig(props, *reads.RELEASE_CHANNEL) if reads.RELEASE_CHANNEL else None
    if not isinstance(version, str) or version in ("", UNKNOWN) or version.lower() == "latest":
        return None
    minor = minor_of(version)
    if not minor.replace(".", "").isdigit() or tuple(int(p) for p in minor.split(".")[:2]) < MIN_VERSION:
        return None  # not a version, or below 1.34: dra-kubernetes-version refuses it
    if created:
        return cloud, create_minor(version)
    return cloud, effective_minor(cloud, version, channel if isinstance(channel, str) else None)


def validate_version_supported(args: ResourceValidationArgs, report_violation: ReportViolation,
                               today: dt.date | None = None) -> None:
    if cloud_parts.cloud_of_cluster(args.resource_type) is None:  # before reading the properties: most are not
        return
    props = shared(plain, args.props)
    found = cluster_minor(args.resource_type, props, created=True)
    if found is None:
        _not_judged_while_unknown(args, props)
        return
    cloud, minor = found
    when = _today(args, today, report_violation)
    for problem in (when and support_problem(cloud, minor, when), dra_problem(cloud, minor)):
        if problem:
            report_violation(problem, None)


def _version_fields(resource_type: str) -> tuple[tuple[str, ...], ...]:
    """Where a cluster of this type says its version (and its release channel, where it has one)."""
    reads = cloud_parts.part(str(cloud_parts.cloud_of_cluster(resource_type)))
    return ((reads.CLUSTER_VERSION,), *((reads.RELEASE_CHANNEL,) if reads.RELEASE_CHANNEL else ()))


def _not_judged_while_unknown(args: ResourceValidationArgs, props: dict) -> None:
    """A cluster whose version is unknown during the preview: NotJudged (advisory), not a pass."""
    for path in _version_fields(args.resource_type):
        node: object = props
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if is_unknown(node):
            raise NotJudged([f"{'.'.join(path)} of {args.name} ({args.urn})"])


def validate_version_advisories(args: ResourceValidationArgs, report_violation: ReportViolation,
                                today: dt.date | None = None) -> None:
    cloud = cloud_parts.cloud_of_cluster(args.resource_type)
    if cloud is None:
        return
    props = shared(plain, args.props)
    found = cluster_minor(args.resource_type, props, created=True)
    if found is None:
        return
    cloud, minor = found
    when = _today(args, today, report_violation)
    for note in support_advisories(cloud, minor, when) if when else []:
        report_violation(note, None)
    for note in cloud_parts.part(cloud, "rules").cluster_advisories(args, props):
        report_violation(note, None)
