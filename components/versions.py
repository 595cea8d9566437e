"""Kubernetes versions: DRA (``resource.k8s.io/v1``) is GA from 1.34, so nothing older is accepted."""

import re

MIN_KUBERNETES_VERSION = "1.34"
#: The version a cluster component is created with when none is given: a minor every cloud still supports in
#: its calendar (support_calendar: 1.34 left standard support on GKE 2026-10-01 and AKS 2026-11-01), judged as
#: the create version on every cloud. The stack config's default is this one too.
DEFAULT_KUBERNETES_VERSION = "1.35"
_MIN = (1, 34)
_VERSION = re.compile(r"(\d+)\.(\d+)(\.\d+)?(-gke\.\d+)?")


def kubernetes_version_problem(value: str) -> str | None:
    """Why ``value`` is not an acceptable cluster version, or None."""
    match = _VERSION.fullmatch(str(value))
    if not match:
        return f"{value!r} is not a Kubernetes version such as \"1.34\""
    if (int(match.group(1)), int(match.group(2))) < _MIN:
        return f"{value} is too old: DRA (resource.k8s.io/v1) needs Kubernetes 1.34 or later"
    return None


def minor_version(value: str) -> str:
    """``"1.34"`` for ``"1.34.1-gke.100"``."""
    return ".".join(str(value).split("-")[0].split(".")[:2])


def later_all_takes_the_first_alternative(minor: str | tuple[int, int] | None) -> bool:
    """Whether Kubernetes at ``minor`` allocates an ``All`` subrequest after the first of its ``firstAvailable``
    list with the first subrequest's count and selectors (simulator/allocator.py,
    ``_take_all_later_subrequest``): a TPU alternative (``All`` chips) that is not the first never gets a node.

    k8s.io/dynamic-resource-allocation v0.34.4 and v0.35.4 recurse in ``allocateOne``'s ``All`` branch without
    ``subRequestIndex`` (structured/internal/incubating/allocator_incubating.go:866 in v0.34.4, :906 in v0.35.4);
    v0.36.3 passes it on. With 1.34's and 1.35's default feature gates the scheduler runs the ``incubating``
    allocator, not ``stable``: structured/allocator.go picks the first implementation whose SupportedFeatures
    cover the enabled ones, and ``stable``'s are empty (allocator_stable.go: ``SupportedFeatures =
    internal.Features{}``) while DRAPrioritizedList, on by default, needs ``incubating``. Unknown minors (None)
    are taken to have the quirk, the side on which a claim is not promised a pool.
    """
    if minor is None:
        return True
    major_minor = minor if isinstance(minor, tuple) else tuple(int(x) for x in str(minor).lstrip("v").split(".")[:2])
    return major_minor < (1, 36)


#: The DRA feature gates whose default differs between the supported minors, with the first minor that turns each
#: on by default. Read from k8s.io/kubernetes pkg/features/kube_features.go at the pinned patches
#: (rehearse/harness/versions.json): DRAPartitionableDevices is alpha, off, in v1.34.4 (line 1223) and v1.35.4
#: (line 1252) and beta, on, in v1.36.3 (lines 1387-1390); DRADeviceTaints is alpha, off, in v1.34.4 (line 1215)
#: and v1.35.4 (line 1244) and beta, on, in v1.36.3 (lines 1369-1372); DRAPrioritizedList is beta, on, from 1.34
#: (v1.34.4 line 1227). DRADeviceTaintRules (DeviceTaintRule objects) stays off in v1.36.3 (beta, default false,
#: lines 1364-1367) and is not modelled. Checked against the Go sources by tests/test_dra_feature_gates.py where
#: the module cache holds them.
DRA_FEATURE_GATES_ON_FROM: dict[str, tuple[int, int]] = {
    "DRAPrioritizedList": (1, 34),
    "DRAPartitionableDevices": (1, 36),
    "DRADeviceTaints": (1, 36),
}


def dra_feature_enabled(gate: str, minor: str | tuple[int, int] | None) -> bool:
    """Whether ``gate`` is on by default at Kubernetes ``minor`` (``"1.36"``, ``"v1.36.3"``, ``(1, 36)``).

    With a gate off the API server drops the gated fields when it stores an object (a device's
    ``consumesCounters`` and ``taints``, a slice's ``sharedCounters``, a request's ``tolerations``), so the
    allocator never sees them. An unknown minor (None) is taken to have every gate on: the features only ever
    refuse a device, so that side promises no placement a cluster with them would refuse.
    """
    if minor is None:
        return True
    major_minor = minor if isinstance(minor, tuple) else tuple(int(x) for x in str(minor).lstrip("v").split(".")[:2])
    return major_minor >= DRA_FEATURE_GATES_ON_FROM[gate]
