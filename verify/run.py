"""The cluster against the promises, as a library: read a stack's cluster (live or a snapshot), check it, and set
``make simulate``'s prediction beside what is running.

``make verify`` (:mod:`verify.__main__`) is the command around it; the rehearsal calls :func:`verify` on the
cluster it built.
"""

from __future__ import annotations

import contextlib
import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verify.findings import WARNING, Finding
from verify.snapshot import ReadError, View, read_snapshot


class VerifyError(Exception):
    """The stack cannot be loaded or its cluster cannot be read (``make verify`` exits 2 with this reason)."""


@dataclass(frozen=True)
class Verdict:
    view: View
    findings: list[Finding]


def verify(stack_name: str, stack_dir: Path, *, snapshot: Path | None = None, kubeconfig: str | None = None,
           context: str | None = None, deadline: float = 120.0, call_timeout: float = 20.0,
           simulate: bool = True) -> Verdict:
    """Read the stack's cluster (``snapshot`` if given, else live: ``kubeconfig``, then $KUBECONFIG, then the
    stack's output) within ``deadline`` seconds and check it; with ``simulate``, beside the simulator's
    prediction. Raises :class:`VerifyError`."""
    from verify.stack import StackError, load_stack

    try:
        stack = load_stack(stack_name, stack_dir)
    except StackError as exc:
        raise VerifyError(f"--stack: {exc}") from None
    try:
        view = read_snapshot(snapshot) if snapshot else read_live(stack_name, stack_dir, kubeconfig, context,
                                                                  deadline, call_timeout)
    except ReadError as exc:
        raise VerifyError(str(exc)) from None
    return Verdict(view, check_all(view, stack, predict(stack, stack_dir, view) if simulate else None))


def read_live(stack_name: str, stack_dir: Path, kubeconfig: str | None, context: str | None,
              deadline: float, call_timeout: float) -> View:
    from verify.live import Budget, kubeconfig_source, read_cluster

    path = kubeconfig_source(kubeconfig, os.environ.get("KUBECONFIG"), stack_name, stack_dir)
    return read_cluster(path, context, Budget(deadline, call_timeout))


def check_all(view: View, stack: Any, predicted: dict[str, list[str]] | None) -> list[Finding]:
    from verify import checks, placement

    found = [Finding("read", WARNING, f"partial answer: {kind} not read: {why}") for kind, why in view.unread.items()]
    found += checks.isolation(view, stack)
    found += checks.published_devices(view, stack)
    found += placement.replicas(view, stack, predicted or {})
    found += placement.drift(view, stack)
    return found


def predict(stack: Any, stack_dir: Path, view: View) -> dict[str, list[str]]:
    """``make simulate``'s placement of each workload at the replica count the cluster has."""
    from offline_plan.manifests import kubernetes_objects
    from offline_plan.run import run_stack_file
    from simulator.engine import MAX_REPLICAS, SimulationError, simulate
    from simulator.workloads import pod_specs
    from verify.placement import WORKLOAD_LABEL, workload_pods

    counts = {d.labels.get(WORKLOAD_LABEL, d.name): d.replicas for d in view.deployments}
    for workload, pods in workload_pods(view).items():
        counts.setdefault(workload, len(pods))
    # a Deployment of 10,000,000 replicas: no prediction for it rather than an unbounded simulation
    too_many = {w: [f"not simulated ({n:,} replicas; the simulator places at most {MAX_REPLICAS:,})"]
                for w, n in counts.items() if n > MAX_REPLICAS}
    counts = {w: n for w, n in counts.items() if w not in too_many}
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            run = run_stack_file(stack.name, stack_dir)
        objects = kubernetes_objects(run)
        known = {p.workload for p in pod_specs(run.config, objects)}
        result = simulate(run.config, objects, replicas={w: n for w, n in counts.items() if w in known})
    except (SimulationError, FileNotFoundError, ValueError) as exc:
        return {**{w: [f"not simulated ({exc})"] for w in counts}, **too_many}
    predicted: dict[str, list[str]] = dict(too_many)
    for r in result.replicas:
        if r.status == "scheduled":
            text = f"#{r.replica} {r.pool} {'+'.join(r.alternatives)} tp={r.tensor_parallel_size}"
        elif r.status == "pending":
            text = f"#{r.replica} pending ({r.reason})"
        else:
            text = f"#{r.replica} one of {len(r.outcomes)} outcomes ({', '.join(sorted({o.pool or 'pending' for o in r.outcomes}))})"
        predicted.setdefault(r.workload, []).append(text)
    return predicted
