"""A component imports its cloud's SDK only to build: its class, arguments and checks need none.

The two outputs typed by an SDK resource are string annotations, resolved when Pulumi's analyzer reads the
class or the component is constructed (``gpu_fungibility.deferred_types``); the schema test holds what the
analyzer makes of them.
"""

import json
import subprocess
import sys
import typing
from pathlib import Path

import gpu_fungibility
from gpu_fungibility import deferred_types

ROOT = Path(__file__).resolve().parent.parent
CLOUD_SDKS = ("pulumi_gcp", "pulumi_aws", "pulumi_azure_native")

PROBE = """
import json, sys
import gpu_fungibility

classes = [getattr(gpu_fungibility, name) for name in gpu_fungibility.__all__]
print(json.dumps({"count": len(classes), "loaded": [m for m in CLOUD_SDKS if m in sys.modules]}))
""".replace("CLOUD_SDKS", repr(CLOUD_SDKS))


def test_every_component_and_argument_type_imports_without_a_cloud_sdk():
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["count"] >= 40 and result["loaded"] == [], result


def test_argument_types_are_real_annotations():
    # The argument checks read an Args type's annotations as they are: a string there would check nothing.
    for name in gpu_fungibility.args_modules():
        value = getattr(gpu_fungibility, name)
        if typing.is_typeddict(value):
            for field, annotation in value.__annotations__.items():
                assert not isinstance(annotation, str | typing.ForwardRef), f"{name}.{field}"


def test_sdk_typed_outputs_resolve_to_the_sdk_resources():
    import pulumi_aws
    import pulumi_gcp
    from gpu_fungibility import EksCluster, GkeCluster

    for component in gpu_fungibility.components():
        deferred_types.resolve_annotations(component)
    assert GkeCluster.__annotations__["system_pool"] is pulumi_gcp.container.NodePool
    assert EksCluster.__annotations__["node_role_attachments"] == list[pulumi_aws.iam.RolePolicyAttachment]
    left = [f"{k.__name__}.{n}" for c in gpu_fungibility.components() for k in c.__mro__
            if k.__module__.startswith("gpu_fungibility.") for n, a in vars(k).get("__annotations__", {}).items()
            if isinstance(a, str)]
    assert not left
