"""The Kubernetes DRA selector environment on top of celpy.

A selector sees one variable, ``device``, with ``driver`` (string),
``attributes`` and ``capacity`` (maps keyed by qualified domain, then name).
Looking up a domain the device does not have yields an empty map, as in
Kubernetes, so ``device.attributes['other.example.com'].x`` is a runtime
"no such key" error rather than a crash.

Programs are compiled once per expression text and cached; a compiled
program is immutable and safe to reuse.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

import celpy
from celpy import celtypes
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError

from .checker import CheckError, UnsupportedError, check
from .dependencies import WHOLE_DEVICE, Path, device_paths
from .library import FUNCTIONS, OPTIONAL_FIELD, SETS_PREFIX
from .quantity import Quantity, QuantityError
from .semver import Semver, SemverError

AttributeValue = str | int | bool | Semver
_ENVIRONMENT = celpy.Environment()


class CelCompileError(ValueError):
    """The expression does not compile in the DRA CEL environment."""

    def __init__(self, expression: str, detail: str):
        self.expression = expression
        self.detail = detail
        super().__init__(f"CEL expression {expression!r} does not compile: {detail}")


class CelUnsupportedError(CelCompileError):
    """The expression uses a CEL function or macro this engine does not provide.

    Kubernetes' environment may well accept it (``cel.bind``, list and regex
    libraries): the expression cannot be evaluated here, which is not the
    same as being invalid.
    """


class CelEvaluationError(RuntimeError):
    """A selector failed at runtime (Kubernetes: "CEL runtime error", allocation aborts)."""

    def __init__(self, expression: str, detail: str):
        self.expression = expression
        self.detail = detail
        super().__init__(f"CEL runtime error in {expression!r}: {detail}")


class Program:
    """A compiled selector. Build with :func:`compile_expression`."""

    __slots__ = ("expression", "result_type", "device_paths", "_runner")

    def __init__(self, expression: str, result_type: str, runner: celpy.Runner,
                 paths: tuple[Path, ...] = (WHOLE_DEVICE,)):
        self.expression = expression
        self.result_type = result_type
        self.device_paths = paths  # what of ``device`` the result depends on
        self._runner = runner

    def evaluate(self, variables: Mapping[str, Any]) -> Any:
        """The raw CEL result; raises CelEvaluationError on a runtime error."""
        try:
            result = self._runner.evaluate(dict(variables))
        except CELEvalError as exc:
            raise CelEvaluationError(self.expression, _describe(exc)) from None
        except Exception as exc:  # celpy surfaces some errors as plain Python exceptions
            raise CelEvaluationError(self.expression, f"{type(exc).__name__}: {exc}") from None
        if isinstance(result, CELEvalError):
            raise CelEvaluationError(self.expression, _describe(result))
        return result

    def __repr__(self) -> str:
        return f"Program({self.expression!r})"


_OPERATOR_NAMES = {
    "relation_lt": "_<_", "relation_le": "_<=_", "relation_gt": "_>_", "relation_ge": "_>=_",
    "relation_eq": "_==_", "relation_ne": "_!=_", "relation_in": "@in", "addition_add": "_+_",
    "addition_sub": "_-_", "multiplication_mul": "_*_", "multiplication_div": "_/_", "multiplication_mod": "_%_",
}
_TYPE_NAMES = {
    f"{Semver.__module__}.Semver": "kubernetes.Semver", f"{Quantity.__module__}.Quantity": "kubernetes.Quantity",
    "celpy.celtypes.StringType": "string", "celpy.celtypes.IntType": "int", "celpy.celtypes.BoolType": "bool",
    "celpy.celtypes.DoubleType": "double", "celpy.celtypes.UintType": "uint", "celpy.celtypes.MapType": "map",
    "celpy.celtypes.ListType": "list", "celpy.celtypes.BytesType": "bytes",
}


def _readable(message: str) -> str:
    """celpy names operators by grammar rule and types by Python class; use CEL's names."""
    message = re.sub(r"Token\('RULE', '(\w+)'\)", lambda m: f"'{_OPERATOR_NAMES.get(m[1], m[1])}'", message)
    return re.sub(r"<class '([\w.]+)'>", lambda m: _TYPE_NAMES.get(m[1], m[1].rsplit(".", 1)[-1]), message)


def _describe(error: CELEvalError) -> str:
    args = [a for a in error.args if a is not None]
    if not args:
        return "evaluation error"
    message = str(args[0])
    if message.startswith("no such member in mapping: "):
        message = "no such key: " + message.split(": ", 1)[1].strip("'")
    nested = [a for a in args[1:] if isinstance(a, tuple)]
    if message == "evaluation error" and nested and nested[0]:
        message = str(nested[0][0])
    return _readable(message)


_SETS_CALL = re.compile(r"(?<![\w.])sets\s*\.\s*(contains|equivalent|intersects)\s*\(")
_OPTIONAL_SELECT = re.compile(r"\.\s*\?\s*([A-Za-z_][A-Za-z0-9_]*)")
_STRING_START = re.compile(r"([rRbB]{0,2})('''|\"\"\"|'|\")")


def _outside_strings(expression: str):
    """(text, is_code) pieces of the expression: string literals are never rewritten."""
    position = 0
    while position < len(expression):
        found = _STRING_START.search(expression, position)
        if found is None:
            break
        prefix, quote = found.group(1), found.group(2)
        raw = "r" in prefix.lower()
        yield expression[position:found.start()], True
        end = found.end()
        while end < len(expression) and not expression.startswith(quote, end):
            end += 2 if expression[end] == "\\" and not raw else 1
        end = min(end + len(quote), len(expression))
        yield expression[found.start():end], False
        position = end
    yield expression[position:], True


def _rewrite(expression: str) -> str:
    """The CEL of Kubernetes' environment that celpy's grammar lacks, spelled so celpy can parse it: the sets
    library's ``sets.contains(a, b)`` as a function ``sets__contains(a, b)``; an optional field selection
    ``x.?f`` as ``x.optionalField__('f')`` (its ``orValue``, ``hasValue`` and ``value`` are methods)."""
    if "sets" not in expression and "?" not in expression:
        return expression
    out = []
    for text, code in _outside_strings(expression):
        if code:
            text = _SETS_CALL.sub(lambda m: f"{SETS_PREFIX}{m[1]}(", text)
            text = _OPTIONAL_SELECT.sub(lambda m: f".{OPTIONAL_FIELD}('{m[1]}')", text)
        out.append(text)
    return "".join(out)


@functools.lru_cache(maxsize=4096)
def compile_expression(expression: str) -> Program:
    """Parse, check and prepare a selector; cached by expression text.

    Raises CelCompileError with the position of a syntax error, or the type
    error Kubernetes would report.
    """
    if not isinstance(expression, str) or not expression.strip():
        raise CelCompileError(str(expression), "the expression is empty")
    try:
        tree = _ENVIRONMENT.compile(_rewrite(expression))
    except CELParseError as exc:
        where = ""
        if getattr(exc, "line", None) is not None:
            where = f" at line {exc.line}, column {exc.column}"
        detail = str(exc.args[0]) if exc.args else "syntax error"
        raise CelCompileError(expression, f"syntax error{where}:\n{detail}") from None
    try:
        result_type = check(tree)
    except UnsupportedError as exc:
        raise CelUnsupportedError(expression, str(exc)) from None
    except CheckError as exc:
        raise CelCompileError(expression, str(exc)) from None
    runner = _ENVIRONMENT.program(tree, functions=FUNCTIONS)
    return Program(expression, result_type, runner, device_paths(tree))


class _DomainMap(celtypes.MapType):
    """A map of domains whose missing keys read as an empty map (Kubernetes' mapper)."""

    def __getitem__(self, key: Any) -> Any:
        try:
            return super().__getitem__(key)
        except KeyError:
            return celtypes.MapType({})


def _cel_value(value: Any) -> Any:
    if isinstance(value, (Semver, Quantity)):
        return value
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, int):
        return celtypes.IntType(value)
    if isinstance(value, str):
        return celtypes.StringType(value)
    raise TypeError(f"unsupported device attribute value {value!r} (str, int, bool or Semver)")


def _domain_map(nested: Mapping[str, Mapping[str, Any]]) -> _DomainMap:
    return _DomainMap({
        celtypes.StringType(domain): celtypes.MapType({
            celtypes.StringType(name): _cel_value(value) for name, value in values.items()
        })
        for domain, values in nested.items()
    })


def qualify(name: str, driver: str) -> tuple[str, str]:
    """(domain, id) of an attribute or capacity name; unqualified names take the driver's domain."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


class Device:
    """What a selector sees of one device.

    ``attributes`` and ``capacity`` are keyed by qualified domain
    (``gpu.nvidia.com``) and then name; attribute values are str, int, bool
    or :class:`Semver`, capacities :class:`Quantity`.
    """

    __slots__ = ("driver", "attributes", "capacity", "_cel", "_fingerprints")

    def __init__(self, driver: str, attributes: Mapping[str, Mapping[str, AttributeValue]],
                 capacity: Mapping[str, Mapping[str, Quantity]]):
        self.driver = driver
        self.attributes = {d: dict(v) for d, v in attributes.items()}
        self.capacity = {d: dict(v) for d, v in capacity.items()}
        for domain, values in self.capacity.items():
            for name, quantity in values.items():
                if not isinstance(quantity, Quantity):
                    raise TypeError(f"capacity {domain}/{name} must be a Quantity, got {quantity!r}")
        self._cel: celtypes.MapType | None = None  # built on first evaluation
        self._fingerprints: dict[tuple, tuple | None] = {}

    @classmethod
    def from_slice_device(cls, driver: str, device: Mapping[str, Any]) -> Device:
        """Build from a ResourceSlice ``spec.devices[]`` entry.

        ``attributes: {name: {string|int|bool|version: value}}`` and
        ``capacity: {name: {value: "80Gi"}}``; unqualified names are qualified
        with the driver name, as Kubernetes does. Raises ValueError on a
        malformed entry (the API server would have rejected it).
        """
        attributes: dict[str, dict[str, AttributeValue]] = {}
        for name, typed in (device.get("attributes") or {}).items():
            domain, ident = qualify(name, driver)
            attributes.setdefault(domain, {})[ident] = _attribute_value(name, typed)
        capacity: dict[str, dict[str, Quantity]] = {}
        for name, entry in (device.get("capacity") or {}).items():
            domain, ident = qualify(name, driver)
            raw = entry.get("value") if isinstance(entry, Mapping) else entry
            try:
                capacity.setdefault(domain, {})[ident] = raw if isinstance(raw, Quantity) else _quantity(str(raw))
            except QuantityError as exc:
                raise ValueError(f"capacity {name}: {exc}") from None
        return cls(driver, attributes, capacity)

    def fingerprint(self, program: Program) -> tuple | None:
        """A key equal for devices on which the program must give the same result (None: no sharing)."""
        paths = program.device_paths
        if paths not in self._fingerprints:
            self._fingerprints[paths] = self._fingerprint(paths)
        return self._fingerprints[paths]

    def _fingerprint(self, paths: tuple[Path, ...]) -> tuple | None:
        if paths == (WHOLE_DEVICE,):
            return None
        key: list = []
        for path in paths:
            if path == ("device", "driver"):
                key.append(self.driver)
                continue
            if len(path) < 3 or path[1] not in ("attributes", "capacity"):
                return None
            domain = (self.attributes if path[1] == "attributes" else self.capacity).get(path[2], {})
            if len(path) == 3:
                key.append(tuple(sorted((k, _frozen(v)) for k, v in domain.items())))
            else:
                key.append(_frozen(domain[path[3]]) if path[3] in domain else _MISSING)
        return tuple(key)

    def cel_value(self) -> celtypes.MapType:
        """The ``device`` variable as celpy sees it."""
        if self._cel is None:
            self._cel = celtypes.MapType({
                celtypes.StringType("driver"): celtypes.StringType(self.driver),
                celtypes.StringType("attributes"): _domain_map(self.attributes),
                celtypes.StringType("capacity"): _domain_map(self.capacity),
            })
        return self._cel

    def __repr__(self) -> str:
        return f"Device({self.driver!r}, attributes={self.attributes!r}, capacity={self.capacity!r})"


_MISSING = ("<missing>",)

# Both types are immutable: devices publishing the same text share one parsed value.
_quantity = functools.lru_cache(maxsize=1024)(Quantity.parse)
_semver = functools.lru_cache(maxsize=1024)(Semver.parse)


def _frozen(value: Any) -> tuple:
    """A hashable key that tells apart values CEL can tell apart (type and representation)."""
    if isinstance(value, Quantity):
        return ("quantity", value.value, value.as_int64(), value.is_integer())
    if isinstance(value, Semver):
        return ("semver", value.major, value.minor, value.patch, value.pre, value.build)
    return (type(value).__name__, value)


def _attribute_value(name: str, typed: Any) -> AttributeValue:
    if not isinstance(typed, Mapping) or len(typed) != 1:
        raise ValueError(f"attribute {name}: exactly one of string, int, bool, version is required, got {typed!r}")
    (kind, value), = typed.items()
    if kind == "string" and isinstance(value, str):
        return value
    if kind == "bool" and isinstance(value, bool):
        return value
    if kind == "int" and isinstance(value, (int, float)) and not isinstance(value, bool) and int(value) == value:
        return int(value)
    if kind == "version":
        try:
            return _semver(str(value))
        except SemverError as exc:
            raise ValueError(f"attribute {name}: parse semantic version: {exc}") from None
    raise ValueError(f"attribute {name}: {kind}: {value!r} is not a valid DRA attribute value")


def matches(expression: str | Program, device: Device) -> bool:
    """Whether the selector selects the device.

    Like Kubernetes' ``DeviceMatches``: a runtime error (a missing attribute,
    a type mismatch) is not "false" but an error, raised as
    CelEvaluationError; the scheduler then aborts allocation for the claim
    with "CEL runtime error". A non-bool result is an error too.
    """
    program = expression if isinstance(expression, Program) else compile_expression(expression)
    result = program.evaluate({"device": device.cel_value()})
    if not isinstance(result, celtypes.BoolType):
        raise CelEvaluationError(
            program.expression, f"CEL result of type {type(result).__name__} could not be converted to bool"
        )
    return bool(result)


def evaluate(expression: str, variables: Mapping[str, Any] | None = None) -> Any:
    """Evaluate any expression of this environment (for tests and tools); errors raise."""
    program = _compile_unchecked(expression)
    return program.evaluate(variables or {})


@functools.lru_cache(maxsize=1024)
def _compile_unchecked(expression: str) -> Program:
    try:
        tree = _ENVIRONMENT.compile(_rewrite(expression))
    except CELParseError as exc:
        raise CelCompileError(expression, f"syntax error:\n{exc.args[0] if exc.args else exc}") from None
    return Program(expression, "dyn", _ENVIRONMENT.program(tree, functions=FUNCTIONS))
