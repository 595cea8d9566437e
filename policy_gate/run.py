"""One run of the gate: the plan read into the spool while the pack processes start and answer, then the
verdict (see :mod:`policy_gate.gate`)."""

from __future__ import annotations

import concurrent.futures
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from policy_gate.analysis import SHARED_STACK_UP_TO, Analysis, analyze_stack, finish_stack, start_stack
from policy_gate.config import read_policy_config
from policy_gate.plan import PlanError
from policy_gate.result import STACK_PLACEHOLDER, GateError, GateResult, Violation
from policy_gate.spool import Spool

if TYPE_CHECKING:  # gRPC and the Pulumi protos load only when a pack is run (fast errors for bad input)
    from policy_gate.analyzer import Diagnostic, PolicyPackProcess

#: Pack processes the gate starts for a large plan (the runtime answers one call at a time per process).
DEFAULT_JOBS = max(1, min(4, os.cpu_count() or 1))
#: Resources per extra pack process: below this, one process (starting one costs about a second).
RESOURCES_PER_JOB = 2000
#: pulumi-policy's limit on one message (policy_gate.analyzer.MAX_MESSAGE, repeated to keep gRPC unloaded here).
MAX_STACK_MESSAGE = 400 * 1024 * 1024


def run_gate(plan: Mapping[str, Any] | str | Path, policy_config: Mapping[str, Any] | str | Path | None = None,
             *, pack: PolicyPackProcess | None = None, pack_dir: str | Path | None = None,
             jobs: int | None = None) -> GateResult:
    """Check a plan (dict or path) against the pack. Starts and stops the pack unless ``pack`` is given.

    The plan is streamed into an on-disk spool of encoded requests (memory: one step and the URN index);
    each resource's ``Analyze`` is sent as soon as it is read, pipelined over up to ``jobs`` pack processes
    (more start as the plan grows); ``AnalyzeStack`` goes out when the last step is read, over one message
    built from the spool, to the process kept for it (a large stack) or shared among the processes once the
    resource policies are done (a small one).
    """
    user_config = read_policy_config(policy_config)
    import grpc

    from policy_gate.analyzer import AnalyzerError

    fleet = _Fleet(pack, pack_dir, jobs)
    try:
        with Spool() as spool:
            return _run(fleet, spool, plan, user_config)
    except AnalyzerError as exc:
        raise GateError(str(exc)) from None
    except grpc.RpcError as exc:  # GetAnalyzerInfo or Configure
        detail = exc.details() if hasattr(exc, "details") else str(exc)
        raise GateError(f"the policy pack failed: {' '.join(str(detail).split())}") from None
    finally:
        fleet.close()


class _Fleet:
    """The pack processes of a run: the first starts with the run, one more per ``RESOURCES_PER_JOB``
    resources read (at most ``jobs``), each in the background; a pack handed in is the only one."""

    def __init__(self, given: PolicyPackProcess | None, pack_dir: str | Path | None, jobs: int | None) -> None:
        self.given = given
        self.options = {"pack_dir": pack_dir} if pack_dir else {}
        self.limit = 1 if given is not None else max(1, jobs or DEFAULT_JOBS)
        self.packs: list[PolicyPackProcess] = [given] if given is not None else []
        self.booting: list[concurrent.futures.Future] = []
        self.pool = None if given is not None else concurrent.futures.ThreadPoolExecutor(max_workers=4)
        if given is None:
            self._boot()

    def _boot(self) -> None:
        from policy_gate.analyzer import PolicyPackProcess

        assert self.pool is not None
        self.booting.append(self.pool.submit(PolicyPackProcess, **self.options))

    def grow(self, count: int) -> None:
        wanted = max(1, min(self.limit, count // RESOURCES_PER_JOB))
        while len(self.packs) + len(self.booting) < wanted:
            self._boot()

    def ready(self, wait: str = "") -> list[PolicyPackProcess]:
        """The packs serving now; with ``wait="first"`` at least one, with ``wait="all"`` every one started."""
        if wait == "all" or (wait == "first" and not self.packs):
            pending = self.booting if wait == "all" else self.booting[:1]
            concurrent.futures.wait(pending)
        for future in [f for f in self.booting if f.done()]:
            self.booting.remove(future)
            self.packs.append(future.result())  # a pack that failed to start: its AnalyzerError
        return list(self.packs)

    def close(self) -> None:
        """Stop every pack the run started, those still starting too (waited for: none outlives the run)."""
        for future in self.booting:
            try:
                self.packs.append(future.result())
            except Exception:  # noqa: BLE001 (it failed to start: nothing to stop, the run's error is reported)
                continue
        self.booting = []
        for process in self.packs:
            if process is not self.given:
                process.close()
        if self.pool is not None:
            self.pool.shutdown(wait=True)


def _run(fleet: _Fleet, spool: Spool, plan: Mapping[str, Any] | str | Path,
         user_config: Mapping[str, Any]) -> GateResult:
    began = time.perf_counter()
    timings: dict[str, float] = {}
    analysis: Analysis | None = None
    try:
        for index in spool.read(plan):
            if index % 64 == 0:
                fleet.grow(len(spool.entries))
            ready = fleet.ready()
            if analysis is None and ready:
                analysis = Analysis(ready[0].info(), user_config, spool)
            if analysis is not None:
                analysis.pump(ready)
    except PlanError as exc:
        raise GateError(str(exc)) from None
    timings["read"] = time.perf_counter() - began
    fleet.grow(spool.count)
    packs = fleet.ready(wait="all")
    if analysis is None:
        analysis = Analysis(packs[0].info(), user_config, spool)
    analysis.read_all(packs)
    config, stack_policies = analysis.config, analysis.stack_policies
    size = spool.stack_message_size() if stack_policies else 0
    if size > MAX_STACK_MESSAGE:
        raise GateError(
            f"the plan's {spool.count} resources make a stack-level request of {size / 2**20:.0f} MiB; the policy "
            f"runtime accepts at most {MAX_STACK_MESSAGE / 2**20:.0f} MiB in one message (pulumi-policy's gRPC "
            f"limit), so the stack policies ({', '.join(stack_policies)}) cannot be run over it: split the stack, "
            "or disable them with --policy-config")
    try:
        diagnostics = _check(analysis, spool, packs, size, timings, began)
    finally:
        for pack in packs:  # a pack handed in stays configured as the run saw it
            if pack.process.poll() is None:
                pack.configure(config)
    info = analysis.info
    root = spool.stack_urn() or STACK_PLACEHOLDER
    violations = sorted(
        {Violation("mandatory" if d.level in ("mandatory", "remediate") else "advisory", d.policy, d.urn or root,
                   d.message) for d in diagnostics},
        key=lambda v: (v.level != "mandatory", v.policy, v.urn, v.message),
    )
    return GateResult(
        violations=violations, pack_name=info.name, pack_version=info.version,
        policies=[(p.name, config[p.name][0]) for p in info.policies], resources_checked=spool.count,
        timings=timings, processes=len(packs),
    )


def _check(analysis: Analysis, spool: Spool, packs: list[PolicyPackProcess], size: int, timings: dict[str, float],
           began: float) -> list[Diagnostic]:
    """Every resource's and the stack's diagnostics, once the plan is read (see SHARED_STACK_UP_TO)."""
    config, stack_policies = analysis.config, analysis.stack_policies
    diagnostics: list[Diagnostic] = []
    if stack_policies and len(packs) > 1 and size > SHARED_STACK_UP_TO:
        stack_pack = packs[0]
        analysis.retire(stack_pack)  # its Analyze calls answered before it is configured for the stack
        stack_began = time.perf_counter()
        message = spool.stack_message()
        running = start_stack(stack_pack, stack_policies, message, config)
        diagnostics += analysis.finish()
        timings["analyze"] = time.perf_counter() - began
        diagnostics += finish_stack(stack_pack, stack_policies, running, message, spool.count, config)
        timings["stack"] = time.perf_counter() - stack_began
    else:
        diagnostics += analysis.finish()
        timings["analyze"] = time.perf_counter() - began
        if stack_policies:
            stack_began = time.perf_counter()
            message = spool.stack_message()
            stack_packs = packs if len(message) <= SHARED_STACK_UP_TO else packs[:1]
            diagnostics += analyze_stack(stack_packs, message, spool.count, config, stack_policies)
            timings["stack"] = time.perf_counter() - stack_began
    return diagnostics
