"""The offline policy gate: the project's CrossGuard pack over a preview-shaped plan, via gRPC.

``python -m policy_gate <plan.json> [--policy-config file.json]`` or, from code,
:func:`run_gate` and :func:`render_markdown`.
"""

from typing import Any

from policy_gate.gate import GateError, GateResult, Violation, render_markdown, run_gate

__all__ = ["GateError", "GateResult", "PolicyPackProcess", "Violation", "render_markdown", "run_gate"]


def __getattr__(name: str) -> Any:
    if name == "PolicyPackProcess":  # loads gRPC; imported on first use
        from policy_gate.analyzer import PolicyPackProcess

        return PolicyPackProcess
    raise AttributeError(name)
