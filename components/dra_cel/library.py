"""The CEL functions of Kubernetes' ``quantity`` and ``semver`` libraries, for celpy.

celpy resolves ``x.f(a)`` to the function ``f(x, a)``, so each name below
serves both value types that declare it (``compareTo`` on a Quantity and on a
Semver) and refuses every other combination with CEL's "no such overload".
Runtime errors are returned as ``CELEvalError`` values, the way CEL
propagates errors (``false && error`` is still ``false``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from celpy import celtypes
from celpy.evaluation import CELEvalError

from .quantity import Quantity, QuantityError
from .semver import Semver, SemverError

CelFunction = Callable[..., Any]


def _type_name(value: Any) -> str:
    if isinstance(value, Quantity):
        return "kubernetes.Quantity"
    if isinstance(value, Semver):
        return "kubernetes.Semver"
    if _is_bool(value):
        return "bool"
    if isinstance(value, celtypes.IntType):
        return "int"
    if isinstance(value, celtypes.DoubleType):
        return "double"
    if isinstance(value, celtypes.StringType):
        return "string"
    return type(value).__name__


def no_overload(function: str, *args: Any) -> CELEvalError:
    kinds = ", ".join(_type_name(a) for a in args)
    return CELEvalError(f"found no matching overload for '{function}' applied to '({kinds})'", TypeError, None)


def _error_in(args: tuple[Any, ...]) -> CELEvalError | None:
    for arg in args:
        if isinstance(arg, CELEvalError):
            return arg
    return None


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, celtypes.BoolType))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not _is_bool(value)


def _both(a: Any, b: Any, kind: type) -> bool:
    return isinstance(a, kind) and isinstance(b, kind)


def quantity(text: Any) -> Any:
    if err := _error_in((text,)):
        return err
    if not isinstance(text, str):
        return no_overload("quantity", text)
    try:
        return Quantity.parse(str(text))
    except QuantityError as exc:
        return CELEvalError(str(exc), ValueError, None)


def is_quantity(text: Any) -> Any:
    if err := _error_in((text,)):
        return err
    if not isinstance(text, str):
        return no_overload("isQuantity", text)
    try:
        Quantity.parse(str(text))
    except QuantityError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def semver(text: Any, normalize: Any = False) -> Any:
    if err := _error_in((text, normalize)):
        return err
    if not isinstance(text, str) or not _is_bool(normalize):
        return no_overload("semver", text, normalize)
    try:
        return Semver.parse(str(text), normalize=bool(normalize))
    except SemverError as exc:
        return CELEvalError(str(exc), ValueError, None)


def is_semver(text: Any, normalize: Any = False) -> Any:
    if err := _error_in((text, normalize)):
        return err
    if not isinstance(text, str) or not _is_bool(normalize):
        return no_overload("isSemver", text, normalize)
    try:
        Semver.parse(str(text), normalize=bool(normalize))
    except SemverError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _comparison(name: str, wanted: Callable[[int], bool] | None) -> CelFunction:
    def compare(receiver: Any, other: Any) -> Any:
        if err := _error_in((receiver, other)):
            return err
        if _both(receiver, other, Quantity) or _both(receiver, other, Semver):
            result = receiver.compare(other)
            return celtypes.IntType(result) if wanted is None else celtypes.BoolType(wanted(result))
        return no_overload(name, receiver, other)

    compare.__name__ = name
    return compare


def _quantity_method(name: str, body: Callable[[Quantity], Any]) -> CelFunction:
    def method(receiver: Any, *rest: Any) -> Any:
        if err := _error_in((receiver, *rest)):
            return err
        if rest or not isinstance(receiver, Quantity):
            return no_overload(name, receiver, *rest)
        return body(receiver)

    method.__name__ = name
    return method


def _semver_part(name: str) -> CelFunction:
    def part(receiver: Any, *rest: Any) -> Any:
        if err := _error_in((receiver, *rest)):
            return err
        if rest or not isinstance(receiver, Semver):
            return no_overload(name, receiver, *rest)
        return celtypes.IntType(getattr(receiver, name))

    part.__name__ = name
    return part


def _as_integer(q: Quantity) -> Any:
    value = q.as_int64()
    if value is None:
        return CELEvalError("cannot convert value to integer", ValueError, None)
    return celtypes.IntType(value)


def _arithmetic(name: str) -> CelFunction:
    def combine(receiver: Any, other: Any) -> Any:
        if err := _error_in((receiver, other)):
            return err
        if not isinstance(receiver, Quantity):
            return no_overload(name, receiver, other)
        if _is_int(other):
            other = Quantity.from_int(int(other))
        if not isinstance(other, Quantity):
            return no_overload(name, receiver, other)
        return receiver.add(other) if name == "add" else receiver.sub(other)

    combine.__name__ = name
    return combine


def _string_method(name: str, body: Callable[..., Any], arities: tuple[int, ...]) -> CelFunction:
    """A method of cel-go's strings extension (part of Kubernetes' CEL base environment)."""

    def method(receiver: Any, *args: Any) -> Any:
        if err := _error_in((receiver, *args)):
            return err
        if not isinstance(receiver, str) or len(args) not in arities:
            return no_overload(name, receiver, *args)
        try:
            return body(str(receiver), *args)
        except (IndexError, ValueError) as exc:
            return CELEvalError(str(exc), type(exc), None)

    method.__name__ = name
    return method


def _index_of(text: str, sub: Any, offset: Any = 0) -> Any:
    if not isinstance(sub, str) or not _is_int(offset):
        return no_overload("indexOf", text, sub, offset)
    if not 0 <= offset <= len(text):
        raise IndexError(f"index out of range: {offset}")
    return celtypes.IntType(text.find(str(sub), int(offset)))


def _last_index_of(text: str, sub: Any, offset: Any = None) -> Any:
    end = len(text) if offset is None else offset
    if not isinstance(sub, str) or not _is_int(end):
        return no_overload("lastIndexOf", text, sub, end)
    if not 0 <= end <= len(text):
        raise IndexError(f"index out of range: {end}")
    return celtypes.IntType(text.rfind(str(sub), 0, int(end) + len(sub)))


def _substring(text: str, start: Any, end: Any = None) -> Any:
    stop = len(text) if end is None else end
    if not _is_int(start) or not _is_int(stop):
        return no_overload("substring", text, start, stop)
    if not 0 <= start <= stop <= len(text):
        raise IndexError(f"index out of range: {start}, {stop}")
    return celtypes.StringType(text[int(start):int(stop)])


def _char_at(text: str, index: Any) -> Any:
    if not _is_int(index):
        return no_overload("charAt", text, index)
    if not 0 <= index <= len(text):
        raise IndexError(f"index out of range: {index}")
    return celtypes.StringType(text[int(index):int(index) + 1])


def _replace(text: str, old: Any, new: Any, count: Any = -1) -> Any:
    if not (isinstance(old, str) and isinstance(new, str) and _is_int(count)):
        return no_overload("replace", text, old, new, count)
    return celtypes.StringType(text.replace(str(old), str(new), int(count)))


def _split(text: str, separator: Any, limit: Any = -1) -> Any:
    if not isinstance(separator, str) or not _is_int(limit):
        return no_overload("split", text, separator, limit)
    if limit == 0:
        return celtypes.ListType([])
    parts = text.split(str(separator), int(limit) - 1) if limit > 0 else text.split(str(separator))
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def _join(items: Any, separator: Any = "") -> Any:
    if err := _error_in((items, separator)):
        return err
    if not isinstance(items, list) or not isinstance(separator, str) or not all(isinstance(i, str) for i in items):
        return no_overload("join", items, separator)
    return celtypes.StringType(str(separator).join(str(i) for i in items))


STRING_METHODS: dict[str, CelFunction] = {
    "charAt": _string_method("charAt", _char_at, (1,)),
    "indexOf": _string_method("indexOf", _index_of, (1, 2)),
    "lastIndexOf": _string_method("lastIndexOf", _last_index_of, (1, 2)),
    "lowerAscii": _string_method("lowerAscii", lambda t: celtypes.StringType(
        "".join(c.lower() if c.isascii() else c for c in t)), (0,)),
    "upperAscii": _string_method("upperAscii", lambda t: celtypes.StringType(
        "".join(c.upper() if c.isascii() else c for c in t)), (0,)),
    "replace": _string_method("replace", _replace, (2, 3)),
    "split": _string_method("split", _split, (1, 2)),
    "substring": _string_method("substring", _substring, (1, 2)),
    "trim": _string_method("trim", lambda t: celtypes.StringType(t.strip()), (0,)),
    "join": _join,
}

# ---- cel-go's equality and ordering (celpy's own refuse values of two types) ----
#
# cel-go (v0.26, the version Kubernetes v1.35 builds with; common/types/{int,uint,double,bool,string}.go and
# the conformance tests of cel-spec tests/simple/testdata/comparisons.textproto): ``==`` and ``!=`` are defined
# for values of any two types, false (``!=``: true) when the types differ, numbers compared by value across int,
# uint and double; ``<``, ``<=``, ``>``, ``>=`` compare int, uint and double with each other
# (Kubernetes' base environment turns on cel.CrossTypeNumericComparisons: k8s.io/apiserver/pkg/cel/environment/
# base.go, v1.35.4) and are "no such overload" for any other pair of different types.


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not _is_bool(value)


def _plain(number: Any) -> int | float:
    """A CEL number as Python's own (celpy's types refuse to compare across types; Python compares exactly)."""
    return float(number) if isinstance(number, float) else int(number)


def cel_equal(a: Any, b: Any) -> bool:
    if _is_number(a) and _is_number(b):
        return _plain(a) == _plain(b)
    if _is_bool(a) and _is_bool(b):
        return bool(a) == bool(b)
    if isinstance(a, celtypes.ListType) and isinstance(b, celtypes.ListType):
        return len(a) == len(b) and all(cel_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, celtypes.MapType) and isinstance(b, celtypes.MapType):
        if len(a) != len(b):
            return False
        for key, value in a.items():
            match = next((k for k in b if cel_equal(k, key)), _ABSENT)
            if match is _ABSENT or not cel_equal(value, b[match]):
                return False
        return True
    if a is None or b is None:
        return a is None and b is None
    if _type_name(a) != _type_name(b) or type(a).__name__ != type(b).__name__:
        return False
    return bool(a == b)


_ABSENT = object()


def _equality(a: Any, b: Any) -> Any:
    """cel-go's ``types.Equal(a, b)``: null equals only null, else ``a.Equal(b)``. Kubernetes' own types refuse a
    value of another type (k8s.io/apiserver/pkg/cel/semver.go and quantity.go ``Equal``:
    ``types.MaybeNoSuchOverloadErr``), so ``version == 'x'`` is an error while ``'x' == version`` is false."""
    error = _error_in((a, b))
    if error is not None:
        return error
    if a is None or b is None:
        return celtypes.BoolType(a is None and b is None)
    if isinstance(a, (Semver, Quantity)) and type(a) is not type(b):
        return no_overload("_==_", a, b)
    return celtypes.BoolType(cel_equal(a, b))


def _equals(a: Any, b: Any) -> Any:
    return _equality(a, b)


def _not_equals(a: Any, b: Any) -> Any:
    """cel-go's ``!=`` (interpreter ``evalNe``): an error operand is an error, otherwise ``Equal(a, b) != true``,
    so ``version != '1.0.0'`` is true where ``version == '1.0.0'`` is an error (kube-scheduler v1.35.4 placed such
    a pod: the differential run, seed 3801, s0094)."""
    error = _error_in((a, b))
    if error is not None:
        return error
    result = _equality(a, b)
    return celtypes.BoolType(not (isinstance(result, celtypes.BoolType) and bool(result)))


def _in(element: Any, container: Any) -> Any:
    """``e in list`` as cel-go's list ``Contains``: true when ``e.Equal(item)`` is true for an item."""
    error = _error_in((element, container))
    if error is not None:
        return error
    if isinstance(container, celtypes.ListType):
        results = (_equality(element, item) for item in container)
        return celtypes.BoolType(any(isinstance(r, celtypes.BoolType) and bool(r) for r in results))
    if isinstance(container, celtypes.MapType):
        return celtypes.BoolType(any(cel_equal(element, key) for key in container))
    return no_overload("@in", element, container)


def _ordering(function: str, compare: Callable[[Any, Any], bool]) -> CelFunction:
    def order(a: Any, b: Any) -> Any:
        error = _error_in((a, b))
        if error is not None:
            return error
        if _is_number(a) and _is_number(b):
            return celtypes.BoolType(compare(_plain(a), _plain(b)))
        if isinstance(a, (Quantity, Semver)) or isinstance(b, (Quantity, Semver)) or \
                type(a).__name__ != type(b).__name__:
            return no_overload(function, a, b)
        try:
            return celtypes.BoolType(compare(a, b))
        except TypeError:
            return no_overload(function, a, b)
    return order


def _string(value: Any) -> Any:
    """``string()``: Kubernetes' environment has no overload for a version or a quantity."""
    error = _error_in((value,))
    if error is not None:
        return error
    if isinstance(value, (Quantity, Semver)):
        return no_overload("string", value)
    return celtypes.StringType(value)


# ---- Kubernetes' sets library (k8s.io/apiserver/pkg/cel/library/sets.go via cel-go ext.Sets, v1.35.4) ----


def _sets(name: str, body: Callable[[Any, Any], bool]) -> CelFunction:
    def function(a: Any, b: Any) -> Any:
        error = _error_in((a, b))
        if error is not None:
            return error
        if not isinstance(a, celtypes.ListType) or not isinstance(b, celtypes.ListType):
            return no_overload(f"sets.{name}", a, b)
        return celtypes.BoolType(body(a, b))
    return function


def _contains_all(a: Any, b: Any) -> bool:
    return all(any(cel_equal(x, y) for y in a) for x in b)


# ---- optional values (cel.OptionalTypes, part of Kubernetes' base environment since 1.29) ----


class Optional:
    """``optional.of(v)`` / ``optional.none()``: what ``x.?field`` yields."""

    __slots__ = ("value",)

    def __init__(self, value: Any = _ABSENT):
        self.value = value


def _optional_field(receiver: Any, name: Any) -> Any:
    """``receiver.?name``: the field when the map has it, else none (an optional receiver chains)."""
    error = _error_in((receiver, name))
    if error is not None:
        return error
    if isinstance(receiver, Optional):
        if receiver.value is _ABSENT:
            return receiver
        receiver = receiver.value
    if not isinstance(receiver, celtypes.MapType):
        return no_overload("_?._", receiver, name)
    try:
        return Optional(receiver[name])
    except KeyError:
        return Optional()


def _or_value(receiver: Any, default: Any) -> Any:
    if not isinstance(receiver, Optional):
        return _error_in((receiver,)) or no_overload("orValue", receiver, default)
    return default if receiver.value is _ABSENT else receiver.value


def _has_value(receiver: Any) -> Any:
    if not isinstance(receiver, Optional):
        return _error_in((receiver,)) or no_overload("hasValue", receiver)
    return celtypes.BoolType(receiver.value is not _ABSENT)


def _value(receiver: Any) -> Any:
    if not isinstance(receiver, Optional):
        return _error_in((receiver,)) or no_overload("value", receiver)
    if receiver.value is _ABSENT:
        return CELEvalError("optional.none() dereference", ValueError, None)
    return receiver.value


#: Names the engine gives functions whose CEL spelling celpy cannot parse (``sets.contains``, ``x.?f``).
OPTIONAL_FIELD = "optionalField__"
SETS_PREFIX = "sets__"

#: Every function the library adds to the CEL environment, by CEL name.
FUNCTIONS: dict[str, CelFunction] = {
    "_==_": _equals,
    "_!=_": _not_equals,
    "_in_": _in,
    "_<_": _ordering("_<_", lambda a, b: a < b),
    "_<=_": _ordering("_<=_", lambda a, b: a <= b),
    "_>_": _ordering("_>_", lambda a, b: a > b),
    "_>=_": _ordering("_>=_", lambda a, b: a >= b),
    "string": _string,
    f"{SETS_PREFIX}contains": _sets("contains", _contains_all),
    f"{SETS_PREFIX}equivalent": _sets("equivalent", lambda a, b: _contains_all(a, b) and _contains_all(b, a)),
    f"{SETS_PREFIX}intersects": _sets("intersects", lambda a, b: any(cel_equal(x, y) for x in a for y in b)),
    OPTIONAL_FIELD: _optional_field,
    "orValue": _or_value,
    "hasValue": _has_value,
    "value": _value,
    "quantity": quantity,
    "isQuantity": is_quantity,
    "semver": semver,
    "isSemver": is_semver,
    "compareTo": _comparison("compareTo", None),
    "isGreaterThan": _comparison("isGreaterThan", lambda c: c == 1),
    "isLessThan": _comparison("isLessThan", lambda c: c == -1),
    "sign": _quantity_method("sign", lambda q: celtypes.IntType(q.sign())),
    "isInteger": _quantity_method("isInteger", lambda q: celtypes.BoolType(q.is_integer())),
    "asInteger": _quantity_method("asInteger", _as_integer),
    "asApproximateFloat": _quantity_method("asApproximateFloat",
                                           lambda q: celtypes.DoubleType(q.as_approximate_float())),
    "add": _arithmetic("add"),
    "sub": _arithmetic("sub"),
    "major": _semver_part("major"),
    "minor": _semver_part("minor"),
    "patch": _semver_part("patch"),
    **STRING_METHODS,
}
