"""The NVIDIA device plugin, kept off every DRA node (seed 004).

It is only installed when some GPU pool has ``dra: false`` (a classic group
whose pods request ``nvidia.com/gpu``). The AL2023 NVIDIA AMI ships the driver
but no device plugin, so this release is what serves those groups. Its node
affinity is the chart's own three ways of recognising a GPU node, each ANDed
with ``nvidia.com/gpu.dra NotIn [true]``: the device plugin and the DRA
kubelet plugin must never manage the same GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components import dra_wiring
from stacks.config import HelmChart

#: The chart's default GPU-node recognisers (discrete GPU via NFD, Tegra, forced label).
GPU_NODE_EXPRESSIONS: tuple[dict[str, Any], ...] = (
    {"key": "feature.node.kubernetes.io/pci-10de.present", "operator": "In", "values": ["true"]},
    {"key": "feature.node.kubernetes.io/cpu-model.vendor_id", "operator": "In", "values": ["NVIDIA"]},
    {"key": dra_wiring.GPU_PRESENT, "operator": "In", "values": ["true"]},
)
EXCLUDE_DRA_NODES: dict[str, Any] = {"key": dra_wiring.GPU_DRA, "operator": "NotIn", "values": ["true"]}
VALUES_PATH = "drivers.nvidiaDevicePlugin.values"


def merge_values(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Helm-style merge: maps merge key by key, anything else in ``override`` replaces.

    Neither input is changed; leaves (which may be Pulumi Outputs) are shared, not copied.
    """
    merged = {key: _copy_tree(value) for key, value in base.items()}
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge_values(merged[key], value)
        else:
            merged[key] = _copy_tree(value)
    return merged


def _copy_tree(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_tree(v) for v in value]
    return value


def device_plugin_values(chart: HelmChart) -> dict[str, Any]:
    """The chart values: seed 004's affinity and a toleration for the GPU taint, under the stack's extras."""
    project = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [dict(expr), dict(EXCLUDE_DRA_NODES)]} for expr in GPU_NODE_EXPRESSIONS
                    ],
                },
            },
        },
        "tolerations": [{"key": dra_wiring.GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}],
    }
    return merge_values(project, chart.values)


def dra_exclusion_issues(values: dict[str, Any]) -> list[tuple[str, str]]:
    """Problems when the (merged) values would let the device plugin onto a DRA node.

    Every required node-affinity term must exclude ``nvidia.com/gpu.dra=true``
    (``NotIn [true]`` or ``DoesNotExist``), since terms are ORed.
    """
    terms = (
        values.get("affinity", {}) or {}
    ).get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution", {}).get("nodeSelectorTerms")
    if not terms:
        return [(f"{VALUES_PATH}.affinity", "the device plugin needs a required node affinity that excludes "
                                            f"{dra_wiring.GPU_DRA}=true; without one it runs on DRA nodes too")]
    issues = []
    for i, term in enumerate(terms):
        exprs = term.get("matchExpressions") or []
        if not any(_excludes_dra(e) for e in exprs):
            issues.append((
                f"{VALUES_PATH}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
                f".nodeSelectorTerms[{i}]",
                f"does not exclude {dra_wiring.GPU_DRA}=true (add {{key: {dra_wiring.GPU_DRA}, operator: NotIn, "
                "values: ['true']}); the device plugin would run beside the DRA kubelet plugin",
            ))
    return issues


def _excludes_dra(expr: dict[str, Any]) -> bool:
    if expr.get("key") != dra_wiring.GPU_DRA:
        return False
    op = expr.get("operator")
    return op == "DoesNotExist" or (op == "NotIn" and "true" in (expr.get("values") or []))


@dataclass
class NvidiaDevicePluginArgs:
    """``chart`` is ``drivers.nvidiaDevicePlugin`` (pinned; its ``values`` merge over the project's)."""

    chart: HelmChart


class NvidiaDevicePlugin(pulumi.ComponentResource):
    """Namespace and ``helm.v3.Release`` of the NVIDIA device plugin for classic GPU groups."""

    namespace: k8s.core.v1.Namespace
    release: k8s.helm.v3.Release

    def __init__(self, name: str, args: NvidiaDevicePluginArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-fungibility:device_plugin:NvidiaDevicePlugin", name, None, opts)
        from stacks.loader import ConfigError

        values = device_plugin_values(args.chart)
        issues = dra_exclusion_issues(values)
        if issues:
            raise ConfigError(issues)
        self.namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            # The plugin mounts host paths (kubelet device-plugin socket): privileged by Pod Security.
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=args.chart.namespace, labels={"pod-security.kubernetes.io/enforce": "privileged"}
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.release = k8s.helm.v3.Release(
            f"{name}-release",
            k8s.helm.v3.ReleaseArgs(
                name="nvidia-device-plugin",
                chart=args.chart.chart,
                version=args.chart.version,
                repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=args.chart.repo) if args.chart.repo else None,
                namespace=self.namespace.metadata.name,
                values=values,
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"namespace": self.namespace.metadata.name, "release": self.release.name})
