"""policies.decoding.struct_to_dict: json_format.MessageToDict's answer for a Struct, on real plans and edge cases."""

import math

import pytest
from google.protobuf import json_format, struct_pb2

from offline_plan.planjson import plan_document
from offline_plan.run import run_stack_file
from policies.decoding import struct_to_dict


def _struct(value: dict) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(value)
    return struct


@pytest.mark.parametrize("stack", ["dev", "eks-dev", "prod", "aks-dev"])
def test_every_resource_of_a_shipped_plan_converts_as_the_generic_printer_does(stack):
    steps = plan_document(run_stack_file(stack))["steps"]
    assert steps
    for step in steps:
        struct = _struct(step["newState"]["inputs"])
        assert struct_to_dict(struct) == json_format.MessageToDict(struct), step["urn"]


def test_every_kind_of_value():
    value = {"null": None, "n": 3, "f": -0.5, "s": "x", "t": True, "e": {}, "l": [], "deep": {"a": [1, {"b": [None]}]}}
    struct = _struct(value)
    converted = struct_to_dict(struct)
    assert converted == json_format.MessageToDict(struct)
    assert type(converted["n"]) is float and converted["null"] is None and converted["deep"]["a"][1]["b"] == [None]


@pytest.mark.parametrize("number", [math.inf, -math.inf, math.nan])
def test_a_number_json_cannot_carry_is_refused_as_the_printer_refuses_it(number):
    struct = _struct({"x": number})
    with pytest.raises(ValueError):
        json_format.MessageToDict(struct)
    with pytest.raises(ValueError):
        struct_to_dict(struct)
