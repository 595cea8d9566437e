"""Write a plan's files: ``plan.json``, ``manifests/`` and ``summary.md``, with the policy pack's verdict and the
simulated placement, swapped into ``build/<stack>/`` whole once complete; and set an earlier plan's outputs aside
when a plan fails. ``make plan`` (:mod:`offline_plan.__main__`) is its command; tests and other tools call it here.
"""

from __future__ import annotations

import concurrent.futures
import importlib
import importlib.util
import shutil
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from offline_plan import before_deploy, comment_size, planjson, summary
from offline_plan import manifests as manifest_mod
from offline_plan.run import PlanRun
from output_files import OutputError, check_path, write_text
from stacks.stack_files import output_dir


def set_aside_stale(out_root: Path, stack: str, reason: str) -> None:
    """Move the outputs of an earlier plan (``<out_root>/<stack>/``) to ``<stack>.failed/`` with a ``FAILED`` note.

    Nothing is left at ``out_dir`` that a reviewer, a script or the offline diff could read
    as the result of the plan that just failed. Without earlier outputs nothing is written.
    The folder is :func:`stacks.stack_files.output_dir`'s (checked here, where it is renamed): a stack
    name that is a path raises StackNameError and nothing moves.
    """
    out_dir = output_dir(stack, out_root)
    if not out_dir.is_dir():
        return
    failed = out_dir.with_name(out_dir.name + ".failed")
    shutil.rmtree(failed, ignore_errors=True)
    out_dir.rename(failed)
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    try:
        write_text(failed / "FAILED",
                   f"The plan of stack `{out_dir.name}` failed at {when}: {reason}\n"
                   "The files in this folder are from the plan before it; they do not describe the current "
                   "code or config.\n", root=out_dir.parent)
    except OutputError as exc:
        print(f"note: the earlier outputs are in {failed}, without a FAILED note ({exc})", file=sys.stderr)


class EarlyPack:
    """The policy pack, started in the background while the program runs.

    Booting the pack's interpreter takes about as long as the program's own
    imports; on two cores the two overlap. ``get()`` returns the running pack,
    or None when the gate should start its own (or there is no pack).
    """

    def __init__(self, enabled: bool) -> None:
        self._future: concurrent.futures.Future | None = None
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        if enabled and _available("policy_gate"):
            from policy_gate import PolicyPackProcess

            self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=1)
            self._future = self._executor.submit(PolicyPackProcess)

    def get(self) -> Any:
        if self._future is None:
            return None
        try:
            return self._future.result()
        except Exception:  # the gate starts its own pack and reports why it cannot
            return None

    def __enter__(self) -> EarlyPack:
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._future is not None:
            pack = self.get()
            if pack is not None:
                pack.close()
        if self._executor is not None:
            self._executor.shutdown(wait=True)


def write_plan(run: PlanRun, out_dir: Path, *, policy: bool = True, simulate: bool = True,
               pack: EarlyPack | None = None) -> int:
    """Write the plan's files into ``out_dir`` (replacing it) and return the exit code.

    The policy pack works in its own process, so the gate runs in a thread while this one
    validates manifests and simulates; its verdict is joined before anything is written.
    """
    document = planjson.plan_document(run)
    found = manifest_mod.manifests(run)
    objects = [m.obj for m in found]
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as background:
        gate_future = (background.submit(_run_gate, document, pack)
                       if policy and _available("policy_gate") else None)
        version = run.config.cluster.minor_version
        schema_note = manifest_mod.schema_version_note(version)
        if schema_note:
            print(f"warning: {schema_note}", file=sys.stderr)
        schema = [manifest_mod.validate(m, version) for m in found]
        sections: list[tuple[str, str]] = []
        advisories: list[str] = []
        if simulate and _available("simulator") and run.config.workloads:
            sim = importlib.import_module("simulator")
            placed = sim.simulate(run.config, objects)
            advisories = importlib.import_module("simulator.advisories").replica_advisories(placed)
            sections.append(("Simulated placement", sim.render_markdown(placed)))
        gate_code, gate_section = gate_future.result() if gate_future else (0, None)
    if gate_section:
        sections.insert(0, ("Policy pack", gate_section))

    invalid = [r for r in schema if r.status == "invalid"]
    for result in invalid:
        print(f"schema: {result.filename}: {result.detail}", file=sys.stderr)
    exit_code = max(1 if invalid else 0, gate_code)

    root = out_dir.parent
    try:
        root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.partial-", dir=root))
    except OSError as exc:
        raise OutputError(root, f"cannot hold a new plan ({exc.strerror or exc})") from None
    try:
        write_text(staging / "plan.json", planjson.dumps(document), root=root)
        for m in found:
            write_text(staging / "manifests" / m.filename, manifest_mod.to_yaml(m.obj), root=root)
        report = summary.render(run, objects, schema, sections, advisories)
        if comment_size.was_cut(report):
            print(f"note: summary.md is cut to GitHub's {comment_size.GITHUB_COMMENT_LIMIT:,}-character comment limit",
                  file=sys.stderr)
        write_text(staging / "summary.md", report, root=root)
        _swap_in(staging, out_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    shutil.rmtree(out_dir.with_name(out_dir.name + ".failed"), ignore_errors=True)

    for d in run.diagnostics:
        print(f"{d.severity}: {d.message}", file=sys.stderr)
    for note in run.notes:
        print(f"note: {note}", file=sys.stderr)
    for line in before_deploy.terminal(run):
        print(line)
    counts = document["changeSummary"]
    fit = "".join(f"; advisory: {a.split('; ')[0]}" for a in advisories)
    print(f"plan for {run.stack}: {counts.get('create', 0)} to create; "
          f"{len(found)} manifests ({len(invalid)} invalid){fit} -> {out_dir}")
    return exit_code


def _swap_in(staging: Path, out_dir: Path) -> None:
    """Replace ``out_dir`` by the complete ``staging`` folder (same file system: two renames).

    ``out_dir`` is checked again here (no symbolic link or file planted since the run began); when the
    second rename fails, the earlier outputs are put back."""
    check_path(out_dir / "plan.json", out_dir.parent)
    retired = None
    try:
        if out_dir.exists():
            retired = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.previous-", dir=out_dir.parent))
            out_dir.rename(retired / out_dir.name)
        try:
            staging.rename(out_dir)
        except OSError:
            if retired is not None:
                (retired / out_dir.name).rename(out_dir)
            raise
    except OSError as exc:
        raise OutputError(out_dir, f"cannot be replaced by the new plan ({exc.strerror or exc})") from None
    finally:
        if retired is not None:
            shutil.rmtree(retired, ignore_errors=True)


def _run_gate(document: dict[str, Any], pack: EarlyPack | None) -> tuple[int, str]:
    """(exit code contribution, summary section) of the policy pack over the plan."""
    gate = importlib.import_module("policy_gate")
    try:
        running = pack.get() if pack is not None else None
        result = gate.run_gate(document, pack=running) if running else gate.run_gate(document)
    except gate.GateError as exc:
        # A gate that cannot run is a failed gate, never a silent pass.
        print(f"policy pack: could not run: {exc}", file=sys.stderr)
        return 1, f"**The policy pack could not run:** {exc}\n"
    for line in _gate_lines(result):
        print(line)
    return (1 if result.exit_code else 0), gate.render_markdown(result)


def _gate_lines(result: Any) -> list[str]:
    return [f"[{v.level}] {v.policy}  {v.urn}: {v.message}" for v in result.violations]


def _available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None
