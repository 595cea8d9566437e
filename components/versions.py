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
