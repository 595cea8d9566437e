"""Kubernetes DRA device selectors evaluated by a real CEL engine (celpy).

``compile_expression(expr)`` -> a cached :class:`Program` (raises
:class:`CelCompileError`); ``matches(expr_or_program, device)`` -> bool
(raises :class:`CelEvaluationError` on a runtime error, as the scheduler
does); :class:`Device` is what a selector sees of one device. The
environment carries Kubernetes' ``quantity()`` and ``semver()`` libraries.
"""

from dra_cel.engine import (
    CelCompileError,
    CelEvaluationError,
    CelUnsupportedError,
    Device,
    Program,
    compile_expression,
    evaluate,
    matches,
    qualify,
)
from dra_cel.quantity import Quantity, QuantityError
from dra_cel.semver import Semver, SemverError

__all__ = [
    "CelCompileError",
    "CelEvaluationError",
    "CelUnsupportedError",
    "Device",
    "Program",
    "Quantity",
    "QuantityError",
    "Semver",
    "SemverError",
    "compile_expression",
    "evaluate",
    "matches",
    "qualify",
]
