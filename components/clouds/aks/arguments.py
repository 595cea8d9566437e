"""AKS's documented limits on a pool's and a cluster's arguments, and Azure's name rules (see
:mod:`gpu_fungibility.argument_rules` for the rules every cloud shares)."""

import re
from collections.abc import Mapping
from typing import Any

from ...argument_rules import at_most
from ...base import Issues

#: Nodes in one AKS node pool (Virtual Machine Scale Sets): 1,000 (learn.microsoft.com/azure/aks/
#: quotas-skus-regions, "Service quotas and limits": "Maximum nodes per node pool ... 1,000").
MAX_NODES_PER_POOL = 1_000
#: An AKS node's OS disk: 0 (the size's default) to 2,048 GB (Microsoft.ContainerService API,
#: ``ContainerServiceOSDisk``: minimum 0, maximum 2048; Azure/bicep-types-az generated/containerservice
#: ``osDiskSizeGB: int {minValue: 0, maxValue: 2048}``).
MAX_OS_DISK_GB = 2_048
#: A resource group name: 1-90 characters, letters, digits, ``_``, ``-``, ``.``, ``(`` and ``)``, not ending
#: with a period (learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules,
#: Microsoft.Resources ``resourcegroups``; letters and digits include Unicode ones: ``^[-\w._()]+$``).
RESOURCE_GROUP_MAX = 90
_RESOURCE_GROUP = re.compile(r"[-\w.()]+")
#: An Azure VM size name as the SKU list spells them: ``Standard_D4ds_v5``, ``Standard_NC24ads_A100_v4``.
_VM_SIZE = re.compile(r"(Standard|Basic)_[A-Za-z0-9]+(_[A-Za-z0-9]+)*")


def pool_limit_issues(args: Mapping[str, Any], prefix: str = "") -> Issues:
    """AKS's own limits on a pool: at most 1,000 nodes, an OS disk of at most 2,048 GB."""
    issues = [(f"{prefix}{key}", text) for key, text in at_most(
        args, "max_nodes", MAX_NODES_PER_POOL, ": an AKS node pool holds at most 1,000 nodes")]
    issues += [(f"{prefix}{key}", text) for key, text in at_most(
        args, "disk_size_gb", MAX_OS_DISK_GB, " GB: an AKS OS disk is at most 2,048 GB")]
    return issues


def vm_size_issues(value: Any, key: str) -> Issues:
    """A VM size must be spelled as Azure's SKU list spells one (``Standard_D4ds_v5``)."""
    if isinstance(value, str) and _VM_SIZE.fullmatch(value):
        return []
    return [(key, f"{value!r} is not an Azure VM size (such as Standard_D4ds_v5); `az vm list-sizes -l <region>` "
                  "lists them")]


def resource_group_name_issues(value: Any, key: str) -> Issues:
    """An Azure resource group name: 1-90 letters, digits, ``_-.()``, not ending with a period."""
    if not isinstance(value, str):
        return []  # an Output: the resource group was built under a checked name
    if not 1 <= len(value) <= RESOURCE_GROUP_MAX or not _RESOURCE_GROUP.fullmatch(value) or value.endswith("."):
        return [(key, f"{value[:100]!r} is not a resource group name: 1-90 letters, digits, '_', '-', '.', '(' or "
                      "')', not ending with '.'")]
    return []
