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

from dra_cel.quantity import Quantity, QuantityError
from dra_cel.semver import Semver, SemverError

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


#: Every function the library adds to the CEL environment, by CEL name.
FUNCTIONS: dict[str, CelFunction] = {
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
}
