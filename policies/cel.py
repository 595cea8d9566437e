"""DRA CEL selectors for the pack: does an expression compile, and which devices does it select.

Both use the component library's DRA CEL environment (:mod:`gpu_fungibility.dra_cel`:
the ``device`` variable, Kubernetes' ``quantity()``/``semver()`` library, type
checks the API server makes), the same engine the simulator uses.
"""

from __future__ import annotations

from gpu_fungibility import dra_cel


def compile_error(expression: str) -> str | None:
    """None when the expression compiles, else a one-line reason."""
    if not isinstance(expression, str) or not expression.strip():
        return "the expression is empty"
    try:
        dra_cel.compile_expression(expression)
    except dra_cel.CelUnsupportedError:
        # Valid Kubernetes CEL this engine does not implement (cel.bind, the lists library, ...):
        # Kubernetes accepts it, so it is not a violation.
        return None
    except dra_cel.CelCompileError as exc:
        lines = [line.strip() for line in str(exc).splitlines() if line.strip() and line.strip() != "^"]
        reason = lines[0] if lines else type(exc).__name__
        return reason.split(" does not compile: ", 1)[-1]
    return None
