"""Read a preview JSON file one step at a time, in memory bounded by the largest step.

``pulumi preview --json`` of a large stack runs to hundreds of megabytes; parsing it whole holds every
step as Python objects at once (several times the file's size). :func:`iter_steps` reads the file in
chunks and decodes the top-level object itself: each element of ``steps`` is decoded on its own with
the standard library's C decoder (``json.JSONDecoder.raw_decode``) and handed out, the other top-level
values are decoded and dropped. Time is linear in the file's size (a chunk boundary inside a value
re-decodes that one value once, and a value larger than the buffer doubles the read), memory is one
chunk plus the largest step.

The guarantees of :mod:`input_files` hold for the streamed file too: a regular file, at most
``limits.max_bytes``, UTF-8 without NUL bytes, nesting at most ``limits.max_depth`` deep, and every
failure one :class:`input_files.InputFileError` naming the file, the line and the column.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import input_files
from input_files import InputFileError, Limits

CHUNK = 1 << 20
#: The limits of a streamed preview: memory no longer grows with the file (one chunk and one step at a
#: time), so a file may be larger than the 256 MiB input_files.PREVIEW_JSON allows a file read whole;
#: 2 GiB is about 500,000 resources of a GPU stack, and the deepest step is bounded as before.
STREAMED_PREVIEW = Limits(max_bytes=2 * 2**30, max_depth=input_files.PREVIEW_JSON.max_depth)
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder(parse_constant=input_files.reject_constant)  # NaN and Infinity are not JSON


class NotAnObject(Exception):
    """The document's top level is not a JSON object (the caller reads it whole for the exact reason)."""


class StreamedSteps:
    """Iterate ``(index, step)`` over the ``steps`` list of a preview-shaped JSON file."""

    def __init__(self, path: Path | str, limits: Limits = input_files.PREVIEW_JSON, chunk: int = CHUNK):
        self.path = Path(path)
        self.limits = limits
        self.chunk = chunk
        self.saw_steps = False
        self.steps_type = ""  # the type of a `steps` value that is not a list
        input_files.check_file(self.path, limits)

    # ---- buffer ----

    def _open(self) -> None:
        self._file = open(self.path, "rb")  # noqa: SIM115 (closed in __iter__'s finally)
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self._buf = ""
        self._pos = 0
        self._eof = False
        self._bytes = 0
        self._line = 1  # line and column of _buf[0] in the file
        self._col = 1

    def _more(self, at_least: int = 0) -> bool:
        """Append at least one chunk (or ``at_least`` characters) to the buffer; False at the end of the file."""
        if self._eof:
            return False
        if self._pos > self.chunk:  # drop what has been consumed, keeping track of where the buffer starts
            dropped = self._buf[:self._pos]
            newlines = dropped.count("\n")
            if newlines:
                self._line += newlines
                self._col = len(dropped) - dropped.rfind("\n")
            else:
                self._col += len(dropped)
            self._buf = self._buf[self._pos:]
            self._pos = 0
        want = max(self.chunk, at_least)
        data = self._file.read(want)
        offset = self._bytes
        self._bytes += len(data)
        if self._bytes > self.limits.max_bytes:
            raise InputFileError(self.path, f"is larger than {self.limits.describe_bytes()}")
        nul = data.find(b"\0")
        if nul >= 0:
            raise InputFileError(self.path, f"is a binary file (a NUL byte at offset {offset + nul}), not text")
        try:
            text = self._decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            raise InputFileError(self.path, f"is not UTF-8 text (invalid byte at offset {offset + exc.start})") \
                from None
        if not data:
            self._eof = True
        self._buf += text
        return bool(data) or bool(text)

    def _where(self, pos: int) -> tuple[int, int]:
        before = self._buf[:pos]
        newlines = before.count("\n")
        if newlines:
            return self._line + newlines, pos - before.rfind("\n")
        return self._line, self._col + pos

    def _invalid(self, pos: int, message: str) -> InputFileError:
        line, col = self._where(pos)
        return InputFileError(self.path, f"not valid JSON (line {line}, column {col}: {message})",
                              where=f"line {line}, column {col}")

    def _skip_ws(self) -> None:
        while True:
            self._pos = _WS.match(self._buf, self._pos).end()
            if self._pos < len(self._buf) or not self._more():
                return

    def _peek(self) -> str:
        self._skip_ws()
        return self._buf[self._pos] if self._pos < len(self._buf) else ""

    def _expect(self, chars: str, what: str) -> str:
        char = self._peek()
        if not char or char not in chars:
            raise self._invalid(self._pos, f"Expecting {what}" if char else f"Expecting {what}, the file ends")
        self._pos += 1
        return char

    def _value(self, depth: int) -> Any:
        """Decode the value at the position; ``depth`` is how deep it sits in the document."""
        self._skip_ws()
        while True:
            try:
                value, end = _DECODER.raw_decode(self._buf, self._pos)
            except RecursionError:
                raise InputFileError(self.path, f"nested too deep (more than {self.limits.max_depth} levels)") \
                    from None
            except input_files.NotJsonConstant as exc:  # where the value holding it starts
                raise self._invalid(self._pos, str(exc)) from None
            except json.JSONDecodeError as exc:
                into = exc.pos - self._pos  # the buffer may move while reading more
                if self._more(at_least=len(self._buf) - self._pos):  # maybe cut by the chunk: read more, retry
                    continue
                raise self._invalid(self._pos + into, exc.msg) from None
            if end == len(self._buf) and self._more(at_least=1):  # a number cut by the chunk
                continue
            self._pos = end
            if isinstance(value, (dict, list)) and _deeper_than(value, self.limits.max_depth - depth):
                raise InputFileError(self.path, f"nested too deep (more than {self.limits.max_depth} levels)")
            return value

    # ---- the document ----

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        self._open()
        try:
            yield from self._document()
        finally:
            self._file.close()

    def _document(self) -> Iterator[tuple[int, Any]]:
        if self._peek() != "{":
            raise NotAnObject()
        self._pos += 1
        if self._peek() == "}":
            self._pos += 1
        else:
            while True:
                if self._peek() != '"':
                    raise self._invalid(self._pos, "Expecting property name enclosed in double quotes")
                key = self._value(1)
                self._expect(":", "':' delimiter")
                if key == "steps":
                    if self.saw_steps:
                        raise InputFileError(self.path, "has two 'steps' lists")
                    self.saw_steps = True
                    if self._peek() == "[":
                        yield from self._steps()
                    else:
                        self.steps_type = type(self._value(1)).__name__
                else:
                    self._value(1)
                if self._expect(",}", "',' delimiter") == "}":
                    break
        if self._peek():
            raise self._invalid(self._pos, "Extra data")

    def _steps(self) -> Iterator[tuple[int, Any]]:
        self._pos += 1  # the '['
        if self._peek() == "]":
            self._pos += 1
            return
        index = 0
        while True:
            yield index, self._value(2)
            index += 1
            if self._expect(",]", "',' delimiter") == "]":
                return


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether a decoded JSON value nests more than ``limit`` levels (level by level; scalars are not queued)."""
    level = [value]
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        below = []
        for node in level:
            for child in (node.values() if type(node) is dict else node):
                kind = type(child)
                if kind is dict or kind is list:
                    below.append(child)
        level = below
    return False


