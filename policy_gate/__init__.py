"""The offline policy gate: the project's CrossGuard pack over a preview-shaped plan, via gRPC.

``python -m policy_gate <plan.json> [--policy-config file.json]`` or, from code,
:func:`run_gate` and :func:`render_markdown`.
"""

from policy_gate.analyzer import PolicyPackProcess
from policy_gate.gate import GateError, GateResult, Violation, render_markdown, run_gate

__all__ = ["GateError", "GateResult", "PolicyPackProcess", "Violation", "render_markdown", "run_gate"]
