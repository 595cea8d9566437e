"""Parsing a stack's config, checking its rules and the components' checks import no cloud SDK.

The model, the rules that span keys and each cloud's own rules (``stacks/arguments/<cloud>.py``) are plain
Python over the config; the components' checks import the component modules, which import their cloud's
provider SDK (seconds) only where they build resources. Tools that read a stack without building it stay
fast, and a cloud's SDK is loaded only by the stacks that deploy on it. (The Kubernetes SDK is no cloud's.)
"""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLOUD_SDKS = ("pulumi_gcp", "pulumi_aws", "pulumi_azure_native")

PROBE = """
import json, sys
from pathlib import Path
from offline_plan.run import read_stack_file
from stacks.loader import ConfigError, parse_stack_config
from stacks.rules import config_warnings

found = {}
for stack in ("dev", "prod", "eks-dev", "aks-dev"):
    raw = read_stack_file(stack, Path(".")).namespace_config
    config_warnings(parse_stack_config(raw, components=False))
    # A config each cloud's own rules refuse: its pool takes the system pool's name, a zone is wrong.
    raw["nodePools"]["system"] = next(iter(raw["nodePools"].values()))
    raw["cluster"]["zones"] = [*raw["cluster"]["zones"], "nowhere-9z"]
    try:
        parse_stack_config(raw, components=False)
    except ConfigError as exc:
        found[stack] = [path for path, _ in exc.issues]
print(json.dumps({"loaded": [m for m in CLOUD_SDKS if m in sys.modules], "found": found}))
""".replace("CLOUD_SDKS", repr(CLOUD_SDKS))


def test_parsing_and_the_rules_of_every_shipped_stack_import_no_cloud_sdk():
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["loaded"] == [], result
    # The clouds' own rules still ran (EKS and AKS name their system pool; every cloud checks its zones).
    assert "nodePools.system" in result["found"]["eks-dev"] and "nodePools.system" in result["found"]["aks-dev"]
    for stack, paths in result["found"].items():
        assert any(path.startswith("cluster.zones") for path in paths), (stack, paths)


FULL_PROBE = """
import json, sys
from pathlib import Path
from offline_plan.run import read_stack_file
from stacks.loader import parse_stack_config

for stack in ("dev", "prod", "eks-dev", "aks-dev"):
    parse_stack_config(read_stack_file(stack, Path(".")).namespace_config)
print(json.dumps([m for m in CLOUD_SDKS if m in sys.modules]))
""".replace("CLOUD_SDKS", repr(CLOUD_SDKS))


def test_the_full_validation_of_every_shipped_stack_imports_no_cloud_sdk():
    """The components' checks too: the stack's validation imports every component it plans, not its SDK."""
    done = subprocess.run([sys.executable, "-c", FULL_PROBE], cwd=ROOT, capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_the_components_checks_still_run_by_default():
    from stacks.loader import ConfigError, parse_stack_config

    raw = {"cluster": {"cloud": "eks", "name": "c", "location": "us-west-2", "zones": ["us-west-2a", "us-west-2b"]},
           "nodePools": {"t4": {"instanceTypes": ["g4dn.xlarge"], "accelerator": {"type": "nvidia-tesla-t4"},
                                "autoscaling": {"min": 0, "max": 1}, "diskSizeGb": 10}}}
    parse_stack_config(raw, components=False)  # the disk size is the node group component's own rule
    try:
        parse_stack_config(raw)
    except ConfigError as exc:
        assert "nodePools.t4.diskSizeGb" in {path for path, _ in exc.issues}, exc.issues
    else:
        raise AssertionError("the node group's check did not run")
