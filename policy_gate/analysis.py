"""The calls of a run: every resource's ``Analyze``, pipelined (batched where the pack allows) over the pack
processes as the plan is read, and ``AnalyzeStack``, shared among them or on a process kept for it. A failed
call is run again one resource, then one policy, at a time, so the error names them."""

from __future__ import annotations

import collections
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from policy_gate.config import only, resolve_config
from policy_gate.result import GateError
from policy_gate.spool import Spool, provider_urn

if TYPE_CHECKING:  # gRPC and the Pulumi protos load only when a pack is run (fast errors for bad input)
    from policy_gate.analyzer import Diagnostic, PackInfo, PolicyPackProcess

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


class Analysis:
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
            again = [i for i in self.sent if provider_urn(self.spool.entries[i][2]) in changed]
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


def start_stack(pack: PolicyPackProcess, share: list[str], message: bytes,
                 config: Mapping[str, tuple[str, dict]]) -> Any:
    """``AnalyzeStack`` on ``pack`` with only ``share`` enabled, under way (a future)."""
    pack.configure(only(config, set(share)))
    return pack.analyze_stack_encoded.future(message)


def finish_stack(pack: PolicyPackProcess, share: list[str], running: Any, message: bytes, count: int,
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
                pack.configure(only(config, {policy}))
                pack.analyze_stack_encoded(message)
            except Exception as again:  # grpc.RpcError
                raise GateError(_failure(pack, f"in stack policy '{policy}' over {size}", again)) from None
    named = f"stack policy '{share[0]}'" if len(share) == 1 else f"stack policies {', '.join(share)}"
    raise GateError(_failure(pack, f"in {named} over {size}", failure))


def analyze_stack(packs: list[PolicyPackProcess], message: bytes, count: int,
                   config: Mapping[str, tuple[str, dict]], policies: list[str]) -> list[Diagnostic]:
    """AnalyzeStack over every resource, the stack policies shared among the packs: one call per pack with its
    share enabled (a runtime that decodes each resource once per call decodes it once per pack)."""
    shares = [(pack, policies[i::len(packs)]) for i, pack in enumerate(packs) if policies[i::len(packs)]]
    running = [start_stack(pack, share, message, config) for pack, share in shares]
    return [d for (pack, share), call in zip(shares, running, strict=True)
            for d in finish_stack(pack, share, call, message, count, config)]


def _resource_failure(pack: PolicyPackProcess, urn: str, type_: str, request: bytes,
                      config: Mapping[str, tuple[str, dict]], policies: set[str], exc: Exception) -> GateError:
    """A GateError naming the resource and, when the pack still runs, the resource policy that failed on it."""
    where = f"on resource {urn} ({type_})"
    if _still_running(pack, exc):
        for policy in sorted(policies):
            try:
                pack.configure(only(config, {policy}))
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
