"""The config refuses the DeviceClass CEL the API server refuses, and accepts what it accepts.

The API server's own answers are recorded in tests/fixtures/differential/reduced-admission.json (kube-apiserver
v1.35.4 refusing ``q.sign()``, an invalid regex literal and a list literal of two types).
"""

from __future__ import annotations

import copy

import pytest

from stacks.loader import ConfigError, parse_stack_config
from tests.test_config import GKE

MEMORY = "device.capacity['gpu.nvidia.com'].memory"
PRODUCT = "device.attributes['gpu.nvidia.com'].productName"


def _with_expressions(*expressions: str) -> dict:
    doc = copy.deepcopy(GKE)
    doc["deviceClasses"] = {"big-gpu": {"expressions": list(expressions)}}
    return doc


@pytest.mark.parametrize("expression, words", [
    (f"{MEMORY}.sign() == 1", "no matching overload for 'sign'"),
    (f"{PRODUCT}.matches('[')", "error parsing regexp"),
    (f"{PRODUCT} in ['NVIDIA H100 80GB HBM3', 1]", "expected type 'string' but found 'int'"),
    (f"{MEMORY} >= quantity('40Gi')", "no matching overload for '_>=_'"),
])
def test_cel_the_api_server_refuses_is_a_config_error(expression, words):
    with pytest.raises(ConfigError) as raised:
        parse_stack_config(_with_expressions(f"{PRODUCT} != ''", expression))
    matching = [m for p, m in raised.value.issues if p == "deviceClasses.big-gpu.expressions[1]"]
    assert matching and words in matching[0], raised.value.issues


@pytest.mark.parametrize("expression", [
    f"sign({MEMORY}) == 1",
    f"{PRODUCT}.matches('^NVIDIA (H100|H200)')",
    f"sets.contains(['NVIDIA H100 80GB HBM3'], [{PRODUCT}])",
    "device.attributes['gpu.nvidia.com'].?productName.orValue('') != ''",
    f"{MEMORY}.compareTo(quantity('40Gi')) >= 0",
])
def test_cel_the_api_server_accepts_is_accepted(expression):
    parse_stack_config(_with_expressions(expression))
