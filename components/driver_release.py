"""What the DRA driver components share: their arguments, checks, building steps and outputs.

A DRA driver here is a pinned Helm chart whose kubelet plugin runs on the nodes of some accelerator pools
and tolerates each of their taints. :class:`DriverRelease` builds it in one order: the privileged
namespace, whatever must exist before the chart (:meth:`~DriverRelease.before_release`), the release,
whatever guards it (:meth:`~DriverRelease.after_release`). A driver says only what is its own:

- ``RELEASE_NAME``, ``CHART``, ``VERSION``, ``NAMESPACE``: the release's fixed name and the pinned chart;
- :meth:`~DriverRelease.chart_values`: the library's values for the pools' taints (the caller's values
  and the chart's image pins are merged over them);
- :meth:`~DriverRelease.own_issues`: checks of its own arguments, if any;
- its Args, a :class:`DriverReleaseArgs` with the fields of its own, and an ``__init__`` taking them.
"""

from collections.abc import Sequence
from typing import Any, NotRequired

import pulumi
import pulumi_kubernetes as k8s

from . import helm_values, images
from .base import Issues, LibraryComponent, resolved
from .node_selection import NodeTaint
from .pool_args import Taint, taint_issues, taints_of
from .releases import ChartArgs, chart_issues, helm_release, privileged_namespace


def kubelet_plugin_affinity(accelerator_label: str, driver_label: str) -> dict[str, Any]:
    """A required node affinity for a kubelet plugin: nodes with ``accelerator_label`` (any value) whose
    ``driver_label`` is ``true``, the labels the library puts on the pools the driver serves."""
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{
                    "matchExpressions": [
                        {"key": accelerator_label, "operator": "Exists"},
                        {"key": driver_label, "operator": "In", "values": ["true"]},
                    ],
                }],
            },
        },
    }


class DriverReleaseArgs(ChartArgs):
    """What every DRA driver release takes: its pinned chart, its namespace and the taints of its pools."""

    node_taints: NotRequired[pulumi.Input[list[Taint]]]
    """Every taint on the nodes of the pools it serves (their ``node_taints`` outputs): the kubelet plugin
    tolerates each one explicitly."""
    namespace: NotRequired[str]
    """The namespace the stack creates for the driver (default: the chart's name)."""


class DriverRelease(LibraryComponent):
    """Base of the DRA driver components (see the module's docstring for what a driver supplies)."""

    RELEASE_NAME = ""
    CHART = ""
    VERSION = ""
    NAMESPACE = ""

    namespace: pulumi.Output[str]
    """The driver's namespace."""
    release_name: pulumi.Output[str]
    """The Helm release's name."""
    values: pulumi.Output[dict[str, Any]]
    """The values the release was given."""

    def __init__(self, name: str, args: DriverReleaseArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, opts, args)
        chart, version = args.get("chart", self.CHART), args.get("version", self.VERSION)
        extra = helm_values.merge(images.chart_image_values(chart, version), args.get("values"))
        values = resolved(args.get("node_taints", []),
                          lambda taints: self.chart_values(args, taints_of(taints), extra))
        namespace = privileged_namespace(self, name, args.get("namespace", self.NAMESPACE))
        before = self.before_release(name, args, namespace)
        release = helm_release(
            self, name, self.RELEASE_NAME, chart=chart, version=version, repository=args.get("repository"),
            namespace=namespace.metadata.name, values=values, depends_on=before,
            create_namespace=False, allow_null_values=True)  # null removes a chart default
        self.after_release(name, namespace.metadata.name, values)
        self.namespace = namespace.metadata.name
        self.release_name = release.name
        self.values = pulumi.Output.from_input(values)
        self.register()

    @classmethod
    def issues(cls, name: str, args: Any) -> Issues:
        issues = chart_issues(dict(args)) + cls.own_issues(args)
        taints = args.get("node_taints")
        if isinstance(taints, list):
            issues += taint_issues(taints, "node_taints")
        return issues

    @classmethod
    def own_issues(cls, args: Any) -> Issues:
        """Problems with the driver's own arguments (none by default)."""
        return []

    def chart_values(self, args: Any, taints: Sequence[NodeTaint], extra: dict[str, Any]) -> dict[str, Any]:
        """The release's values: the library's for ``taints`` with ``extra`` merged over them."""
        raise NotImplementedError

    def before_release(self, name: str, args: Any, namespace: k8s.core.v1.Namespace) -> list[pulumi.Resource]:
        """Resources the release waits for (none by default)."""
        return []

    def after_release(self, name: str, namespace: pulumi.Input[str], values: Any) -> None:
        """Resources that go with the release (none by default)."""
