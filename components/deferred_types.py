"""Component outputs typed by a cloud SDK's resources, resolved when Pulumi's analyzer reads them.

A component module imports its cloud's provider SDK only where it builds resources, so that importing a
component to check its arguments (:meth:`LibraryComponent.check`, which a stack's validation runs for
every component it plans) loads no SDK, which takes seconds. Two outputs are themselves SDK resources
(``GkeCluster.system_pool: "gcp.container.NodePool"``, ``EksCluster.node_role_attachments``): such an
annotation is written as a string over the names its module imports under ``if TYPE_CHECKING:``.

Pulumi's component analyzer (``pulumi.provider.experimental.analyzer``, pulumi 3.272) reads a class's
annotations as they are (``inspect.get_annotations``) and cannot read a string, and Pulumi's runtime reads
a component's output types as it registers it (``get_type_hints`` in the module's namespace, where a
``TYPE_CHECKING`` import is not). :func:`resolve_annotations` turns the strings into the types they name,
importing the module's ``TYPE_CHECKING`` imports then: :func:`teach_analyzer` makes the analyzer call it
first, and every component calls it as it is constructed (the SDK is imported to build it anyway). The schema
names the same SDK types as when they were imported at the top.
An argument type (a component's ``...Args``) is never written this way: its fields are checked at runtime.
"""

import ast
import importlib
import inspect
import sys
from types import ModuleType
from typing import Any

_MARK = "_resolves_strings"


def _imported(node: ast.Import | ast.ImportFrom, module: ModuleType) -> dict[str, Any]:
    """The names one import statement of ``module`` binds, imported now."""
    if isinstance(node, ast.Import):
        return {alias.asname or alias.name.split(".")[0]:
                importlib.import_module(alias.name if alias.asname else alias.name.split(".")[0])
                for alias in node.names}
    source = importlib.import_module("." * node.level + (node.module or ""), module.__package__)
    found = {}
    for alias in node.names:
        value = getattr(source, alias.name, None)
        if value is None:  # a submodule not yet imported
            value = importlib.import_module(f"{source.__name__}.{alias.name}")
        found[alias.asname or alias.name] = value
    return found


def type_checking_names(module: ModuleType) -> dict[str, Any]:
    """What ``module`` imports under ``if TYPE_CHECKING:`` (read from its source), imported now."""
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError, SyntaxError):
        return {}
    names: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test).split(".")[-1] == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.Import | ast.ImportFrom):
                    names.update(_imported(statement, module))
    return names


def resolve_annotations(cls: type) -> None:
    """Replace the string annotations of ``cls`` and of the library's classes it inherits from by the types
    they name (once: the class keeps them)."""
    for klass in getattr(cls, "__mro__", ()):
        own = vars(klass).get("__annotations__")
        if not own or not any(isinstance(a, str) for a in own.values()):
            continue
        module = sys.modules.get(klass.__module__)
        if module is None or module.__name__.startswith(("pulumi.", "typing", "builtins")):
            continue
        namespace = {**vars(module), **type_checking_names(module)}
        for name, annotation in list(own.items()):
            if isinstance(annotation, str):
                own[name] = eval(annotation, namespace)  # an annotation of the library's own source


def teach_analyzer() -> None:
    """Make Pulumi's component analyzer resolve a class's string annotations before it reads them."""
    try:
        from pulumi.provider.experimental.analyzer import Analyzer
    except ImportError:
        return
    own = getattr(Analyzer, "analyze_type", None)
    if own is None or getattr(own, _MARK, False):
        return

    def analyze_type(self: Any, typ: type, *args: Any, **kwargs: Any) -> Any:
        resolve_annotations(typ)
        return own(self, typ, *args, **kwargs)

    setattr(analyze_type, _MARK, True)
    Analyzer.analyze_type = analyze_type
