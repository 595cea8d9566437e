"""What every component of the library shares: its type token, argument checks and outputs.

- Type tokens are ``gpu-fungibility:index:<Class>``: the token the package
  schema gives the component, so a program in any language and a Python
  program importing the class directly create the same resource type. A
  component that had another token before carries an alias to it, so existing
  stacks update in place.
- Arguments are TypedDicts (what Pulumi's component provider hands a
  component, and what its schema is inferred from). :func:`argument_issues`
  checks a caller's dict against the TypedDict before anything is built:
  unknown and missing arguments and wrong plain types are reported together.
- Outputs are the attributes annotated on the component class;
  :meth:`LibraryComponent.register` registers them all, under the camelCase
  names the schema gives them.
- A component's own ``depends_on`` is passed on to its children: the engine
  does not make a component's children wait for what the component depends on.
"""

import typing
from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
from pulumi.provider.experimental.util import camel_case

from . import deferred_types, schema_docs
from .errors import ComponentArgsError

schema_docs.teach_analyzer()  # fields the components share are declared once, on a base: the schema must still see their docs
deferred_types.teach_analyzer()  # an output typed by a cloud SDK is a string, so that a check imports no SDK

PACKAGE = "gpu-fungibility"

#: Namespaces Kubernetes itself owns: no workload or claim of the library goes there.
RESERVED_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")

Issues = list[tuple[str, str]]


def type_token(class_name: str) -> str:
    return f"{PACKAGE}:index:{class_name}"


# ---- argument checks --------------------------------------------------------------------

_WRAPPERS = (typing.NotRequired, typing.Required)


def _unwrap(annotation: Any) -> Any:
    """The plain type behind NotRequired/Required/Optional/Input annotations."""
    while True:
        origin = typing.get_origin(annotation)
        if origin in _WRAPPERS:
            annotation = typing.get_args(annotation)[0]
            continue
        if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
            members = [a for a in typing.get_args(annotation) if a is not type(None)]
            plain = [a for a in members if typing.get_origin(a) not in (pulumi.Output,)
                     and not (typing.get_origin(a) and "Awaitable" in str(typing.get_origin(a)))
                     and not isinstance(a, typing.ForwardRef)]
            annotation = plain[0] if plain else Any
            continue
        return annotation


def _is_output(value: Any) -> bool:
    return isinstance(value, pulumi.Output) or hasattr(value, "__await__")


def _accepts_output(annotation: Any) -> bool:
    """Whether an argument's annotation admits a ``pulumi.Output`` (``pulumi.Input[...]``, ``Output[...]``, Any)."""
    while typing.get_origin(annotation) in _WRAPPERS:
        annotation = typing.get_args(annotation)[0]
    if annotation is Any or annotation is pulumi.Output or typing.get_origin(annotation) is pulumi.Output:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
        return any(_accepts_output(a) or "Awaitable" in str(typing.get_origin(a) or a)
                   for a in typing.get_args(annotation))
    return False


def _type_issues(value: Any, annotation: Any, path: str) -> Issues:
    if value is None:
        return []
    if _is_output(value):
        if _accepts_output(annotation):
            return []
        return [(path, "must be a plain value, not a pulumi.Output: the component reads it while it is "
                       "built (resolve it first, or pass a value known before deployment)")]
    annotation = _unwrap(annotation)
    origin = typing.get_origin(annotation)
    if typing.is_typeddict(annotation):
        return argument_issues(value, annotation, f"{path}.")
    if annotation is Any:
        return []
    if origin in (list, Sequence) or annotation in (list, Sequence):
        if not isinstance(value, (list, tuple)):
            return [(path, f"must be a list, got {type(value).__name__}")]
        item = (typing.get_args(annotation) or (Any,))[0]
        return [i for n, v in enumerate(value) for i in _type_issues(v, item, f"{path}[{n}]")]
    if origin in (dict, Mapping) or annotation in (dict, Mapping):
        if not isinstance(value, Mapping):
            return [(path, f"must be a mapping, got {type(value).__name__}")]
        item = (typing.get_args(annotation) or (str, Any))[1]
        return [i for k, v in value.items() for i in _type_issues(v, item, f"{path}.{k}")]
    if annotation is bool and not isinstance(value, bool):
        return [(path, f"must be true or false, got {value!r}")]
    if annotation is int and (isinstance(value, bool) or not (
            isinstance(value, int) or (isinstance(value, float) and value.is_integer()))):
        return [(path, f"must be a whole number, got {value!r}")]
    if annotation is float and (isinstance(value, bool) or not isinstance(value, (int, float))):
        return [(path, f"must be a number, got {value!r}")]
    if annotation is str and not isinstance(value, str):
        return [(path, f"must be a string, got {value!r}")]
    return []


def argument_issues(args: Any, args_type: type, prefix: str = "") -> Issues:
    """Unknown, missing and mistyped arguments of ``args`` against the TypedDict ``args_type``."""
    if not isinstance(args, Mapping):
        return [(prefix.rstrip(".") or "args", f"must be a mapping of {args_type.__name__} fields, "
                                                f"got {type(args).__name__}")]
    hints = dict(args_type.__annotations__)  # real objects: the library never uses string annotations
    issues: Issues = []
    for key in args:
        if key not in hints:
            issues.append((f"{prefix}{key}", f"unknown argument; accepted: {', '.join(sorted(hints))}"))
    for key in sorted(getattr(args_type, "__required_keys__", ())):
        if args.get(key) is None:
            issues.append((f"{prefix}{key}", "required"))
    for key, value in args.items():
        if key in hints:
            issues.extend(_type_issues(value, hints[key], f"{prefix}{key}"))
    return issues


def _top(path: str) -> str:
    """The argument a path starts with (``labels`` for ``labels.team``, ``taints`` for ``taints[0].key``)."""
    return path.split(".", 1)[0].split("[", 1)[0]


# ---- the component base -------------------------------------------------------------------


def _as_list(depends_on: Any) -> list[Any]:
    if depends_on is None:
        return []
    if isinstance(depends_on, (list, tuple)):
        return list(depends_on)
    return [depends_on]


class LibraryComponent(pulumi.ComponentResource):
    """Base of every public component. Subclasses annotate their outputs on the class."""

    #: The type token this component had before it took its ``index`` token (aliased), if any.
    #: Deliberately not annotated: every annotation on a component class is one of its outputs.
    LEGACY_TYPE = None

    def __init__(self, name: str, opts: pulumi.ResourceOptions | None, args: Any = None) -> None:
        """Register the component; given its ``args``, first refuse them with every problem (:meth:`check`)."""
        deferred_types.resolve_annotations(type(self))  # Pulumi reads the outputs' types as it registers them
        opts = opts or pulumi.ResourceOptions()
        if self.LEGACY_TYPE:
            opts = pulumi.ResourceOptions.merge(
                opts, pulumi.ResourceOptions(aliases=[pulumi.Alias(type_=self.LEGACY_TYPE)]))
        super().__init__(type_token(type(self).__name__), name, None, opts)
        self._inherited_depends_on = _as_list(opts.depends_on)
        if args is not None:
            self.fail_on(self.check(name, args))

    @classmethod
    def args_type(cls) -> type:
        """The TypedDict of the component's ``args`` (its ``__init__`` annotation)."""
        return cls.__init__.__annotations__["args"]

    #: ``staticmethod(f)``, where ``f(args)`` lists the problems with well-typed arguments, for a component
    #: whose rules are a function of its arguments alone (else it overrides :meth:`issues`).
    RULES = None

    @classmethod
    def issues(cls, name: str, args: Any) -> Issues:
        """Problems with well-typed arguments, in argument names (``RULES``, or the component's override)."""
        return cls.RULES(args) if cls.RULES else []

    @classmethod
    def check(cls, name: str, args: Any) -> Issues:
        """Every problem with ``args`` for a component named ``name``, without building anything.

        Unknown, missing and mistyped arguments (a ``pulumi.Output`` where a plain value is
        needed among them), then the component's own rules (:meth:`issues`) over the arguments
        that are well typed: both kinds in one list. A program that reads its
        arguments from elsewhere runs this once, up front, to report every
        problem before any resource is registered.
        """
        type_issues = argument_issues(args, cls.args_type())
        if not isinstance(args, Mapping):
            return type_issues
        # The rules run over the well-typed arguments only, so one run reports both kinds of problem.
        mistyped = {_top(path) for path, _ in type_issues}
        clean = {k: v for k, v in args.items() if k not in mistyped}
        try:
            rules = cls.issues(name, clean)
        except (KeyError, TypeError, ValueError, AttributeError, LookupError):
            rules = []  # a rule that needs a mistyped or missing argument: its type problem is reported
        return type_issues + [i for i in rules if _top(i[0]) not in mistyped and i not in type_issues]

    def fail_on(self, issues: Issues) -> None:
        """Raise :class:`ComponentArgsError` naming this component when there are any issues."""
        if issues:
            raise ComponentArgsError(f"{type(self).__name__} {self._name!r}", issues)

    def child(self, *, depends_on: Sequence[Any] = (), **kwargs: Any) -> pulumi.ResourceOptions:
        """Options for a child: parented here, waiting for what this component waits for."""
        return pulumi.ResourceOptions(parent=self, depends_on=[*self._inherited_depends_on, *depends_on], **kwargs)

    @classmethod
    def output_names(cls) -> list[str]:
        """The Python names of the outputs the class declares, base classes first."""
        names: list[str] = []
        for klass in reversed(cls.__mro__):
            if klass in (object, pulumi.Resource, pulumi.ComponentResource):
                continue
            for name in vars(klass).get("__annotations__", {}):
                if not name.startswith("_") and name not in names:
                    names.append(name)
        return names

    def register(self) -> None:
        """Register every declared output under its schema (camelCase) name."""
        self.register_outputs({camel_case(n): getattr(self, n, None) for n in self.output_names()})


def resolved(value: Any, build: Any) -> Any:
    """``build(value)`` now for a plain value, or inside ``apply`` for an Output (another resource's output)."""
    if isinstance(value, pulumi.Output):
        return value.apply(build)
    return build(value)
