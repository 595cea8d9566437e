"""Kubernetes resource quantities, as ``k8s.io/apimachinery`` parses and compares them.

A :class:`Quantity` keeps the two internal forms Kubernetes uses, because
they are observable from CEL: a quantity held as a scaled int64
(``value * 10**scale``) answers ``isInteger()`` / ``asInteger()``; one that
needed arbitrary precision (more than 18 digits, fractional binary suffixes
such as ``1.5Gi``, values below one nano) does not, even when its value is a
whole number. Equality and ordering are always by value
(``quantity('1Gi') == quantity('1073741824')``).

Parsing follows ``resource.ParseQuantity``: an optional sign, digits with an
optional fraction, and a suffix that is binary (``Ki`` .. ``Ei``), decimal SI
(``n u m '' k M G T P E``) or a decimal exponent (``e3``, ``E-2``). Values
that need more than nano precision are rounded up (away from zero) to a
whole nano; binary-suffixed values are capped at 2**63-1. Decimal exponents
beyond +-4096 are refused (Kubernetes accepts them; no device publishes one).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
MAX_INT64_FACTORS = 18  # decimal digits an int64 always holds
NANO_SCALE = -9

SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT = f"quantities must match the regular expression '{SPLIT_RE}'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"
MAX_EXPONENT = 4096  # beyond this, exact arithmetic would need astronomically large integers

_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DIGITS = "0123456789"
_SUFFIX_CHARS = "eEinumkKMGTP"


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity (message as Kubernetes words it)."""


@dataclass(frozen=True)
class _Int64Amount:
    """``value * 10**scale`` with an int64 value: Kubernetes' fast representation."""

    value: int
    scale: int

    def as_int64(self) -> int | None:
        if self.scale == 0:
            return self.value
        if self.scale < 0:
            return None  # Kubernetes does not reduce factors here
        return _checked(self.value * 10**self.scale)

    def add(self, other: _Int64Amount) -> _Int64Amount | None:
        if other.value == 0:
            return self
        if self.value == 0:
            return other
        if self.scale == other.scale:
            return _amount(_checked(self.value + other.value), self.scale)
        if self.scale > other.scale:
            shifted = _checked(self.value * 10 ** (self.scale - other.scale))
            return None if shifted is None else _amount(_checked(shifted + other.value), other.scale)
        shifted = _checked(other.value * 10 ** (other.scale - self.scale))
        return None if shifted is None else _amount(_checked(self.value + shifted), self.scale)


def _checked(value: int) -> int | None:
    return value if INT64_MIN <= value <= INT64_MAX else None


def _amount(value: int | None, scale: int) -> _Int64Amount | None:
    return None if value is None else _Int64Amount(value, scale)


class Quantity:
    """An immutable Kubernetes quantity (the CEL type ``kubernetes.Quantity``)."""

    __slots__ = ("_value", "_int64", "_text")

    def __init__(self, value: Fraction, int64: _Int64Amount | None, text: str = ""):
        self._value = value  # exact value
        self._int64 = int64  # set when Kubernetes would hold it as a scaled int64
        self._text = text

    # ---- construction ----
    @classmethod
    def parse(cls, text: str) -> Quantity:
        """Parse like ``resource.ParseQuantity``; raises QuantityError."""
        return _parse(text)

    @classmethod
    def from_int(cls, value: int) -> Quantity:
        """``resource.NewQuantity(value, DecimalExponent)``."""
        return cls(Fraction(value), _Int64Amount(value, 0), str(value))

    # ---- CEL library methods ----
    @property
    def value(self) -> Fraction:
        return self._value

    def sign(self) -> int:
        return (self._value > 0) - (self._value < 0)

    def as_int64(self) -> int | None:
        """The int64 value when Kubernetes' ``AsInt64`` succeeds, else None."""
        return None if self._int64 is None else self._int64.as_int64()

    def is_integer(self) -> bool:
        return self.as_int64() is not None

    def as_approximate_float(self) -> float:
        if self._int64 is not None:
            base, exponent = float(self._int64.value), self._int64.scale
        else:
            base, exponent = _unscaled(self._value)
        return base if exponent == 0 else base * 10.0**exponent

    def add(self, other: Quantity) -> Quantity:
        value = self._value + other._value
        if self._int64 is not None and other._int64 is not None:
            amount = self._int64.add(other._int64)
            if amount is not None:
                return Quantity(value, amount)
        return Quantity(value, None)

    def sub(self, other: Quantity) -> Quantity:
        negated = None if other._int64 is None else _Int64Amount(-other._int64.value, other._int64.scale)
        return self.add(Quantity(-other._value, negated))

    def compare(self, other: Quantity) -> int:
        return (self._value > other._value) - (self._value < other._value)

    # ---- Python protocol ----
    def __eq__(self, other: object) -> bool:
        # Kubernetes' Quantity.Equal: by value; any other type is simply not equal.
        return isinstance(other, Quantity) and self._value == other._value

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(("quantity", self._value))

    def __repr__(self) -> str:
        return f"quantity({str(self)!r})"

    def __str__(self) -> str:
        return self._text or _format(self._value)


def _unscaled(value: Fraction) -> tuple[float, int]:
    """(unscaled mantissa, base-10 exponent) of an exact decimal value."""
    exponent = 0
    while value.denominator != 1:
        value *= 10
        exponent -= 1
    return float(value.numerator), exponent


def _format(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    mantissa, exponent = value, 0
    while mantissa.denominator != 1:
        mantissa *= 10
        exponent -= 1
    return f"{mantissa.numerator}e{exponent}"


def _scan(text: str) -> tuple[bool, str, str, str, str]:
    """Split into (positive, value, numerator, denominator, suffix) like parseQuantityString."""
    positive, pos, end = True, 0, len(text)
    if pos < end and text[0] in "+-":
        positive = text[0] == "+"
        pos += 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos] or "0"
    if pos >= end:
        return positive, text, num, "", ""
    denom = ""
    if text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
        if pos >= end:
            return positive, text, num, denom, ""
    value = text[:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(ERR_FORMAT)
    return positive, value, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, str]:
    """(base, exponent, format) of a suffix; raises QuantityError."""
    if suffix in _DECIMAL:
        return 10, _DECIMAL[suffix], "DecimalSI"
    if suffix in _BINARY:
        return 2, _BINARY[suffix], "BinarySI"
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[0] in "+-" else digits
        if body and all(c in _DIGITS for c in body):
            exponent = int(digits)
            if -(2**31) <= exponent < 2**31:
                return 10, exponent, "DecimalExponent"
    raise QuantityError(ERR_SUFFIX)


def _parse(text: str) -> Quantity:
    if not isinstance(text, str) or not text:
        raise QuantityError(ERR_FORMAT)
    if text == "0":
        return Quantity(Fraction(0), _Int64Amount(0, 0), "0")
    positive, value_text, num, denom, suffix = _scan(text)
    base, exponent, fmt = _interpret(suffix)
    if abs(exponent) > MAX_EXPONENT:
        raise QuantityError(f"exponent {exponent} is beyond what this engine evaluates (|exponent| <= {MAX_EXPONENT})")

    if fmt == "BinarySI":
        scale, mantissa = 0, 1
        if exponent >= 0 and not denom:
            mantissa = 1 << exponent
            precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        else:
            precision = -1
    else:
        scale, mantissa = exponent, 1
        precision = MAX_INT64_FACTORS - (len(num) + len(denom))

    if precision >= 0:
        scale -= len(denom)
        if scale >= NANO_SCALE:
            shifted = int(num + denom)
            if shifted > INT64_MAX:
                raise QuantityError(ERR_NUMERIC)
            result = _checked(shifted * mantissa)
            if result is not None:
                result = result if positive else -result
                return Quantity(Fraction(result) * Fraction(10) ** scale, _Int64Amount(result, scale), text)

    exact = _decimal(value_text)
    if base == 10:
        exact *= Fraction(10) ** exponent
    else:
        exact *= 2**exponent
    negative = exact < 0
    exact = abs(exact)
    if exact != 0:
        nanos = exact * 10**9
        exact = Fraction(-((-nanos.numerator) // nanos.denominator), 10**9)  # round up to a whole nano
    if fmt == "BinarySI" and exact > INT64_MAX:
        exact = Fraction(INT64_MAX)
    return Quantity(-exact if negative else exact, None, text)


def _decimal(value_text: str) -> Fraction:
    """inf.Dec.SetString on the numeric part (sign, digits, optional fraction)."""
    body = value_text.lstrip("+-")
    if not body or body == "." or any(c not in _DIGITS + "." for c in body) or body.count(".") > 1:
        raise QuantityError(ERR_NUMERIC)
    result = Fraction(body if not body.endswith(".") else body[:-1] or "0")
    return -result if value_text.startswith("-") else result
