"""Broken stacks for the rehearsal, seeded into a shipped stack's loaded scenario (the plan and its plugins).

Each seed breaks one promise the way a real mistake would: a values override that drops the device plugin's
DRA exclusion, a claim selector no real device matches, a serving pod asking for more than a node has.
"""

from __future__ import annotations

from rehearse import cluster
from rehearse.scenario import Scenario

#: A product no catalog accelerator has: no ResourceSlice device matches it.
MISSING_PRODUCT = "NVIDIA B999-NONEXISTENT"


def device_plugin_on_dra_pool(s: Scenario) -> Scenario:
    """The device plugin placed everywhere (its DRA exclusion dropped, every taint tolerated)."""
    plugin = next(p for p in s.plugins if p.kind in cluster.DEVICE_PLUGINS)
    spec = plugin.daemonset["spec"]["template"]["spec"]
    spec.pop("affinity", None)
    spec.pop("nodeSelector", None)
    spec["tolerations"] = [{"operator": "Exists"}]
    return s


def selector_matches_nothing(s: Scenario, workload: str) -> Scenario:
    """Every claim alternative of the workload's template asks for a product no node publishes."""
    template_name = s.deployment(workload).obj["spec"]["template"]["spec"]["resourceClaims"][0][
        "resourceClaimTemplateName"]
    template = next(m.obj for m in s.manifests
                    if m.obj["kind"] == "ResourceClaimTemplate" and m.obj["metadata"]["name"] == template_name)
    for request in template["spec"]["spec"]["devices"]["requests"]:
        for option in request.get("firstAvailable") or [request.get("exactly") or {}]:
            option["selectors"] = [{"cel": {"expression":
                                            f"device.attributes['gpu.nvidia.com'].productName == '{MISSING_PRODUCT}'"}}]
    return s


def request_larger_than_node(s: Scenario, workload: str, cpu: str = "1000") -> Scenario:
    """The serving container asks for more CPU than any node of the stack has."""
    container = s.deployment(workload).obj["spec"]["template"]["spec"]["containers"][0]
    container.setdefault("resources", {}).setdefault("requests", {})["cpu"] = cpu
    return s
