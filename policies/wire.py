"""The batch call's wire format, shared by the pack (which serves it) and policy_gate (which sends it).

The Analyzer service has one call per resource; the pack's runtime (:mod:`policies.runtime`) adds a second
service beside it, :data:`BATCH_METHOD`, whose request is ``AnalyzeRequest`` messages framed one after the
other (protobuf field 1, length-delimited, as a ``repeated`` field is encoded) and whose reply is, in the same
order, each ``AnalyzeResponse`` (field 1) or the error that request raised (field 2, text). This module is
only that framing: it imports nothing, so the gate reads it without loading pulumi-policy or the runtime's
patch of it.
"""

from __future__ import annotations

#: The batch call beside the Analyzer service.
BATCH_SERVICE = "gpu_fungibility.policy.AnalyzerBatch"
BATCH_METHOD = f"/{BATCH_SERVICE}/Analyze"
#: A reply's field numbers: the request's ``AnalyzeResponse``, or the text of the error it raised.
REPLY_FIELD, ERROR_FIELD = 1, 2


def frame(field_number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field: its key, the payload's length (varint), the payload."""
    return varint(field_number << 3 | 2) + varint(len(payload)) + payload


def varint(value: int) -> bytes:
    """``value`` as a protobuf varint."""
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def read_frames(data: bytes) -> list[tuple[int, bytes]]:
    """The (field number, payload) of each length-delimited field of ``data``; ValueError when malformed."""
    found = []
    position, end = 0, len(data)
    while position < end:
        key, position = _read_varint(data, position)
        length, position = _read_varint(data, position)
        if key & 7 != 2 or position + length > end:
            raise ValueError(f"not a length-delimited field at byte {position}")
        found.append((key >> 3, data[position:position + length]))
        position += length
    return found


def _read_varint(data: bytes, position: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if position >= len(data) or shift > 63:
            raise ValueError("a varint runs past the message")
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, position
        shift += 7
