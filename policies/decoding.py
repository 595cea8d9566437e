"""A resource's properties from their protobuf ``Struct`` to Python values, in one walk.

The policy runtime converts a request's properties with protobuf's generic printer
(``json_format.MessageToDict``) and then walks the result again with ``deserialize_properties``;
:mod:`policies.runtime` does both here, in one walk. Pure functions of a message: nothing here touches
pulumi-policy's internals (the runtime hands in its own decoder of Pulumi's typed values).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any


def is_struct(message: Any) -> bool:
    descriptor = getattr(message, "DESCRIPTOR", None)
    return descriptor is not None and descriptor.full_name == "google.protobuf.Struct"


def struct_to_dict(struct: Any) -> dict[str, Any]:
    """``json_format.MessageToDict`` of a ``google.protobuf.Struct``, without its generic printer.

    protobuf's printer (json_format.py, pure Python under every backend) dispatches on descriptors for each
    value; a resource's properties are a Struct of nested Values only, whose JSON form is fixed by the proto3
    JSON mapping: null -> None, number -> float (infinity and NaN refused, as the printer refuses them), string,
    bool, struct -> dict, list -> list. The same result, several times faster (tests/test_policy_runtime_struct.py
    compares them on every shipped plan's resources). A map is read key by key: upb's map has no ``items()`` of
    its own, and the generic mapping one costs half again as much.
    """
    fields = struct.fields
    return {key: _value(fields[key]) for key in fields}


def _value(value: Any) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        return value.string_value
    if kind == "struct_value":
        fields = value.struct_value.fields
        return {key: _value(fields[key]) for key in fields}
    if kind == "list_value":
        return [_value(item) for item in value.list_value.values]
    if kind == "bool_value":
        return value.bool_value
    if kind == "number_value":
        return _number(value.number_value)
    return None


def _number(number: float) -> float:
    if math.isinf(number) or math.isnan(number):
        raise ValueError(f"Fail to serialize {number} for Value.number_value, which would parse as string_value")
    return number


def decode_struct(struct: Any, special: Callable[[Any], Any]) -> dict[str, Any]:
    """``deserialize_properties(MessageToDict(struct))`` in one walk.

    ``deserialize_properties`` rebuilds every map and list and hands a map that carries Pulumi's signature key
    (an asset, an archive, a secret) to its own decoder; so does this, with ``special`` (the runtime's
    ``_deserialize_property``) given that map as the printer converts it. Tests hold it to the runtime's answer.
    """
    fields = struct.fields
    return {key: _decoded(fields[key], special) for key in fields}


#: Pulumi's key for a map that encodes a typed value (pulumi_policy.deserialize.SPECIAL_SIG_KEY).
SPECIAL_SIG_KEY = "4dabf18193072939515e22adb298388d"


def _decoded(value: Any, special: Callable[[Any], Any]) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        return value.string_value
    if kind == "struct_value":
        fields = value.struct_value.fields
        if SPECIAL_SIG_KEY in fields:
            return special({key: _value(fields[key]) for key in fields})
        return {key: _decoded(fields[key], special) for key in fields}
    if kind == "list_value":
        return [_decoded(item, special) for item in value.list_value.values]
    if kind == "bool_value":
        return value.bool_value
    if kind == "number_value":
        return _number(value.number_value)
    return None
