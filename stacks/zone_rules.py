"""Zones against the cluster's region and the recorded zonal offerings, offline (each cloud profile's
``zone_findings``; the data and its sources are in each cloud's folder, gpu_fungibility.clouds.<cloud>.regions).

A region the cloud does not have (``cluster.location``) is an error, and so is a GKE zone outside
the cluster's region (GKE places node locations in the cluster's region only); EKS and AKS refuse
zones in their own composition rules. A zone the recorded data does not list, or a pool whose TPU or
GPU machine is not offered in its region or zones as recorded, is a warning: the data is dated, and
``make preflight`` reads the live offering.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpu_fungibility import clouds

if TYPE_CHECKING:
    from stacks.config import StackConfig

Issues = list[tuple[str, str]]


def zone_issues(cfg: StackConfig) -> Issues:
    return _findings(cfg)[0]


def zone_warnings(cfg: StackConfig) -> list[str]:
    return _findings(cfg)[1]


def _findings(cfg: StackConfig) -> tuple[Issues, list[str]]:
    zoned = [(f"cluster.zones[{i}]", z) for i, z in enumerate(cfg.cluster.zones)]
    for name, pool in cfg.node_pools.items():
        zoned += [(f"nodePools.{name}.zones[{i}]", z) for i, z in enumerate(pool.zones or [])
                  if z not in cfg.cluster.zones]  # a pool's zones must be cluster zones: reported once
    pools = [(name, pool.accelerator.type, list(pool.zones or cfg.cluster.zones), pool.zones is not None,
              [pool.machine_type] if pool.machine_type else list(pool.instance_types or []))
             for name, pool in cfg.node_pools.items()]
    return clouds.profile(cfg.cluster.cloud).zone_findings(cfg.cluster.location, zoned, pools)
