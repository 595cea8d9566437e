"""What the Helm-based components share: pinned chart arguments, the release, the namespace."""

from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from .base import Issues, LibraryComponent


class ChartArgs(TypedDict):
    """The chart arguments every Helm-based component takes (its own defaults are the pinned chart)."""

    chart: NotRequired[str]
    """The chart reference (default: the component's pinned OCI chart)."""
    version: NotRequired[str]
    """The exact chart version (default: the pinned one)."""
    repository: NotRequired[str]
    """The chart repository, for a chart that is not an ``oci://`` reference."""
    values: NotRequired[dict[str, Any]]
    """Chart values merged over the library's (Helm's merge: a null deletes a default)."""


def chart_issues(args: Mapping[str, Any]) -> Issues:
    """A chart is an ``oci://`` reference or comes with its repository, and is pinned to a version."""
    issues: Issues = []
    chart = str(args.get("chart") or "")
    if chart and not (chart.startswith("oci://") or args.get("repository")):
        issues.append(("chart", "use an oci:// chart reference or set repository"))
    if "version" in args and not str(args["version"]).strip():
        issues.append(("version", "pin an exact chart version"))
    return issues


def privileged_namespace(parent: LibraryComponent, name: str, namespace: str) -> k8s.core.v1.Namespace:
    """A driver's own namespace; its pods mount host paths, so Pod Security enforces ``privileged``."""
    return k8s.core.v1.Namespace(
        f"{name}-namespace",
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=namespace, labels={"pod-security.kubernetes.io/enforce": "privileged"}),
        opts=parent.child(),
    )


def helm_release(parent: LibraryComponent, name: str, release_name: str, *, chart: str, version: str,
                 repository: str | None, namespace: pulumi.Input[str], values: Any,
                 depends_on: Sequence[pulumi.Resource] = (), **options: Any) -> k8s.helm.v3.Release:
    """A pinned release with a fixed name (no random suffix) in ``namespace``."""
    return k8s.helm.v3.Release(
        f"{name}-release",
        k8s.helm.v3.ReleaseArgs(
            name=release_name,
            chart=chart,
            version=version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=repository) if repository else None,
            namespace=namespace,
            values=values,
            **options,
        ),
        opts=parent.child(depends_on=list(depends_on)),
    )
