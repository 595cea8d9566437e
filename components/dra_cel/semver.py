"""Semantic versions as Kubernetes' CEL ``semver()`` library sees them.

Parsing and ordering follow ``github.com/blang/semver/v4`` (which the
Kubernetes library wraps): ``MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]``, no
leading ``v``, no leading zeros, no whitespace. Build metadata is ignored by
comparisons and equality. ``normalize=True`` is the library's second
argument: strip a leading ``v``, fill a missing minor/patch with 0, drop
leading zeros.

DRA device attributes of type ``version`` (the NVIDIA driver's
``driverVersion``, ``cudaComputeCapability``) reach CEL as this type.
"""

from __future__ import annotations

_NUMBERS = "0123456789"
_ALPHANUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" + _NUMBERS + "-"
_UINT64_MAX = 2**64 - 1


class SemverError(ValueError):
    """A string that is not a semantic version (message as blang/semver words it)."""


def _only(text: str, allowed: str) -> bool:
    return all(c in allowed for c in text)


def _leading_zero(text: str) -> bool:
    return len(text) > 1 and text[0] == "0"


def _uint(text: str, what: str) -> int:
    if not _only(text, _NUMBERS):
        raise SemverError(f"Invalid character(s) found in {what} number {text!r}")
    if _leading_zero(text):
        raise SemverError(f"{what.capitalize()} number must not contain leading zeroes {text!r}")
    if not text or int(text) > _UINT64_MAX:
        raise SemverError(f"strconv.ParseUint: parsing {text!r}: invalid syntax")
    return int(text)


def _prerelease(part: str) -> int | str:
    if not part:
        raise SemverError("Prerelease is empty")
    if _only(part, _NUMBERS):
        if _leading_zero(part):
            raise SemverError(f"Numeric PreRelease version must not contain leading zeroes {part!r}")
        return int(part)
    if _only(part, _ALPHANUM):
        return part
    raise SemverError(f"Invalid character(s) found in prerelease {part!r}")


class Semver:
    """An immutable semantic version (the CEL type ``kubernetes.Semver``)."""

    __slots__ = ("major", "minor", "patch", "pre", "build")

    def __init__(self, major: int, minor: int, patch: int,
                 pre: tuple[int | str, ...] = (), build: tuple[str, ...] = ()):
        self.major, self.minor, self.patch, self.pre, self.build = major, minor, patch, pre, build

    @classmethod
    def parse(cls, text: str, normalize: bool = False) -> Semver:
        """Parse like ``semver.Parse`` (or the library's normalizing variant); raises SemverError."""
        if normalize:
            text = _normalize(text)
        if not text:
            raise SemverError("Version string empty")
        parts = text.split(".", 2)
        if len(parts) != 3:
            raise SemverError("No Major.Minor.Patch elements found")
        major = _uint(parts[0], "major")
        minor = _uint(parts[1], "minor")
        rest, build, pre = parts[2], (), ()
        if "+" in rest:
            rest, _, meta = rest.partition("+")
            build = tuple(meta.split("."))
        if "-" in rest:
            rest, _, prerelease = rest.partition("-")
            pre = tuple(_prerelease(p) for p in prerelease.split("."))
        patch = _uint(rest, "patch")
        for meta in build:
            if not meta:
                raise SemverError("Build meta data is empty")
            if not _only(meta, _ALPHANUM):
                raise SemverError(f"Invalid character(s) found in build meta data {meta!r}")
        return cls(major, minor, patch, pre, build)

    def compare(self, other: Semver) -> int:
        mine, theirs = (self.major, self.minor, self.patch), (other.major, other.minor, other.patch)
        if mine != theirs:
            return 1 if mine > theirs else -1
        if not self.pre or not other.pre:
            return (not self.pre) - (not other.pre)
        for a, b in zip(self.pre, other.pre, strict=False):
            if a == b:
                continue
            if isinstance(a, int) != isinstance(b, int):
                return -1 if isinstance(a, int) else 1  # numeric identifiers sort first
            return 1 if a > b else -1  # type: ignore[operator]
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Semver):
            # Kubernetes' Semver.Equal: no such overload for any other type.
            raise TypeError(f"no such overload: kubernetes.Semver == {type(other).__name__}")
        return self.compare(other) == 0

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((self.major, self.minor, self.patch, self.pre))

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            text += "-" + ".".join(str(p) for p in self.pre)
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    def __repr__(self) -> str:
        return f"semver({str(self)!r})"


def _normalize(text: str) -> str:
    """The library's normalizeAndParse pre-processing."""
    if text.startswith("v"):
        text = text[1:]
    parts = text.split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or part[0] not in _NUMBERS:
                part = "0" + part
            parts[i] = part
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)
