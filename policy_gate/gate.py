"""Run the policy pack over a preview-shaped plan, the way ``pulumi preview --policy-pack`` does.

Sequence per run: ``GetAnalyzerInfo``; ``Configure`` with every policy's
enforcement level and properties (the pack's defaults, overridden by a
``--policy-pack-config`` style JSON); ``Analyze`` for each resource;
``AnalyzeStack`` with all of them. Any mandatory violation fails the gate.

At scale (docs/policies.md, "The gate over large previews"): the plan is
streamed into a spool of requests encoded once, and each resource's ``Analyze``
goes out while the plan is still read, pipelined over one pack process per
``RESOURCES_PER_JOB`` resources (at most ``jobs``), ``BATCH`` resources per call
to a pack that serves this project's batch call (policies/wire.py), one per
call to any other. ``AnalyzeStack`` runs over one message read from the spool:
for a large stack on a process kept for it, sent as soon as the plan is read;
for a small one shared among the processes (one call each). A failed call is
run again one resource, then one policy, at a time, so the error names them. No
call but the small ones has a deadline: a pack that dies ends its calls at once,
and the error says which resource or policy was being checked and how the
process ended.
"""

from __future__ import annotations

import collections
import concurrent.futures
import os
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from policy_gate.plan import STACK_TYPE, PlanError, PlanResource, iter_plan_resources

if TYPE_CHECKING:  # gRPC and the Pulumi protos load only when a pack is run (fast errors for bad input)
    from policy_gate.analyzer import Diagnostic, PackInfo, PolicyPackProcess

LEVELS = ("advisory", "mandatory", "remediate", "disabled")

STACK_PLACEHOLDER = "(stack)"
#: pulumi-policy's limit on one message (policy_gate.analyzer.MAX_MESSAGE, repeated to keep gRPC unloaded here).
MAX_STACK_MESSAGE = 400 * 1024 * 1024


class GateError(ValueError):
    """The gate could not run: bad plan, bad policy config, or the pack failed to start."""


@dataclass(frozen=True)
class Violation:
    level: str  # "mandatory" | "advisory"
    policy: str
    urn: str
    message: str

    def line(self) -> str:
        return f"[{self.level}] {self.policy}  {self.urn}: {self.message}"


@dataclass
class GateResult:
    violations: list[Violation]
    pack_name: str
    pack_version: str
    policies: list[tuple[str, str]]  # (name, effective level)
    resources_checked: int
    notes: list[str] = field(default_factory=list)
    #: Seconds: "read" (until the plan is read and encoded; resource policies run meanwhile), "analyze" (until
    #: the last resource policy answered, from the start), "stack" (the stack policies, from when they were sent).
    timings: dict[str, float] = field(default_factory=dict)
    #: Pack processes the run used.
    processes: int = 1

    @property
    def mandatory(self) -> list[Violation]:
        return [v for v in self.violations if v.level == "mandatory"]

    @property
    def advisory(self) -> list[Violation]:
        return [v for v in self.violations if v.level != "mandatory"]

    @property
    def exit_code(self) -> int:
        return 1 if self.mandatory else 0

    def of_policy(self, name: str) -> list[Violation]:
        return [v for v in self.violations if v.policy == name]


# ---- policy config ---------------------------------------------------------------------


def read_policy_config(source: Mapping[str, Any] | str | Path | None) -> dict[str, Any]:
    if source is None:
        return {}
    if isinstance(source, Mapping):
        return dict(source)
    import input_files

    path = Path(source)
    if not path.exists():
        raise GateError(f"{path}: no such policy config file")
    try:
        data = input_files.read_json(path, input_files.POLICY_CONFIG)
    except input_files.InputFileError as exc:
        raise GateError(f"policy config {exc}") from None
    if not isinstance(data, Mapping):
        raise GateError(f"{path}: policy config must be a JSON object keyed by policy name")
    return dict(data)


def _level(value: Any, where: str, problems: list[str]) -> str | None:
    if not isinstance(value, str) or value not in LEVELS:
        problems.append(f"{where}: enforcement level must be one of {', '.join(LEVELS)}, got {value!r}")
        return None
    return value


def resolve_config(info: PackInfo, user: Mapping[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each policy's (level, properties): defaults, then the pack's initial config, then ``all``, then per policy.

    Every problem of the config (unknown policies, bad levels, entries of the wrong shape, properties
    the policy does not declare) is reported at once, in one GateError.
    """
    names = {p.name for p in info.policies}
    problems: list[str] = []
    unknown = sorted(str(k) for k in set(user) - names - {"all"})
    if unknown:
        problems.append(f"names unknown policies: {', '.join(unknown)} (known: {', '.join(sorted(names))})")
    everyone = _level(user["all"], "all", problems) if "all" in user else None
    resolved: dict[str, tuple[str, dict[str, Any]]] = {}
    for policy in info.policies:
        level, properties = policy.level, {}
        initial_level, initial_props = info.initial_config.get(policy.name, (None, {}))
        level = initial_level or level
        properties.update(initial_props)
        level = everyone or level
        entry = user.get(policy.name)
        if isinstance(entry, str):
            level = _level(entry, policy.name, problems) or level
        elif isinstance(entry, Mapping):
            if "enforcementLevel" in entry:
                level = _level(entry["enforcementLevel"], f"{policy.name}.enforcementLevel", problems) or level
            given = {k: v for k, v in entry.items() if k != "enforcementLevel"}
            undeclared = sorted(str(k) for k in set(given) - set(policy.config_properties))
            if undeclared:
                accepted = ", ".join(policy.config_properties) or "none"
                problems.append(f"{policy.name}: unknown properties {', '.join(undeclared)} (accepted: {accepted})")
            properties.update(given)
        elif entry is not None:
            problems.append(f"{policy.name}: expected a level or an object, got {type(entry).__name__}")
        resolved[policy.name] = (level, properties)
    if problems:
        count = len(problems)
        raise GateError(f"policy config: {count} problem{'s' if count != 1 else ''}:\n"
                        + "\n".join(f"  - {p}" for p in problems))
    return resolved


# ---- the run -----------------------------------------------------------------------------

#: Pack processes the gate starts for a large plan (the runtime answers one call at a time per process).
DEFAULT_JOBS = max(1, min(4, os.cpu_count() or 1))
#: Resources per extra pack process: below this, one process (starting one costs about a second).
RESOURCES_PER_JOB = 2000
#: Analyze calls in flight per pack process: the next request is on the wire while the pack works.
WINDOW = 16
#: Resources per batch call, for a pack that serves it (policies/wire.py, BATCH_METHOD): one gRPC call
#: costs the client and the server about half a millisecond of CPU, more than most resources' policies.
BATCH = 64
#: Batch calls in flight per pack process.
BATCH_WINDOW = 2
#: A batch is cut at this many bytes of requests (the runtime accepts 400 MiB in one message).
BATCH_BYTES = 8 * 2**20
#: Above this stack message size, the stack policies run in one pack process: each process holding the
#: whole stack decoded would multiply the memory by the processes. That process is kept for them (no
#: ``Analyze`` calls) from the moment the plan read so far passes this size and another process serves,
#: and gets ``AnalyzeStack`` as soon as the plan is read, while the others finish the resource policies.
SHARED_STACK_UP_TO = 32 * 2**20


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


class Spool:
    """The plan's resources, each encoded once (see analyzer.encode_*), in a temporary file.

    In memory: per resource its URN, type, provider reference and where its bytes are; the providers' whole
    resources (few, needed by every request); the index of each URN's last step (a URN's last step wins).
    Resources are added as the plan is read (:meth:`read`); a request can be read back at any time.
    """

    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile(prefix="policy-gate-")
        #: (urn, type, provider ref, offset, core, extra) per step with a resource, in plan order.
        self.entries: list[tuple[str, str, str, int, int, int]] = []
        self.latest: dict[str, int] = {}
        self.providers: dict[str, PlanResource] = {}
        #: Entries whose step has outputs: the length of their AnalyzeStack fields 1-5, stored first in ``extra``.
        self.stack_cores: dict[int, int] = {}
        self._provider_bytes: dict[str, bytes] = {}
        self._written = 0
        self._flushed = 0
        #: Providers whose inputs changed after requests carrying them may have been sent (a URN seen again).
        self.changed_providers: set[str] = set()
        #: The size the stack message would have if no URN came back (an upper bound of it, grown as read).
        self.stack_bytes = 0

    @classmethod
    def of(cls, plan: Mapping[str, Any] | str | Path) -> Spool:
        """The whole plan spooled at once."""
        spool = cls()
        try:
            for _ in spool.read(plan):
                pass
        except BaseException:
            spool.close()
            raise
        return spool

    def read(self, plan: Mapping[str, Any] | str | Path) -> Iterator[int]:
        """Spool the plan's resources one step at a time, yielding each one's entry index."""
        for _, resource in iter_plan_resources(plan):
            yield self.add(resource)
        self.file.flush()
        self._flushed = self._written

    def add(self, resource: PlanResource) -> int:
        from policy_gate.analyzer import encode_core, encode_extra

        core, extra = encode_core(resource), encode_extra(resource)
        index = len(self.entries)
        if resource.outputs is not None:  # AnalyzeStack judges the outputs: their own fields 1-5, before 7-9
            stack_core = encode_core(resource, resource.outputs)
            self.stack_cores[index] = len(stack_core)
            extra = stack_core + extra
        self.file.write(core)
        self.file.write(extra)
        self.entries.append((resource.urn, resource.type, resource.provider, self._written, len(core), len(extra)))
        self._written += len(core) + len(extra)
        self.latest[resource.urn] = index
        self.stack_bytes += len(core) + len(extra) + 8
        if resource.type.startswith("pulumi:providers:"):
            if resource.urn in self.providers:
                self.changed_providers.add(resource.urn)
                for reference in [r for r in self._provider_bytes if _provider_urn(r) == resource.urn]:
                    del self._provider_bytes[reference]
            self.providers[resource.urn] = resource
        return index

    @property
    def count(self) -> int:
        return len(self.latest)

    def is_latest(self, index: int) -> bool:
        return self.latest[self.entries[index][0]] == index

    def provider_read(self, index: int) -> bool:
        """Whether the entry's provider is known (none, or its step read): its request can be built."""
        reference = self.entries[index][2]
        return not reference or _provider_urn(reference) in self.providers

    def request(self, index: int) -> bytes:
        """The entry's AnalyzeRequest."""
        _, _, provider, offset, core, _ = self.entries[index]
        if offset + core > self._flushed:
            self.file.flush()
            self._flushed = self._written
        return os.pread(self.file.fileno(), core, offset) + self.provider_bytes(provider)

    def stack_urn(self) -> str:
        return next((entry[0] for i, entry in enumerate(self.entries)
                     if entry[1] == STACK_TYPE and self.latest[entry[0]] == i), "")

    def provider_bytes(self, reference: str) -> bytes:
        if reference not in self._provider_bytes:
            from policy_gate.analyzer import encode_provider

            self._provider_bytes[reference] = encode_provider(reference, self.providers)
        return self._provider_bytes[reference]

    def stack_message_size(self) -> int:
        """The size of the AnalyzeStackRequest holding every resource, known before it is built."""
        total = 0
        for i, (urn, _, provider, _, core, extra) in enumerate(self.entries):
            if self.latest[urn] == i:
                size = len(self.provider_bytes(provider)) + (extra if i in self.stack_cores else core + extra)
                total += 1 + len(_varint(size)) + size
        return total

    def stack_message(self) -> bytes:
        """The AnalyzeStackRequest: every resource's AnalyzerResource, framed, in plan order."""
        from policy_gate.analyzer import frame

        return b"".join(frame(1, item) for *_, item in self)

    def __iter__(self) -> Iterator[tuple[str, str, bytes, bytes]]:
        """(urn, type, AnalyzeRequest, AnalyzerResource) of each resource, in order, a URN at its last step."""
        self.file.flush()
        self._flushed = self._written
        self.file.seek(0)
        position = 0
        for i, (urn, type_, provider, offset, core, extra) in enumerate(self.entries):
            if self.latest[urn] != i:
                continue
            if position != offset:
                self.file.seek(offset)
            data = self.file.read(core + extra)
            position = offset + core + extra
            head = data[:core] + self.provider_bytes(provider)
            if i in self.stack_cores:  # the outputs' fields 1-5, the provider, then fields 7-9
                split = core + self.stack_cores[i]
                yield urn, type_, head, data[core:split] + self.provider_bytes(provider) + data[split:]
            else:
                yield urn, type_, head, head + data[core:]

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> Spool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _provider_urn(reference: str) -> str:
    """The provider URN of a step's provider reference (``<urn>::<id>``), as analyzer.provider_message reads it."""
    return reference.rsplit("::", 1)[0] if reference.count("::") >= 4 else reference


def _varint(value: int) -> bytes:
    from policies.wire import varint

    return varint(value)


def _only(config: Mapping[str, tuple[str, dict[str, Any]]], names: set[str]) -> dict[str, tuple[str, dict[str, Any]]]:
    """The config with every policy but ``names`` disabled (properties kept)."""
    return {name: (level if name in names else "disabled", props) for name, (level, props) in config.items()}


def _run(fleet: _Fleet, spool: Spool, plan: Mapping[str, Any] | str | Path,
         user_config: Mapping[str, Any]) -> GateResult:
    began = time.perf_counter()
    timings: dict[str, float] = {}
    analysis: _Analysis | None = None
    try:
        for index in spool.read(plan):
            if index % 64 == 0:
                fleet.grow(len(spool.entries))
            ready = fleet.ready()
            if analysis is None and ready:
                analysis = _Analysis(ready[0].info(), user_config, spool)
            if analysis is not None:
                analysis.pump(ready)
    except PlanError as exc:
        raise GateError(str(exc)) from None
    timings["read"] = time.perf_counter() - began
    fleet.grow(spool.count)
    packs = fleet.ready(wait="all")
    if analysis is None:
        analysis = _Analysis(packs[0].info(), user_config, spool)
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


def _check(analysis: _Analysis, spool: Spool, packs: list[PolicyPackProcess], size: int, timings: dict[str, float],
           began: float) -> list[Diagnostic]:
    """Every resource's and the stack's diagnostics, once the plan is read (see SHARED_STACK_UP_TO)."""
    config, stack_policies = analysis.config, analysis.stack_policies
    diagnostics: list[Diagnostic] = []
    if stack_policies and len(packs) > 1 and size > SHARED_STACK_UP_TO:
        stack_pack = packs[0]
        analysis.retire(stack_pack)  # its Analyze calls answered before it is configured for the stack
        stack_began = time.perf_counter()
        message = spool.stack_message()
        running = _start_stack(stack_pack, stack_policies, message, config)
        diagnostics += analysis.finish()
        timings["analyze"] = time.perf_counter() - began
        diagnostics += _finish_stack(stack_pack, stack_policies, running, message, spool.count, config)
        timings["stack"] = time.perf_counter() - stack_began
    else:
        diagnostics += analysis.finish()
        timings["analyze"] = time.perf_counter() - began
        if stack_policies:
            stack_began = time.perf_counter()
            message = spool.stack_message()
            stack_packs = packs if len(message) <= SHARED_STACK_UP_TO else packs[:1]
            diagnostics += _analyze_stack(stack_packs, message, spool.count, config, stack_policies)
            timings["stack"] = time.perf_counter() - stack_began
    return diagnostics


class _Analysis:
    """``Analyze`` for every resource, sent as it is read: ``BATCH`` resources per call to a pack that serves
    the batch call (``BATCH_WINDOW`` calls in flight), one per call to another (``WINDOW`` in flight).

    Entries wait in a queue (their bytes stay in the spool) while every window is full, so reading never waits
    for the packs. An entry whose provider's step is not read yet waits until the plan is read; one whose URN
    comes back later is answered but its answer dropped; one whose provider comes back later is sent again.
    """

    def __init__(self, info: PackInfo, user_config: Mapping[str, Any], spool: Spool) -> None:
        self.info = info
        self.config = resolve_config(info, user_config)
        kinds = {p.name: p.kind for p in info.policies}
        self.resource_policies = {n for n, k in kinds.items() if k == "resource" and self.config[n][0] != "disabled"}
        self.stack_policies = [p.name for p in info.policies
                               if p.kind == "stack" and self.config[p.name][0] != "disabled"]
        self.spool = spool
        #: Per pack, its calls in flight: (future, [(entry, generation, request)], batched).
        self.windows: dict[PolicyPackProcess, collections.deque] = {}
        self.batched: dict[PolicyPackProcess, bool] = {}
        self.serving: list[PolicyPackProcess] = []  # the packs that get Analyze calls
        self.queue: collections.deque[int] = collections.deque()
        self.waiting: list[int] = []  # entries whose provider is not read yet
        self.seen = 0  # entries queued so far
        self.sent: dict[int, int] = {}  # entry -> the generation of its last request
        self.found: dict[int, list[Diagnostic]] = {}
        self.turn = 0
        self.reading = True  # while the plan is read, a batch waits to be full
        self.answered = threading.Event()  # set by every call that ends (gRPC's futures are not concurrent's)

    def _join(self, packs: list[PolicyPackProcess]) -> None:
        for pack in packs:
            if pack not in self.windows:
                pack.configure(self.config)
                self.batched[pack] = pack.serves_batches()
                self.windows[pack] = collections.deque()
                self.serving.append(pack)
        if (self.stack_policies and len(self.serving) > 1 and self.serving[0] is packs[0]
                and self.spool.stack_bytes > SHARED_STACK_UP_TO):
            self.serving.remove(packs[0])  # kept for the stack policies; its calls in flight still answer

    def _take_new(self) -> None:
        if not self.resource_policies:
            return
        for index in range(self.seen, len(self.spool.entries)):
            (self.queue if self.spool.provider_read(index) else self.waiting).append(index)
        self.seen = len(self.spool.entries)
        if self.spool.changed_providers:  # requests sent with a provider's earlier inputs go again
            changed = self.spool.changed_providers
            again = [i for i in self.sent if _provider_urn(self.spool.entries[i][2]) in changed]
            for index in again:
                self.found.pop(index, None)
                self.sent[index] += 1
            self.queue.extend(again)
            changed.clear()

    def pump(self, packs: list[PolicyPackProcess]) -> None:
        """Collect the answers already in, send what the windows have room for; never waits."""
        self._join(packs)
        self._take_new()
        self._collect_done()
        self._send()

    def _collect_done(self) -> bool:
        collected = False
        for pack, window in self.windows.items():
            while window and window[0][0].done():
                self._collect(pack)
                collected = True
        return collected

    def _send(self) -> None:
        from policy_gate.analyzer import batch_request

        while self.queue:
            pack = self._free_pack()
            if pack is None:
                return
            batched = self.batched[pack]
            if batched and self.reading and len(self.queue) < BATCH:
                return
            items: list[tuple[int, int, bytes]] = []
            size = 0
            while self.queue and len(items) < (BATCH if batched else 1) and size < BATCH_BYTES:
                index = self.queue.popleft()
                if self.spool.is_latest(index):
                    request = self.spool.request(index)
                    items.append((index, self.sent.setdefault(index, 0), request))
                    size += len(request)
            if not items:
                continue
            if batched:
                future = pack.analyze_batch.future(batch_request(request for *_, request in items))
            else:
                future = pack.analyze_encoded.future(items[0][2])
            future.add_done_callback(self._answered)
            self.windows[pack].append((future, items, batched))

    def _answered(self, _future: Any) -> None:
        self.answered.set()

    def _free_pack(self) -> PolicyPackProcess | None:
        for step in range(len(self.serving)):
            pack = self.serving[(self.turn + step) % len(self.serving)]
            if len(self.windows[pack]) < (BATCH_WINDOW if self.batched[pack] else WINDOW):
                self.turn = (self.turn + step + 1) % len(self.serving)
                return pack
        return None

    def _collect(self, pack: PolicyPackProcess) -> None:
        from policy_gate.analyzer import batch_replies

        future, items, batched = self.windows[pack].popleft()
        try:
            reply = future.result()
        except Exception as exc:  # grpc.RpcError: name the resource, then the policy
            self._cancel_all()
            raise self._call_failure(pack, items, exc) from None
        if not batched:
            self._found(items[0], reply)
            return
        for item, answer in zip(items, batch_replies(reply, len(items)), strict=True):
            if isinstance(answer, str):
                self._cancel_all()
                urn, type_ = self.spool.entries[item[0]][:2]
                raise _resource_failure(pack, urn, type_, item[2], self.config, self.resource_policies,
                                        _CallError(answer)) from None
            self._found(item, answer)

    def _found(self, item: tuple[int, int, bytes], reply: Any) -> None:
        from policy_gate.analyzer import Diagnostic, decode_diagnostics

        index, generation, _ = item
        if self.sent.get(index) == generation and reply.diagnostics:  # only answers with something to say kept
            urn = self.spool.entries[index][0]
            self.found[index] = [d if d.urn else Diagnostic(d.policy, d.level, urn, d.message)
                                 for d in decode_diagnostics(reply)]

    def _cancel_all(self) -> None:
        for window in self.windows.values():
            for pending, *_ in window:
                pending.cancel()

    def _call_failure(self, pack: PolicyPackProcess, items: list[tuple[int, int, bytes]], exc: Exception) -> GateError:
        """A failed call, named: its resource (and policy), or for a batch the resource that fails alone."""
        if len(items) > 1 and _still_running(pack, exc):
            for index, _, request in items:  # one at a time, through the Analyzer service itself
                try:
                    pack.analyze_encoded(request)
                except Exception as again:  # grpc.RpcError
                    urn, type_ = self.spool.entries[index][:2]
                    return _resource_failure(pack, urn, type_, request, self.config, self.resource_policies, again)
        urn, type_ = self.spool.entries[items[0][0]][:2]
        if len(items) == 1:
            return _resource_failure(pack, urn, type_, items[0][2], self.config, self.resource_policies, exc)
        last = self.spool.entries[items[-1][0]][0]
        return GateError(_failure(pack, f"on one of {len(items)} resources sent together, {urn} ({type_}) to {last}",
                                  exc))

    def read_all(self, packs: list[PolicyPackProcess]) -> None:
        """The plan is read: every provider is known, so the entries waiting for theirs can go."""
        self._join(packs)
        self._take_new()
        self.queue.extend(self.waiting)
        self.waiting = []
        self.reading = False

    def retire(self, pack: PolicyPackProcess) -> None:
        """No more Analyze calls for ``pack``; returns once its calls in flight are answered."""
        if pack in self.serving:
            self.serving.remove(pack)
        window = self.windows.get(pack)
        while window:
            self._collect(pack)

    def finish(self) -> list[Diagnostic]:
        """Send what is left, wait for every answer; the diagnostics of each URN's last step."""
        self._take_new()
        while True:
            self._send()
            self.answered.clear()
            collected = self._collect_done()
            if not any(self.windows.values()) and not self.queue:
                break
            if not collected:
                self.answered.wait(timeout=1.0)
        return [d for index, found in self.found.items() if self.spool.is_latest(index) for d in found]


class _CallError(Exception):
    """The error a batched request raised in the pack, shaped as a failed call (``details``, no ``code``)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def details(self) -> str:
        return self.text

    def code(self) -> None:
        return None


def _start_stack(pack: PolicyPackProcess, share: list[str], message: bytes,
                 config: Mapping[str, tuple[str, dict]]) -> Any:
    """``AnalyzeStack`` on ``pack`` with only ``share`` enabled, under way (a future)."""
    pack.configure(_only(config, set(share)))
    return pack.analyze_stack_encoded.future(message)


def _finish_stack(pack: PolicyPackProcess, share: list[str], running: Any, message: bytes, count: int,
                  config: Mapping[str, tuple[str, dict]]) -> list[Diagnostic]:
    """The answer of a stack call; when it failed, its policies run again one at a time, so the error names
    the one that failed."""
    from policy_gate.analyzer import decode_diagnostics

    size = f"{count} resources ({len(message) / 2**20:.1f} MiB)"
    try:
        return decode_diagnostics(running.result())
    except Exception as exc:  # grpc.RpcError
        failure = exc
    if _still_running(pack, failure) and len(share) > 1:
        for policy in share:
            try:
                pack.configure(_only(config, {policy}))
                pack.analyze_stack_encoded(message)
            except Exception as again:  # grpc.RpcError
                raise GateError(_failure(pack, f"in stack policy '{policy}' over {size}", again)) from None
    named = f"stack policy '{share[0]}'" if len(share) == 1 else f"stack policies {', '.join(share)}"
    raise GateError(_failure(pack, f"in {named} over {size}", failure))


def _analyze_stack(packs: list[PolicyPackProcess], message: bytes, count: int,
                   config: Mapping[str, tuple[str, dict]], policies: list[str]) -> list[Diagnostic]:
    """AnalyzeStack over every resource, the stack policies shared among the packs: one call per pack with its
    share enabled (a runtime that decodes each resource once per call decodes it once per pack)."""
    shares = [(pack, policies[i::len(packs)]) for i, pack in enumerate(packs) if policies[i::len(packs)]]
    running = [_start_stack(pack, share, message, config) for pack, share in shares]
    return [d for (pack, share), call in zip(shares, running, strict=True)
            for d in _finish_stack(pack, share, call, message, count, config)]


def _resource_failure(pack: PolicyPackProcess, urn: str, type_: str, request: bytes,
                      config: Mapping[str, tuple[str, dict]], policies: set[str], exc: Exception) -> GateError:
    """A GateError naming the resource and, when the pack still runs, the resource policy that failed on it."""
    where = f"on resource {urn} ({type_})"
    if _still_running(pack, exc):
        for policy in sorted(policies):
            try:
                pack.configure(_only(config, {policy}))
                pack.analyze_encoded(request)
            except Exception as again:  # grpc.RpcError
                return GateError(_failure(pack, f"{where}, in resource policy '{policy}'", again))
        pack.configure(config)
    return GateError(_failure(pack, where, exc))


def _still_running(pack: PolicyPackProcess, exc: Exception) -> bool:
    """Whether the pack still serves after a failed call (a broken channel: give its process time to end)."""
    code = exc.code().name if hasattr(exc, "code") and exc.code() is not None else ""
    if code == "UNAVAILABLE":
        try:
            pack.process.wait(timeout=5)
        except Exception:  # subprocess.TimeoutExpired: it runs on
            pass
    return pack.process.poll() is None


def _failure(pack: PolicyPackProcess, where: str, exc: Exception) -> str:
    """One line: what failed, where, and why (the gRPC status, the pack's exit or its last stderr line)."""
    details = exc.details() if hasattr(exc, "details") else str(exc)
    code = exc.code().name if hasattr(exc, "code") and exc.code() is not None else ""
    status = pack.exit_status()
    message = f"the policy pack failed {where}: "
    if status is not None:
        message += f"its process {status}" + (" (out of memory?)" if status == "killed by signal 9" else "")
    else:
        message += " ".join(f"{code} {details}".split())
    tail = pack.stderr_tail()
    if tail:
        message += f"; its stderr ends with: {tail}"
    return message


# ---- reporting -----------------------------------------------------------------------------


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(result: GateResult) -> str:
    """A summary.md section: one row per policy, then every violation."""
    counts: dict[str, int] = {}
    for v in result.violations:
        counts[v.policy] = counts.get(v.policy, 0) + 1
    verdict = "**failed**" if result.exit_code else "passed"
    lines = [
        f"### Policy pack `{result.pack_name}` {result.pack_version}: {verdict}",
        "",
        f"{result.resources_checked} resources checked against {len(result.policies)} policies: "
        f"{len(result.mandatory)} mandatory and {len(result.advisory)} advisory violations.",
        "",
        "| policy | level | result |",
        "|---|---|---|",
    ]
    for name, level in result.policies:
        found = counts.get(name, 0)
        status = "skipped" if level == "disabled" else ("pass" if not found else f"{found} violation(s)")
        lines.append(f"| `{name}` | {level} | {status} |")
    if result.violations:
        lines += ["", "#### Violations", ""]
        lines += [f"- **[{v.level}] {v.policy}** `{v.urn}`: {_md(v.message)}" for v in result.violations]
    return "\n".join(lines) + "\n"
