"""The plan summary's node sizes: per workload and pool, what one node offers and what a replica takes.

The figures are the library's model (:func:`gpu_fungibility.sizing.node_room`, the same the serving
requests, the simulator and the policy pack use): capacity is the node's reported memory (below the
machine's nominal), allocatable what the cloud leaves of it, "kept" what the cloud's system pods and
the stack's DaemonSets take.
"""

from typing import Any

from gpu_fungibility import catalog, sizing

from stacks import arguments


def _gib(mib: int) -> str:
    return f"{mib / 1024:.1f} GiB"


def _cores(millicores: int) -> str:
    return f"{millicores / 1000:g}"


def _replica_requests(objects: list[dict[str, Any]], name: str) -> tuple[int, int] | None:
    """The CPU and memory one pod of the workload's Deployment requests (its containers summed)."""
    for obj in objects:
        if obj.get("kind") != "Deployment" or obj.get("metadata", {}).get("name") != name:
            continue
        cpu = memory = 0
        for container in obj["spec"]["template"]["spec"].get("containers", []):
            requests = (container.get("resources") or {}).get("requests") or {}
            cpu += sizing.parse_cpu(str(requests["cpu"])) if requests.get("cpu") else 0
            memory += sizing.parse_memory(str(requests["memory"])) if requests.get("memory") else 0
        return cpu, memory
    return None


def render(cfg: Any, objects: list[dict[str, Any]]) -> str:
    rows = []
    for name, wl in sorted(cfg.workloads.items()):
        requests = _replica_requests(objects, name)
        pods = arguments.pods_per_node(cfg, name)
        for pool_name in cfg.placement_pools(wl):
            pool = cfg.node_pools[pool_name]
            for machine in arguments.machine_types(cfg, pool_name):
                room = sizing.node_room(cfg.cluster.cloud, machine, pool.family, pool.dra)
                host = catalog.host_shape(machine)
                if room is None or host is None:
                    rows.append(f"| {name} | {pool_name} | {machine} | (not in the catalog) | | | | |")
                    continue
                taken = "-"
                if requests:
                    share = requests[1] * pods / room.allocatable[1]
                    each = f"{pods} x " if pods > 1 else ""
                    taken = (f"{each}{_cores(requests[0])} CPU, {_gib(requests[1])} "
                             f"({share:.0%} of allocatable memory)")
                rows.append(
                    f"| {name} | {pool_name} | {machine} | {host.vcpus} CPU, {host.memory_gib:g} GiB "
                    f"| {_gib(room.capacity[1])} | {_cores(room.allocatable[0])} CPU, {_gib(room.allocatable[1])} "
                    f"| {_cores(room.reserved[0])} CPU, {_gib(room.reserved[1])} | {taken} |")
    if not rows:
        return ""
    header = ("| workload | pool | machine | nominal | capacity | allocatable | kept for system pods, DaemonSets "
              "| a serving replica requests |\n|---|---|---|---|---|---|---|---|")
    intro = (f"Estimated per node (docs/workloads.md, \"Sizing\"). Default requests leave "
             f"{sizing.HEADROOM_PERCENT}% of the allocatable unasked, so an estimate a little off still schedules.")
    return "## Node sizes\n\n" + intro + "\n\n" + header + "\n" + "\n".join(rows) + "\n"
