"""Kubernetes versions: DRA (``resource.k8s.io/v1``) is GA from 1.34, so nothing older is accepted."""

import re

MIN_KUBERNETES_VERSION = "1.34"
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
