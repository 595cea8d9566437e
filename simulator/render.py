"""Presenting a simulation: a terminal table, a Markdown section, and JSON."""

from __future__ import annotations

from simulator.engine import SimulationResult

COLUMNS = ("WORKLOAD", "REPLICA", "STATUS", "POOL", "NODE", "DEVICES", "TP", "REASON")


def _row(r) -> tuple[str, ...]:
    return (
        r.workload, str(r.replica), r.status, r.pool or "-", r.node or "-",
        ",".join(r.devices) or "-",
        "-" if r.tensor_parallel_size is None else str(r.tensor_parallel_size),
        r.reason or "",
    )


def _pool_line(p) -> str:
    state = " (stocked out)" if p.stocked_out else ""
    total = p.nodes * p.devices_per_node
    return (f"  {p.priority + 1}. {p.name}: {p.nodes} node{'s' if p.nodes != 1 else ''} "
            f"(min {p.min}, max {p.max}){state}, {p.devices_in_use}/{total} devices in use")


def render_table(result: SimulationResult) -> str:
    """Fixed-width table, one line per replica, then the pools' final sizes."""
    rows = [COLUMNS, *(_row(r) for r in result.replicas)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS) - 1)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=True)) + "  " + row[-1]
             for row in rows]
    lines = [line.rstrip() for line in lines]
    if not result.replicas:
        lines.append("(no workload with resource claims to place)")
    scheduled = sum(r.status == "scheduled" for r in result.replicas)
    lines += ["", f"{scheduled}/{len(result.replicas)} replicas scheduled. Pools, in scale-up priority order:"]
    lines += [_pool_line(p) for p in result.pools]
    lines += [f"warning: {w}" for w in result.warnings]
    return "\n".join(lines)


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(result: SimulationResult) -> str:
    """A Markdown section for summary.md: the placement table and the pools' final sizes."""
    lines = ["| workload | replica | status | pool | node | devices | TP | reason |",
             "|---|---:|---|---|---|---|---:|---|"]
    for r in result.replicas:
        cells = _row(r)
        lines.append("| " + " | ".join(_md(c) if c not in ("-", "") else c for c in cells) + " |")
    if not result.replicas:
        lines.append("| _no workload with resource claims_ | | | | | | | |")
    lines += ["", "| pool (priority order) | nodes | min | max | devices in use | stocked out |",
              "|---|---:|---:|---:|---:|---|"]
    for p in result.pools:
        lines.append(f"| {p.name} | {p.nodes} | {p.min} | {p.max} | "
                     f"{p.devices_in_use}/{p.nodes * p.devices_per_node} | {'yes' if p.stocked_out else 'no'} |")
    lines += [f"\n> warning: {_md(w)}" for w in result.warnings]
    return "\n".join(lines)


def to_json(result: SimulationResult) -> dict:
    """``{"replicas": [{workload, replica, status, pool, node, devices, tensorParallelSize, reason}]}``."""
    return {
        "replicas": [
            {
                "workload": r.workload,
                "replica": r.replica,
                "status": r.status,
                "pool": r.pool,
                "node": r.node,
                "devices": list(r.devices),
                "tensorParallelSize": r.tensor_parallel_size,
                "reason": r.reason,
            }
            for r in result.replicas
        ]
    }
