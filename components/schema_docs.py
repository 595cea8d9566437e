"""Inherited fields keep their docstrings in the package schema.

Pulumi's component analyzer (``pulumi.provider.experimental.analyzer``, pulumi 3.272) takes a field's
description from the docstring written after it in the source of the class it is analysing, and from that
class only. The library declares the fields its components share once, on a base (the arguments every
accelerator pool takes, the outputs of every driver release): analysed as they are, those fields would come
out of the schema undocumented in every language. :func:`teach_analyzer` makes the analyzer look in the
bases when a class has no docstring of its own for a field: the nearest base first, so a subclass that
declares a field again says what it means there.

A TypedDict keeps no trace of its TypedDict bases at runtime on Python 3.11 (no ``__orig_bases__``, a plain
``dict`` MRO), so they are read from the ``class`` statement's source, as the analyzer reads the docstrings.
Where a Pulumi release no longer has the method the analyzer is left as it is, and the schema test names
every field left without a description.
"""

import ast
import inspect
import sys
import textwrap
import typing
from typing import Any

_MARK = "_looks_in_bases"


def _declared_typeddict_bases(cls: type) -> list[type]:
    declared = getattr(cls, "__dict__", {}).get("__orig_bases__")  # Python 3.12 and later keep them
    if declared is not None:
        return [b for b in declared if typing.is_typeddict(b)]
    try:
        statement = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return []
    namespace = vars(sys.modules[cls.__module__]) if cls.__module__ in sys.modules else {}
    bases = (_named(expression, namespace) for expression in getattr(statement, "bases", []))
    return [b for b in bases if typing.is_typeddict(b)]


def _named(expression: ast.expr, namespace: dict[str, Any]) -> Any:
    """What a base written as ``Name`` or ``module.Name`` is in the class's module, or None."""
    if isinstance(expression, ast.Name):
        return namespace.get(expression.id)
    if isinstance(expression, ast.Attribute):
        return getattr(_named(expression.value, namespace), expression.attr, None)
    return None


def field_bases(cls: type) -> list[type]:
    """The classes ``cls`` inherits fields from, nearest first (the library's and its users', not Pulumi's)."""
    if typing.is_typeddict(cls):
        ordered: list[type] = []
        for base in _declared_typeddict_bases(cls):
            for klass in (base, *field_bases(base)):
                if klass not in ordered:
                    ordered.append(klass)
        return ordered
    return [k for k in getattr(cls, "__mro__", ())[1:]
            if k.__module__ not in ("builtins", "typing") and not k.__module__.startswith("pulumi")]


def teach_analyzer() -> None:
    """Make Pulumi's component analyzer find a field's docstring on the base that declares it."""
    try:
        from pulumi.provider.experimental.analyzer import Analyzer
    except ImportError:
        return
    own = getattr(Analyzer, "get_docstring", None)
    if own is None or getattr(own, _MARK, False):
        return

    def get_docstring(self: Any, typ: type, name: str) -> str | None:
        found = own(self, typ, name)
        for base in field_bases(typ) if found is None else ():
            found = own(self, base, name)
            if found is not None:
                break
        return found

    setattr(get_docstring, _MARK, True)
    Analyzer.get_docstring = get_docstring
