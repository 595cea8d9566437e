"""Run the policy pack over a preview-shaped plan, the way ``pulumi preview --policy-pack`` does.

Sequence per run: ``GetAnalyzerInfo``; ``Configure`` with every policy's
enforcement level and properties (the pack's defaults, overridden by a
``--policy-pack-config`` style JSON); ``Analyze`` for each resource;
``AnalyzeStack`` with all of them. Any mandatory violation fails the gate.

At scale (docs/policies.md, "The gate over large previews"): the plan is
streamed into a spool of requests encoded once; ``Analyze`` calls are pipelined
(several in flight) over one pack process per ``RESOURCES_PER_JOB`` resources
(at most ``jobs``); ``AnalyzeStack`` runs over one message read from the spool, the stack policies
shared among the processes (one call each); a failed call is run again one
policy at a time, so the error names the policy. No call but the small ones
has a deadline: a pack that dies ends its calls at once, and the error says
which resource or policy was being checked and how the process ended.
"""

from __future__ import annotations

import collections
import concurrent.futures
import os
import tempfile
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
    #: Seconds per phase: "read" (plan streamed and encoded), "analyze" (resource policies), "stack".
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
#: Above this stack message size, the stack policies run in one pack process: each process holding the
#: whole stack decoded (about 50 KB per resource of a GPU stack) would multiply the memory by the processes.
SHARED_STACK_UP_TO = 32 * 2**20


def run_gate(plan: Mapping[str, Any] | str | Path, policy_config: Mapping[str, Any] | str | Path | None = None,
             *, pack: PolicyPackProcess | None = None, pack_dir: str | Path | None = None,
             jobs: int | None = None) -> GateResult:
    """Check a plan (dict or path) against the pack. Starts and stops the pack unless ``pack`` is given.

    A file is streamed into an on-disk spool of encoded requests (memory: one step and the URN index), then
    ``Analyze`` runs for every resource, pipelined over up to ``jobs`` pack processes, and ``AnalyzeStack``
    over one message built from the spool, the stack policies shared among the processes (one of them for a
    large stack).
    """
    user_config = read_policy_config(policy_config)
    import grpc

    from policy_gate.analyzer import AnalyzerError, PolicyPackProcess

    started: list[PolicyPackProcess] = []
    boot = None
    if pack is None:  # the first pack boots while the plan is read
        boot = concurrent.futures.ThreadPoolExecutor(max_workers=4)
        first = boot.submit(PolicyPackProcess, **({"pack_dir": pack_dir} if pack_dir else {}))
    try:
        began = time.perf_counter()
        try:
            spool = Spool.of(plan)
        except PlanError as exc:
            raise GateError(str(exc)) from None
        with spool:
            if pack is not None:
                packs = [pack]
            else:
                started.append(first.result())
                wanted = max(1, min(jobs or DEFAULT_JOBS, spool.count // RESOURCES_PER_JOB))
                if wanted > 1:
                    more = [boot.submit(PolicyPackProcess, **({"pack_dir": pack_dir} if pack_dir else {}))
                            for _ in range(wanted - 1)]
                    started.extend(f.result() for f in more)
                packs = list(started)
            read = time.perf_counter() - began
            result = _run(packs, spool, user_config)
            result.timings = {"read": read, **result.timings}
            return result
    except AnalyzerError as exc:
        raise GateError(str(exc)) from None
    except grpc.RpcError as exc:  # GetAnalyzerInfo or Configure
        detail = exc.details() if hasattr(exc, "details") else str(exc)
        raise GateError(f"the policy pack failed: {' '.join(str(detail).split())}") from None
    finally:
        if boot is not None:
            if not started and first.done() and first.exception() is None:
                started.append(first.result())
            elif not first.done():
                first.add_done_callback(lambda f: f.exception() is None and f.result().close())
            for process in started:
                process.close()
            boot.shutdown(wait=False)


class Spool:
    """The plan's resources, each encoded once (see analyzer.encode_*), in a temporary file.

    In memory: per resource its URN, type, provider reference and where its bytes are; the providers' whole
    resources (few, needed by every request); the index of each URN's last step (a URN's last step wins).
    """

    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile(prefix="policy-gate-")
        self.entries: list[tuple[str, str, str, int, int]] = []  # (urn, type, provider ref, core, extra)
        self.latest: dict[str, int] = {}
        self.providers: dict[str, PlanResource] = {}
        self._provider_bytes: dict[str, bytes] = {}

    @classmethod
    def of(cls, plan: Mapping[str, Any] | str | Path) -> Spool:
        from policy_gate.analyzer import encode_core, encode_extra

        spool = cls()
        try:
            for _, resource in iter_plan_resources(plan):
                core, extra = encode_core(resource), encode_extra(resource)
                spool.file.write(core)
                spool.file.write(extra)
                spool.latest[resource.urn] = len(spool.entries)
                spool.entries.append((resource.urn, resource.type, resource.provider, len(core), len(extra)))
                if resource.type.startswith("pulumi:providers:"):
                    spool.providers[resource.urn] = resource
        except BaseException:
            spool.close()
            raise
        spool.file.flush()
        return spool

    @property
    def count(self) -> int:
        return len(self.latest)

    def stack_urn(self) -> str:
        return next((urn for i, (urn, type_, *_) in enumerate(self.entries)
                     if type_ == STACK_TYPE and self.latest[urn] == i), "")

    def provider_bytes(self, reference: str) -> bytes:
        if reference not in self._provider_bytes:
            from policy_gate.analyzer import encode_provider

            self._provider_bytes[reference] = encode_provider(reference, self.providers)
        return self._provider_bytes[reference]

    def stack_message_size(self) -> int:
        """The size of the AnalyzeStackRequest holding every resource, known before it is built."""
        total = 0
        for i, (urn, _, provider, core, extra) in enumerate(self.entries):
            if self.latest[urn] == i:
                size = core + len(self.provider_bytes(provider)) + extra
                total += 1 + len(_varint(size)) + size
        return total

    def __iter__(self) -> Iterator[tuple[str, str, bytes, bytes]]:
        """(urn, type, AnalyzeRequest, AnalyzerResource) of each resource, in order, a URN at its last step."""
        self.file.seek(0)
        position = 0
        for i, (urn, type_, provider, core, extra) in enumerate(self.entries):
            if self.latest[urn] != i:
                position += core + extra
                continue
            if self.file.tell() != position:
                self.file.seek(position)
            data = self.file.read(core + extra)
            position += core + extra
            head = data[:core] + self.provider_bytes(provider)
            yield urn, type_, head, head + data[core:]

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> Spool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _varint(value: int) -> bytes:
    from policy_gate.analyzer import _varint as encode

    return encode(value)


def _only(config: Mapping[str, tuple[str, dict[str, Any]]], names: set[str]) -> dict[str, tuple[str, dict[str, Any]]]:
    """The config with every policy but ``names`` disabled (properties kept)."""
    return {name: (level if name in names else "disabled", props) for name, (level, props) in config.items()}


def _run(packs: list[PolicyPackProcess], spool: Spool, user_config: Mapping[str, Any]) -> GateResult:
    info = packs[0].info()
    config = resolve_config(info, user_config)
    kinds = {p.name: p.kind for p in info.policies}
    resource_policies = {n for n, k in kinds.items() if k == "resource" and config[n][0] != "disabled"}
    stack_policies = [p.name for p in info.policies if p.kind == "stack" and config[p.name][0] != "disabled"]
    size = spool.stack_message_size() if stack_policies else 0
    if size > MAX_STACK_MESSAGE:
        raise GateError(
            f"the plan's {spool.count} resources make a stack-level request of {size / 2**20:.0f} MiB; the policy "
            f"runtime accepts at most {MAX_STACK_MESSAGE / 2**20:.0f} MiB in one message (pulumi-policy's gRPC "
            f"limit), so the stack policies ({', '.join(stack_policies)}) cannot be run over it: split the stack, "
            "or disable them with --policy-config")
    stack_file = tempfile.TemporaryFile(prefix="policy-gate-stack-")
    timings: dict[str, float] = {}
    try:
        began = time.perf_counter()
        diagnostics = _analyze_resources(packs, spool, config, resource_policies, stack_file if stack_policies
                                         else None)
        timings["analyze"] = time.perf_counter() - began
        if stack_policies:
            began = time.perf_counter()
            stack_file.seek(0)
            message = stack_file.read()
            stack_file.close()
            stack_packs = packs if len(message) <= SHARED_STACK_UP_TO else packs[:1]
            diagnostics += _analyze_stack(stack_packs, message, spool.count, config, stack_policies)
            del message
            timings["stack"] = time.perf_counter() - began
    finally:
        stack_file.close()
        for pack in packs:  # a pack handed in stays configured as the run saw it
            if pack.process.poll() is None:
                pack.configure(config)
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


def _analyze_resources(packs: list[PolicyPackProcess], spool: Spool, config: Mapping[str, tuple[str, dict]],
                       resource_policies: set[str], stack_file: Any) -> list[Diagnostic]:
    """Analyze every resource (when a resource policy is on), pipelined over the packs; frame the stack message."""
    from policy_gate.analyzer import Diagnostic, decode_diagnostics, frame

    for pack in packs:
        pack.configure(config)
    found: list[Diagnostic] = []
    windows: list[collections.deque] = [collections.deque() for _ in packs]

    def collect(slot: int) -> None:
        future, urn, type_, request = windows[slot].popleft()
        try:
            reply = future.result()
        except Exception as exc:  # grpc.RpcError: name the resource, then the policy
            for window in windows:
                for pending, *_ in window:
                    pending.cancel()
            raise _resource_failure(packs[slot], urn, type_, request, config, resource_policies, exc) from None
        found.extend(d if d.urn else Diagnostic(d.policy, d.level, urn, d.message) for d in decode_diagnostics(reply))

    for index, (urn, type_, request, item) in enumerate(spool):
        if stack_file is not None:
            stack_file.write(frame(1, item))
        if not resource_policies:
            continue
        slot = index % len(packs)
        if len(windows[slot]) >= WINDOW:
            collect(slot)
        windows[slot].append((packs[slot].analyze_encoded.future(request), urn, type_, request))
    for slot, window in enumerate(windows):
        while window:
            collect(slot)
    return found


def _analyze_stack(packs: list[PolicyPackProcess], message: bytes, count: int,
                   config: Mapping[str, tuple[str, dict]], policies: list[str]) -> list[Diagnostic]:
    """AnalyzeStack over every resource, the stack policies shared among the packs: one call per pack with its
    share enabled (a runtime that decodes each resource once per call decodes it once per pack); when a
    call fails, its policies run again one at a time, so the error names the one that failed."""
    from policy_gate.analyzer import decode_diagnostics

    shares = [policies[i::len(packs)] for i in range(len(packs))]
    size = f"{count} resources ({len(message) / 2**20:.1f} MiB)"

    def run(pack: PolicyPackProcess, share: list[str]) -> list[Diagnostic]:
        pack.configure(_only(config, set(share)))
        try:
            return decode_diagnostics(pack.analyze_stack_encoded(message))
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

    if len(packs) == 1:
        return run(packs[0], shares[0])
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(packs)) as pool:
        futures = [pool.submit(run, pack, share) for pack, share in zip(packs, shares, strict=True) if share]
        return [d for future in futures for d in future.result()]


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
