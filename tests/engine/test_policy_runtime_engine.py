"""Under `pulumi preview --policy-pack`, the pack's runtime (policies/runtime.py) gives the real engine the
verdicts pulumi-policy's runtime as it ships gives.

Each shipped stack, and a stack the pack refuses, is previewed by Pulumi's own CLI in both modes (a first
preview, cloud outputs unknown; an update preview) twice: with the pack's runtime, and with the pack where
pulumi-policy reports a version the patch was not tested against, so that it refuses to install (which the
engine shows: the pack's line on stderr) and the runtime runs as it ships. The policy events are the same.
"""

from __future__ import annotations

import pytest

from offline_plan.run import ROOT
from pulumi_engine.preview import preview
from tests.engine.test_real_engine import BROKEN, _broken_stack, _where
from tools.stacks_in_ci import SHIPPED_STACKS

#: What the pack writes when the patch refuses to install (policies/runtime.py, ``_refuse``).
REFUSED = "is not the minor the runtime's patch was tested against"
UNTESTED_VERSION = '''
import importlib.metadata as metadata

_version = metadata.version
metadata.version = lambda name: "1.22.0" if name.replace("_", "-") == "pulumi-policy" else _version(name)
'''
CASES = {**{stack: (stack, None) for stack in SHIPPED_STACKS},
         **{case: (stack, change) for case, (stack, change, _) in BROKEN.items()}}


def _verdicts(run) -> list[tuple[str, str, str, str]]:
    return sorted((e.get("policyName", ""), e.get("enforcementLevel", ""), e.get("resourceUrn", ""),
                   e.get("message", "")) for e in run.policy_events)


def _refused(run) -> bool:
    return any(REFUSED in str(e.get("diagnosticEvent", {}).get("message", "")) for e in run.events)


@pytest.mark.parametrize("mode", ["first", "update"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_engine_gets_the_verdicts_of_the_runtime_as_it_ships(engine_tools, tmp_path, monkeypatch, case, mode):
    stack, change = CASES[case]
    stack_file = _broken_stack(tmp_path, stack, change) if change else None
    patched = preview(stack, mode, tools=engine_tools, out=tmp_path / "patched", root=ROOT, stack_file=stack_file)
    (tmp_path / "untested" / "site").mkdir(parents=True)
    (tmp_path / "untested" / "site" / "sitecustomize.py").write_text(UNTESTED_VERSION)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "untested" / "site"))
    shipped = preview(stack, mode, tools=engine_tools, out=tmp_path / "untested" / "engine", root=ROOT,
                      stack_file=stack_file)
    assert patched.ok == shipped.ok == (change is None), _where(patched if change is None else shipped)
    assert _refused(shipped) and not _refused(patched), _where(shipped)
    assert _verdicts(patched) == _verdicts(shipped)
    assert bool(patched.mandatory) == (change is not None)

