"""Kubernetes DRA device selectors evaluated by a real CEL engine (celpy).

``compile_expression(expr)`` -> a cached :class:`Program` (raises
:class:`CelCompileError`); ``matches(expr_or_program, device)`` -> bool
(raises :class:`CelEvaluationError` on a runtime error, as the scheduler
does); :class:`Device` is what a selector sees of one device. The
environment carries Kubernetes' ``quantity()`` and ``semver()`` libraries.

The engine needs cel-python (``pip install "gpu-fungibility-components[cel]"``);
it is imported on first use, so :mod:`.quantity` and :mod:`.semver` (pure
Python) can be used without it.
"""

import importlib
from typing import Any

_EXPORTS = {
    "CelCompileError": "engine",
    "CelEvaluationError": "engine",
    "CelUnsupportedError": "engine",
    "Device": "engine",
    "Program": "engine",
    "compile_expression": "engine",
    "evaluate": "engine",
    "matches": "engine",
    "qualify": "engine",
    "Quantity": "quantity",
    "QuantityError": "quantity",
    "Semver": "semver",
    "SemverError": "semver",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
