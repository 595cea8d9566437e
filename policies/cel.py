"""Compile a DRA CEL selector, reporting why it does not compile.

Uses the project's DRA CEL environment (:mod:`dra_cel`, which also type-checks
against the ``device`` variable and the Kubernetes ``quantity``/``semver``
library) when it is importable, and otherwise a plain CEL parse with
``celpy``, so a syntax error is always caught.
"""

from __future__ import annotations

from collections.abc import Callable

import celpy


def _celpy_compile(expression: str) -> None:
    celpy.Environment().compile(expression)


def _compiler() -> tuple[Callable[[str], object], tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(compile function, errors that mean "does not compile", errors that mean "cannot judge here")."""
    try:
        import dra_cel

        return dra_cel.compile_expression, (dra_cel.CelCompileError,), (dra_cel.CelUnsupportedError,)
    except (ImportError, AttributeError):
        return _celpy_compile, (celpy.CELParseError,), ()


def compile_error(expression: str) -> str | None:
    """None when the expression compiles, else a one-line reason."""
    if not isinstance(expression, str) or not expression.strip():
        return "the expression is empty"
    compile_expression, errors, unjudged = _compiler()
    try:
        compile_expression(expression)
    except unjudged:
        # Valid Kubernetes CEL this engine does not implement (cel.bind, the lists library, ...):
        # Kubernetes accepts it, so it is not a violation.
        return None
    except errors as exc:
        lines = [line.strip() for line in str(exc).splitlines() if line.strip() and line.strip() != "^"]
        reason = lines[0] if lines else type(exc).__name__
        return reason.split(" does not compile: ", 1)[-1]
    return None
