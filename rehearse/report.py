"""The rehearsal's report: a terminal table, ``build/<stack>/rehearse.md`` (PR-comment ready) and JSON.

Exit codes: 0 every promise observed, 1 a promise broken (a FAIL finding), 2 the rehearsal could not run.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from offline_plan.comment_size import fit_comment
from rehearse.judge import FAIL, NOTE
from rehearse.run import Rehearsal

EXIT_OK, EXIT_BROKEN, EXIT_CANNOT = 0, 1, 2
_MARK = {"ok": "ok", FAIL: "FAIL", NOTE: "note"}


def exit_code(result: Rehearsal) -> int:
    return EXIT_BROKEN if result.broken else EXIT_OK


def verdict(result: Rehearsal) -> str:
    failures = sum(f.severity == FAIL for f in result.findings)
    if failures:
        return f"{failures} broken promise{'s' if failures != 1 else ''}"
    return "every promise observed"


def _header(result: Rehearsal) -> str:
    return (f"rehearsal of stack {result.stack} ({result.cloud.upper()}, Kubernetes {result.minor}, "
            f"control plane {result.version or 'not started'}): {verdict(result)}")


def render_table(result: Rehearsal) -> str:
    lines = [_header(result), ""]
    for phase in result.phases:
        lines.append(f"== {phase.name} ({result.timings.get(phase.name.split(' ')[0], 0):.1f} s)")
        for f in phase.findings:
            lines.append(f"  {_MARK.get(f.severity, f.severity):4}  {f.message}")
    if result.not_applied:
        lines += ["", "changed or not applied:"] + [f"  - {t}" for t in result.not_applied]
    if result.notes:
        lines += ["", "notes:"] + [f"  - {t}" for t in result.notes]
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(result: Rehearsal) -> str:
    icon = "FAIL" if result.broken else "ok"
    lines = [f"## Rehearsal of `{result.stack}`: {verdict(result)} ({icon})", "",
             f"Kubernetes' own kube-apiserver, kube-scheduler and controllers ({result.version or 'not started'}, "
             f"the stack's minor {result.minor}) ran the plan on nodes shaped like {result.cloud.upper()}'s; "
             "each replica's placement is the real scheduler's, beside `make simulate`'s.", ""]
    for phase in result.phases:
        if phase.comparisons:
            lines += [f"### {phase.name}", "", "| replica | Kubernetes | simulator | agrees |", "|---|---|---|---|"]
            for c in phase.comparisons:
                o = c.observed
                lines.append(f"| {o.workload} #{o.replica} | {_cell(o.text)} | {_cell(c.predicted)} | "
                             f"{'yes' if c.agrees else '**no**'}{_cell(' - ' + c.why) if c.why else ''} |")
            lines.append("")
        others = [f for f in phase.findings if not (phase.comparisons and f.check == phase.name
                                                    and f.message.startswith(tuple(
                                                        f"{c.observed.workload} #{c.observed.replica}: Kubernetes"
                                                        for c in phase.comparisons)))]
        if others:
            if not phase.comparisons:
                lines += [f"### {phase.name}", ""]
            lines += [f"- {'**FAIL**' if f.severity == FAIL else f.severity}: {f.message}" for f in others]
            lines.append("")
    if result.not_applied:
        lines += ["### Changed or not applied", ""] + [f"- {t}" for t in result.not_applied] + [""]
    if result.notes:
        lines += ["### Notes", ""] + [f"- {t}" for t in result.notes] + [""]
    timings = ", ".join(f"{k} {v:.1f} s" for k, v in result.timings.items())
    if timings:
        lines += [f"Phases: {timings}.", ""]
    return fit_comment("\n".join(lines), f"The whole report: `make rehearse STACK={result.stack}`.")


def to_json(result: Rehearsal) -> dict[str, Any]:
    return {
        "stack": result.stack, "cloud": result.cloud, "kubernetesMinor": result.minor,
        "controlPlane": result.version, "verdict": verdict(result), "exitCode": exit_code(result),
        "phases": [{
            "name": p.name,
            "findings": [{"check": f.check, "severity": f.severity, "message": f.message} for f in p.findings],
            "replicas": [{"workload": c.observed.workload, "replica": c.observed.replica, "pod": c.observed.pod,
                          "status": c.observed.status, "node": c.observed.node, "pool": c.observed.pool,
                          "alternatives": list(c.observed.alternatives), "devices": list(c.observed.devices),
                          "message": c.observed.message, "simulator": c.predicted, "agrees": c.agrees,
                          "why": c.why} for c in p.comparisons],
        } for p in result.phases],
        "notApplied": result.not_applied, "notes": result.notes, "timingsSeconds": result.timings,
    }


def write_report(out_dir: Path, name: str, text: str) -> Path:
    """Write ``out_dir/name`` without following a symbolic link (a link there is replaced, never written through)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    if out_dir.is_symlink():
        raise OSError(f"{out_dir} is a symbolic link; outputs are never written through one")
    handle, temporary = tempfile.mkstemp(prefix=f".{name}.", dir=out_dir)
    try:
        with os.fdopen(handle, "w") as f:
            f.write(text)
        os.replace(temporary, out_dir / name)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return out_dir / name
