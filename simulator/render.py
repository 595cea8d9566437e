"""Presenting a simulation: a terminal table, a Markdown section, and JSON."""

from __future__ import annotations

import json
from collections.abc import Callable

from simulator.results import ReplicaPlacement, SimulationResult

COLUMNS = ("WORKLOAD", "REPLICA", "STATUS", "POOL", "NODE", "DEVICES", "TP", "ALTERNATIVE", "REASON")


def _either(values: list[str]) -> str:
    """``a | b`` for the distinct values of an undetermined replica."""
    return " | ".join(dict.fromkeys(values))


def _row(r: ReplicaPlacement) -> tuple[str, ...]:
    if r.outcomes:
        scheduled = [o for o in r.outcomes if o.pool]
        pools = _either([o.pool or "pending" for o in r.outcomes])
        tp = _either([str(o.tensor_parallel_size) for o in scheduled] + (["-"] if len(scheduled) < len(r.outcomes) else []))
        alternatives = _either([",".join(o.alternatives) for o in scheduled])
        return (r.workload, str(r.replica), r.status, pools, "-", "-", tp, alternatives or "-", r.reason or "")
    note = "; ".join(x for x in (r.note, r.reason, r.moves_back) if x)
    return (
        r.workload, str(r.replica), r.status, r.pool or "-", r.node or "-",
        ",".join(r.devices) or "-",
        "-" if r.tensor_parallel_size is None else str(r.tensor_parallel_size),
        ",".join(r.alternatives) or "-", note,
    )


def _run_row(first: ReplicaPlacement, more: int) -> tuple[str, ...]:
    """One row for the replicas after ``first`` that meet its outcome (the cluster no longer changes)."""
    cells = _row(first)
    low, high = first.replica + 1, first.replica + more
    what = f"{more:,} more replica{'s' if more != 1 else ''} {first.status}: {cells[-1]}"
    return (cells[0], str(low) if low == high else f"{low}-{high}", *cells[2:-1], what)


def _rows(result: SimulationResult):
    """Each replica's row, a run of replicas with one outcome as its first replica's row and one more."""
    for first, more in result.replicas.runs:
        yield _row(first)
        if more:
            yield _run_row(first, more)


def _range(low_high: tuple[int, int], value: int) -> str:
    low, high = low_high
    return str(value) if low == high else f"{low}-{high}"


def _pool_line(p) -> str:
    state = " (stocked out)" if p.stocked_out else ""
    reclaimed = f", reclaimed {', '.join(p.reclaimed)}" if p.reclaimed else ""
    nodes = _range(p.nodes_range, p.nodes)
    total = p.nodes_range[1] * p.devices_per_node
    plural = "" if nodes == "1" else "s"
    return (f"  {p.priority + 1}. {p.name}: {nodes} node{plural} (min {p.min}, max {p.max}){state}{reclaimed}, "
            f"{_range(p.devices_in_use_range, p.devices_in_use)}/{total} devices in use")


def _summary(result: SimulationResult) -> str:
    runs = result.replicas.runs
    scheduled = sum(1 + more for r, more in runs if r.status == "scheduled")
    undetermined = sum(1 + more for r, more in runs if r.status == "undetermined")
    line = f"{scheduled}/{len(result.replicas)} replicas scheduled"
    if undetermined and result.enumerated:
        line += (f", {undetermined} undetermined (Kubernetes {result.kubernetes_version}: "
                 f"{result.branches} possible outcome{'s' if result.branches != 1 else ''} followed)")
    elif undetermined:
        line += (f", {undetermined} undetermined (Kubernetes {result.kubernetes_version}: too many possible "
                 "outcomes to follow them all)")
    return line + "."


def render_table(result: SimulationResult) -> str:
    """Fixed-width table, one line per replica (one for a run of pending ones), then the pools' final sizes."""
    rows = [COLUMNS, *_rows(result)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS) - 1)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=True)) + "  " + row[-1]
             for row in rows]
    lines = [line.rstrip() for line in lines]
    if not result.replicas:
        lines.append("(no workload with resource claims to place)")
    lines += ["", f"{_summary(result)} Pools, in scale-up priority order:"]
    lines += [_pool_line(p) for p in result.pools]
    lines += [f"warning: {w}" for w in result.warnings]
    return "\n".join(lines)


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(result: SimulationResult) -> str:
    """A Markdown section for summary.md: the placement table and the pools' final sizes."""
    lines = ["| workload | replica | status | pool | node | devices | TP | alternative | reason |",
             "|---|---:|---|---|---|---|---:|---|---|"]
    for cells in _rows(result):  # a run of replicas with one outcome is one more row, as in the table
        lines.append("| " + " | ".join(_md(c) if c not in ("-", "") else c for c in cells) + " |")
    if not result.replicas:
        lines.append("| _no workload with resource claims_ | | | | | | | | |")
    lines += ["", _summary(result), "",
              "| pool (priority order) | nodes | min | max | devices in use | stocked out |",
              "|---|---:|---:|---:|---:|---|"]
    for p in result.pools:
        lines.append(f"| {p.name} | {_range(p.nodes_range, p.nodes)} | {p.min} | {p.max} | "
                     f"{_range(p.devices_in_use_range, p.devices_in_use)}/{p.nodes_range[1] * p.devices_per_node} | "
                     f"{'yes' if p.stocked_out else 'no'} |")
    lines += [f"\n> warning: {_md(w)}" for w in result.warnings]
    return "\n".join(lines)


def _outcome_json(o) -> dict:
    return {"status": o.status, "pool": o.pool, "tensorParallelSize": o.tensor_parallel_size,
            "alternatives": list(o.alternatives), "reason": o.reason, "note": o.note}


def to_json(result: SimulationResult) -> dict:
    """``{"replicas": [...], "pools": [...], "kubernetesVersion", "outcomesFollowed", "enumerated"}``.

    Each replica: workload, replica, status (``scheduled``, ``pending`` or ``undetermined``), pool, node,
    devices, tensorParallelSize, alternatives (the ``request/subrequest`` each claim request got), reason,
    note, movesBack (on a less preferred pool: what brings it back, or that nothing will), and ``outcomes``
    (every possible outcome; empty when the outcome is determined). Every replica has its entry, also
    those the table shows as one run ("N more replicas pending: ...").
    """
    return _json(result, [_replica_json(r) for r in result.replicas])


def write_json(result: SimulationResult, write: Callable[[str], object]) -> None:
    """The text of ``json.dumps(to_json(result), indent=2)``, written replica by replica (bounded memory)."""
    if not len(result.replicas):
        write(json.dumps(to_json(result), indent=2))
        return
    mark = "\0replicas\0"  # the replicas' place in the text of everything else (escaped: no input can match it first)
    head, tail = json.dumps(_json(result, [mark]), indent=2).split(json.dumps(mark), 1)
    write(head)
    for i, (first, more) in enumerate(result.replicas.runs):
        write((",\n    " if i else "") + json.dumps(_replica_json(first), indent=2).replace("\n", "\n    "))
        if more:  # the run's later replicas differ from its first in their number only
            text = json.dumps({**_replica_json(first), "replica": -1}, indent=2).replace("\n", "\n    ")
            before, after = text.split('"replica": -1', 1)
            for n in range(first.replica + 1, first.replica + more + 1):
                write(f',\n    {before}"replica": {n}{after}')
    write(tail)


def _replica_json(r: ReplicaPlacement) -> dict:
    return {
        "workload": r.workload,
        "replica": r.replica,
        "status": r.status,
        "pool": r.pool,
        "node": r.node,
        "devices": list(r.devices),
        "tensorParallelSize": r.tensor_parallel_size,
        "alternatives": list(r.alternatives),
        "reason": r.reason,
        "note": r.note,
        "movesBack": r.moves_back,
        "outcomes": [_outcome_json(o) for o in r.outcomes],
    }


def _json(result: SimulationResult, replicas: list) -> dict:
    return {
        "kubernetesVersion": result.kubernetes_version,
        "outcomesFollowed": result.branches,
        "enumerated": result.enumerated,
        "replicas": replicas,
        "pools": [
            {"name": p.name, "nodes": p.nodes, "nodesRange": list(p.nodes_range),
             "devicesInUse": p.devices_in_use, "devicesInUseRange": list(p.devices_in_use_range),
             "stockedOut": p.stocked_out, "reclaimed": list(p.reclaimed)}
            for p in result.pools
        ],
        "warnings": list(result.warnings),
    }
