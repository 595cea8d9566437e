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

The gate's public names, from the modules that hold them: :mod:`policy_gate.config` (the policy config),
:mod:`policy_gate.run` (a run: the pack processes, the calls in :mod:`policy_gate.analysis`, the requests in
:mod:`policy_gate.spool`), :mod:`policy_gate.result` (what it found) and :mod:`policy_gate.render` (Markdown).
"""

from policy_gate.config import LEVELS, read_policy_config, resolve_config
from policy_gate.render import render_markdown
from policy_gate.result import STACK_PLACEHOLDER, GateError, GateResult, Violation
from policy_gate.run import run_gate
from policy_gate.spool import Spool

__all__ = ["LEVELS", "STACK_PLACEHOLDER", "GateError", "GateResult", "Spool", "Violation", "read_policy_config",
           "render_markdown", "resolve_config", "run_gate"]
