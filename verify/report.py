"""The verdict as a terminal table, Markdown (build/<stack>/verify.md) and JSON."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from verify.findings import FAILURE, OK, WARNING, Finding

EXIT_OK, EXIT_BROKEN, EXIT_UNREADABLE = 0, 1, 2
CHECKS = ("read", "isolation", "devices", "replicas", "drift")
TITLES = {"read": "Reading the cluster", "isolation": "Isolation: device plugin vs DRA kubelet plugin",
          "devices": "Devices published vs expected", "replicas": "Where the replicas are, and why",
          "drift": "Model drift (warnings only)"}
MARK = {FAILURE: "FAIL", WARNING: "WARN", OK: "ok"}


def exit_code(findings: Sequence[Finding]) -> int:
    """1 when a promise is broken; drift and partial answers alone never change the exit code."""
    return EXIT_BROKEN if any(f.severity == FAILURE for f in findings) else EXIT_OK


def _verdict(findings: Sequence[Finding]) -> str:
    failures = sum(f.severity == FAILURE for f in findings)
    warnings = sum(f.severity == WARNING for f in findings)
    if failures:
        return f"{failures} promise(s) broken, {warnings} warning(s)"
    return f"every promise holds ({warnings} warning(s))"


def render_table(stack: str, source: str, findings: Sequence[Finding]) -> str:
    lines = [f"make verify STACK={stack} ({source}): {_verdict(findings)}"]
    for check in CHECKS:
        mine = [f for f in findings if f.check == check]
        if not mine:
            continue
        lines += ["", TITLES[check]]
        width = max(len(f.node or "-") for f in mine)
        pool_width = max(len(f.pool or "-") for f in mine)
        for f in mine:
            lines.append(f"  {MARK[f.severity]:<4}  {f.node or '-':<{width}}  {f.pool or '-':<{pool_width}}  "
                         f"{f.message}")
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(stack: str, source: str, findings: Sequence[Finding]) -> str:
    lines = [f"# make verify: stack `{stack}`", "", f"Source: {source}", "",
             f"**Verdict:** {_verdict(findings)} (exit {exit_code(findings)})"]
    for check in CHECKS:
        mine = [f for f in findings if f.check == check]
        if not mine:
            continue
        lines += ["", f"## {TITLES[check]}", "", "| | node | pool | pods | finding |", "|---|---|---|---|---|"]
        lines += [f"| {MARK[f.severity]} | {_cell(f.node or '-')} | {_cell(f.pool or '-')} | "
                  f"{_cell(', '.join(f.pods) or '-')} | {_cell(f.message)} |" for f in mine]
    return "\n".join(lines) + "\n"


def to_json(stack: str, source: str, findings: Sequence[Finding]) -> dict[str, Any]:
    return {"stack": stack, "source": source, "exit_code": exit_code(findings), "verdict": _verdict(findings),
            "findings": [{"check": f.check, "severity": f.severity, "node": f.node, "pool": f.pool,
                          "pods": list(f.pods), "message": f.message} for f in findings]}
