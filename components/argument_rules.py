"""Range and name rules of the components' arguments, each in one place.

The stack config used to check these itself; a program using the library directly got none of
them (``disk_size_gb=-5``, ``replicas=-3``, ``port=70000`` reached the provider or the cluster).
Each rule is a small function returning ``(argument path, message)`` pairs, called by the
component whose argument it is; the stack config reports them with its own key paths.
"""

import ipaddress
import re
from collections.abc import Mapping
from typing import Any

from .base import Issues

#: A Kubernetes namespace is an RFC 1123 label (k8s.io/apimachinery validation IsDNS1123Label).
DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
#: The smallest boot disk the project gives an accelerator node: the node image plus a vLLM or
#: driver image of several GB each (the stack config's floor since its first release; GKE's own
#: minimum is 10 GB, NodeConfig.diskSizeGb).
MIN_DISK_SIZE_GB = 50
#: Devices one ResourceClaim can hold: resource.k8s.io/v1 ``AllocationResultsMaxSize`` = 32
#: (kubernetes/api resource/v1/types.go); an allocation needing more is refused by the API server.
MAX_DEVICES_PER_CLAIM = 32


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def at_least(args: Mapping[str, Any], key: str, low: int, what: str = "") -> Issues:
    """``args[key]``, when given, is a number >= ``low``."""
    value = _number(args.get(key))
    if value is None or value >= low:
        return []
    return [(key, f"{value!r} is below {low}{what}")]


def port_issues(value: Any, path: str) -> Issues:
    number = _number(value)
    if number is None or 1 <= number <= 65535:
        return []
    return [(path, f"{value!r} is not a port: use 1-65535")]


def disk_size_issues(args: Mapping[str, Any]) -> Issues:
    return at_least(args, "disk_size_gb", MIN_DISK_SIZE_GB, " GB; accelerator nodes get at least "
                                                            f"{MIN_DISK_SIZE_GB} GB of boot disk")


def namespace_issues(namespace: Any, key: str = "namespace") -> Issues:
    if isinstance(namespace, str) and DNS1123_LABEL.fullmatch(namespace):
        return []
    return [(key, f"{namespace!r} is not a namespace name: 1-63 lowercase letters, digits and '-', "
                  "starting and ending with a letter or digit")]


def workload_number_issues(args: Mapping[str, Any]) -> Issues:
    """replicas >= 0, ports 1-65535, max_model_len >= 1, gpu_memory_utilization in (0, 1]."""
    issues = at_least(args, "replicas", 0) + at_least(args, "max_model_len", 1, " tokens")
    issues += port_issues(args.get("port"), "port")
    issues += port_issues((args.get("service") or {}).get("port"), "service.port")
    for i, server in enumerate(args.get("mig_servers") or []):
        if isinstance(server, Mapping):
            issues += port_issues(server.get("port"), f"mig_servers[{i}].port")
            if not DNS1123_LABEL.fullmatch(str(server.get("name", ""))):
                issues.append((f"mig_servers[{i}].name", f"{server.get('name')!r} is not a container name: "
                                                         "lowercase letters, digits and '-'"))
    share = _number(args.get("gpu_memory_utilization"))
    if share is not None and not 0 < share <= 1:
        issues.append(("gpu_memory_utilization", f"{share!r} is not a share of GPU memory: use a number "
                                                 "above 0 and at most 1 (vLLM's default is 0.9)"))
    return issues


def device_count_issues(count: Any, path: str) -> Issues:
    """A claim's device count: at least 1, at most :data:`MAX_DEVICES_PER_CLAIM`."""
    number = _number(count)
    if number is None:
        return []
    if number < 1:
        return [(path, "must be 1 or more")]
    if number > MAX_DEVICES_PER_CLAIM:
        return [(path, f"{number} devices in one claim; Kubernetes allocates at most {MAX_DEVICES_PER_CLAIM} "
                       "devices per claim (AllocationResultsMaxSize)")]
    return []


#: A cluster name: 1-40 characters, a lowercase letter first, then lowercase letters, digits and '-', not
#: ending in '-'. GKE's limit (Container API ``Cluster.name``: "must start with a letter, up to 40 lowercase
#: letters, numbers or hyphens, not ending with a hyphen") is the strictest of the three clouds (EKS allows
#: 100 characters, AKS 63), and the name prefixes the names of what the stack builds for the cluster.
CLUSTER_NAME = re.compile(r"[a-z]([-a-z0-9]{0,38}[a-z0-9])?")
#: The smallest boot disk of a system (CPU) node: the node image plus the controllers' images (the stack
#: config's floor since its first release; GKE's own minimum is 10 GB, NodeConfig.diskSizeGb).
MIN_SYSTEM_DISK_SIZE_GB = 20


def cluster_name_issues(name: Any, key: str = "name") -> Issues:
    if isinstance(name, str) and CLUSTER_NAME.fullmatch(name):
        return []
    return [(key, f"{name!r} is not a cluster name: 1-40 lowercase letters, digits and '-', starting with a "
                  "letter and not ending with '-'")]


def non_empty_issues(args: Mapping[str, Any], key: str, what: str) -> Issues:
    """``args[key]``, when given as text, is not empty."""
    value = args.get(key)
    if not isinstance(value, str) or value.strip():
        return []
    return [(key, f"is empty: name the {what}")]


def system_pool_issues(pool: Any, key: str) -> Issues:
    """A cluster's system pool (under ``key``): min_nodes >= 1, max_nodes >= 1, min_nodes <= max_nodes,
    disk_size_gb >= :data:`MIN_SYSTEM_DISK_SIZE_GB`. The controllers (DNS, the DRA controller, the
    autoscaler) need at least one node to run on."""
    if not isinstance(pool, Mapping):
        return []
    issues = [(f"{key}.{path}", message) for path, message in
              at_least(pool, "min_nodes", 1, ": the controllers need a node to run on")
              + at_least(pool, "max_nodes", 1, ": the controllers need a node to run on")
              + at_least(pool, "disk_size_gb", MIN_SYSTEM_DISK_SIZE_GB, " GB")]
    low, high = _number(pool.get("min_nodes", 1)), _number(pool.get("max_nodes", 3))
    if low is not None and high is not None and low > high:
        issues.append((f"{key}.min_nodes", f"{low!r} is greater than max_nodes ({high!r})"))
    return issues


def cluster_cidr_issues(value: Any, path: str, max_prefix: int = 20) -> Issues:
    """A cluster range (Pods, Services): a CIDR block of /``max_prefix`` or larger."""
    if not isinstance(value, str):
        return []
    try:
        net = ipaddress.ip_network(value, strict=True)
    except ValueError as exc:
        return [(path, f"{value!r} is not a CIDR block such as 10.0.0.0/16 ({exc})")]
    if net.prefixlen > max_prefix:
        return [(path, f"{value} is too small for a cluster; use a /{max_prefix} or larger")]
    return []


def at_most(args: Mapping[str, Any], key: str, high: int, what: str = "") -> Issues:
    value = _number(args.get(key))
    if value is not None and value > high:
        return [(key, f"{args.get(key)!r} is more than {high:,}{what}")]
    return []
