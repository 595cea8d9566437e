"""Serve the pack: the engine (or policy_gate) runs this and talks gRPC to it."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the project root: rules reuse its facts

from pulumi_policy import EnforcementLevel, PolicyPack  # noqa: E402

from policies.rules import PACK_NAME, POLICIES  # noqa: E402

PolicyPack(name=PACK_NAME, enforcement_level=EnforcementLevel.MANDATORY, policies=POLICIES)
