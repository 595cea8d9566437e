"""``dra-kubernetes-version`` (resource): DRA (resource.k8s.io/v1) needs Kubernetes 1.34 or later.

Checks the GKE cluster's ``minMasterVersion`` (``latest`` is accepted; unset
leaves the version to the release channel's default, which may be older), a
GKE node pool's ``version`` when set, the EKS cluster's ``version``, the AKS cluster's
``kubernetesVersion`` and an AKS agent pool's ``orchestratorVersion`` when set.
"""

from __future__ import annotations

import re

from pulumi_policy import ReportViolation, ResourceValidationArgs

from .. import cloud_parts
from ..stack_view import UNKNOWN, plain
from ..unknowns import NotJudged, is_unknown

MIN_VERSION = (1, 34)
_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:-[0-9A-Za-z.-]+)?$")


def parse_minor(version: str) -> tuple[int, int] | None:
    match = _VERSION.match(version.strip())
    return (int(match.group(1)), int(match.group(2))) if match else None


def version_problem(version: object, field: str, required: bool) -> str | None:
    """Why this version field is unacceptable for DRA, or None."""
    if version in (None, ""):
        if not required:
            return None
        return (f"{field} is not set, so the version is whatever the platform defaults to, which may be older than "
                f"{MIN_VERSION[0]}.{MIN_VERSION[1]}; set it to {MIN_VERSION[0]}.{MIN_VERSION[1]} or later")
    text = str(version)
    if text == UNKNOWN or text.lower() == "latest":
        return None
    minor = parse_minor(text)
    if minor is None:
        return f"{field} {text!r} is not a Kubernetes version such as \"1.34\""
    if minor < MIN_VERSION:
        return (f"{field} is {text}: DRA (resource.k8s.io/v1, firstAvailable) needs Kubernetes "
                f"{MIN_VERSION[0]}.{MIN_VERSION[1]} or later")
    return None


def validate_kubernetes_version(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    cluster_of, pool_of = cloud_parts.cloud_of_cluster(args.resource_type), cloud_parts.cloud_of_pool(args.resource_type)
    if cluster_of:  # a cluster says its version; a pool may
        field, required = cloud_parts.part(cluster_of).CLUSTER_VERSION, True
    elif pool_of and cloud_parts.part(pool_of).POOL_VERSION:
        field, required = cloud_parts.part(pool_of).POOL_VERSION, False
    else:
        return
    version = plain(args.props).get(field)
    if is_unknown(version):
        raise NotJudged([f"{field} of {args.name} ({args.urn})"])
    problem = version_problem(version, field, required)
    if problem:
        report_violation(problem, None)
