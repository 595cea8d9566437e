"""A small static check of DRA selector expressions, run at compile time.

celpy parses CEL but does not type-check it; Kubernetes does, and rejects at
admission what would otherwise only fail when the scheduler evaluates the
selector. This checker infers coarse types over the parse tree and reports
the mistakes that matter for device selectors, with Kubernetes' wording:

- undeclared identifiers (the DRA environment declares only ``device``) and
  fields of ``device`` other than ``driver``, ``attributes``, ``capacity``;
- ordering operators on quantities or versions (``memory >= quantity('40Gi')``
  has no ``_>=_`` overload: use ``compareTo``/``isGreaterThan``);
- comparing a quantity or version with a value of another type, arithmetic on
  them, or a library method called on the wrong type;
- functions this engine does not provide (``cel.bind``, string extensions);
- a result type that can never be a bool;
- as cel-go's checker and Kubernetes' AST validators do (k8s.io/apiserver/pkg/cel/environment/base.go, v1.35.4:
  ``cel.ValidateRegexLiterals``, ``cel.ValidateHomogeneousAggregateLiterals``, ``CrossTypeNumericComparisons``):
  ``==``/``!=`` between two known types that differ, an invalid regular expression literal, a list literal
  whose elements have different known types; ordering across int, uint and double is accepted;
- ``sign`` is a global function only (``sign(q)``; k8s.io/apiserver/pkg/cel/library/quantity.go), and
  ``string()`` has no overload for a version or a quantity.

Attribute values are ``dyn`` (any type), as in Kubernetes, so most checks
only fire when both sides have a known type.
"""

from __future__ import annotations

from collections.abc import Iterable

import lark

from .library import FUNCTIONS, OPTIONAL_FIELD, SETS_PREFIX

DYN, BOOL, INT, UINT, DOUBLE, STRING, BYTES, NULL = "dyn", "bool", "int", "uint", "double", "string", "bytes", "null"
LIST, MAP, TYPE = "list", "map", "type"
QUANTITY, SEMVER = "kubernetes.Quantity", "kubernetes.Semver"
DEVICE, ATTR_DOMAINS, ATTRS, CAP_DOMAINS, CAPS = (
    "kubernetes.DRADevice", "map(string, map(string, dyn))", "map(string, dyn)",
    "map(string, map(string, kubernetes.Quantity))", "map(string, kubernetes.Quantity)",
)
LIBRARY_TYPES = (QUANTITY, SEMVER)
MAPS = (MAP, ATTR_DOMAINS, ATTRS, CAP_DOMAINS, CAPS)

DEVICE_FIELDS = {"driver": STRING, "attributes": ATTR_DOMAINS, "capacity": CAP_DOMAINS}
MACROS = {"all": BOOL, "exists": BOOL, "exists_one": BOOL, "map": LIST, "filter": LIST}

# (receiver, method) -> (accepted argument types, result)
METHODS: dict[tuple[str, str], tuple[tuple[tuple[str, ...], ...], str]] = {
    (QUANTITY, "isGreaterThan"): (((QUANTITY,),), BOOL),
    (QUANTITY, "isLessThan"): (((QUANTITY,),), BOOL),
    (QUANTITY, "compareTo"): (((QUANTITY,),), INT),
    (QUANTITY, "add"): (((QUANTITY, INT),), QUANTITY),
    (QUANTITY, "sub"): (((QUANTITY, INT),), QUANTITY),
    (QUANTITY, "asInteger"): ((), INT),
    (QUANTITY, "isInteger"): ((), BOOL),
    (QUANTITY, "asApproximateFloat"): ((), DOUBLE),
    (SEMVER, "isGreaterThan"): (((SEMVER,),), BOOL),
    (SEMVER, "isLessThan"): (((SEMVER,),), BOOL),
    (SEMVER, "compareTo"): (((SEMVER,),), INT),
    (SEMVER, "major"): ((), INT),
    (SEMVER, "minor"): ((), INT),
    (SEMVER, "patch"): ((), INT),
    (STRING, "contains"): (((STRING,),), BOOL),
    (STRING, "startsWith"): (((STRING,),), BOOL),
    (STRING, "endsWith"): (((STRING,),), BOOL),
    (STRING, "matches"): (((STRING,),), BOOL),
    (STRING, "size"): ((), INT),
    # cel-go's strings extension
    (STRING, "charAt"): (((INT,),), STRING),
    (STRING, "indexOf"): (((STRING,), (INT,)), INT),
    (STRING, "lastIndexOf"): (((STRING,), (INT,)), INT),
    (STRING, "lowerAscii"): ((), STRING),
    (STRING, "upperAscii"): ((), STRING),
    (STRING, "replace"): (((STRING,), (STRING,), (INT,)), STRING),
    (STRING, "split"): (((STRING,), (INT,)), LIST),
    (STRING, "substring"): (((INT,), (INT,)), STRING),
    (STRING, "trim"): ((), STRING),
}
# methods whose trailing arguments are optional: (receiver, name) -> fewest arguments
MIN_ARGS = {(STRING, "indexOf"): 1, (STRING, "lastIndexOf"): 1, (STRING, "replace"): 2, (STRING, "split"): 1,
            (STRING, "substring"): 1}
METHOD_RESULTS = {name: result for (_, name), (_, result) in METHODS.items()}
METHOD_RESULTS.update(join=STRING, orValue=DYN, hasValue=BOOL, value=DYN)
METHOD_RESULTS[OPTIONAL_FIELD] = DYN
METHOD_ARITIES: dict[str, set[int]] = {}
for (_receiver, _name), (_accepted, _) in METHODS.items():
    _fewest = len(_accepted)
    METHOD_ARITIES.setdefault(_name, set()).update(
        range(MIN_ARGS.get((_receiver, _name), _fewest), len(_accepted) + 1))
for _ambiguous in ("indexOf", "lastIndexOf"):  # also list methods in Kubernetes' lists library
    METHOD_RESULTS.pop(_ambiguous)

GLOBALS: dict[str, str] = {
    "quantity": QUANTITY, "isQuantity": BOOL, "semver": SEMVER, "isSemver": BOOL, "sign": INT,
    "has": BOOL, "size": INT, "int": INT, "uint": UINT, "double": DOUBLE, "string": STRING,
    "bool": BOOL, "bytes": BYTES, "type": TYPE, "dyn": DYN, "matches": BOOL,
    f"{SETS_PREFIX}contains": BOOL, f"{SETS_PREFIX}equivalent": BOOL, f"{SETS_PREFIX}intersects": BOOL,
}
GLOBAL_ARGS: dict[str, tuple[tuple[str, ...], ...]] = {
    "quantity": ((STRING,),), "isQuantity": ((STRING,),), "semver": ((STRING,), (BOOL,)),
    "isSemver": ((STRING,), (BOOL,)), "sign": ((QUANTITY,),),
    "string": ((INT, UINT, DOUBLE, STRING, BOOL, BYTES),),
    f"{SETS_PREFIX}contains": ((LIST,), (LIST,)), f"{SETS_PREFIX}equivalent": ((LIST,), (LIST,)),
    f"{SETS_PREFIX}intersects": ((LIST,), (LIST,)),
}
NUMBERS = (INT, UINT, DOUBLE)

LITERALS = {
    "INT_LIT": INT, "UINT_LIT": UINT, "FLOAT_LIT": DOUBLE, "STRING_LIT": STRING, "MLSTRING_LIT": STRING,
    "BYTES_LIT": BYTES, "BOOL_LIT": BOOL, "NULL_LIT": NULL,
}
OPERATORS = {
    "relation_lt": "_<_", "relation_le": "_<=_", "relation_gt": "_>_", "relation_ge": "_>=_",
    "relation_eq": "_==_", "relation_ne": "_!=_", "relation_in": "@in",
    "addition_add": "_+_", "addition_sub": "_-_",
    "multiplication_mul": "_*_", "multiplication_div": "_/_", "multiplication_mod": "_%_",
}
PRIMITIVES = (BOOL, INT, UINT, DOUBLE, STRING, BYTES)


class CheckError(Exception):
    """A type error Kubernetes would report when compiling the selector."""


class UnsupportedError(CheckError):
    """Valid in Kubernetes, perhaps, but beyond what this engine evaluates."""


def _known(t: str) -> bool:
    return t != DYN


def _overload_error(function: str, *types: str) -> CheckError:
    return CheckError(f"found no matching overload for '{function}' applied to '({', '.join(types)})'")


class Checker:
    """Infers a coarse type for each node; raises CheckError on the first problem."""

    def __init__(self) -> None:
        self.scopes: list[set[str]] = []

    def check(self, tree: lark.Tree) -> str:
        result = self.visit(tree)
        if result not in (BOOL, DYN):
            raise CheckError(f"must evaluate to bool or the unknown type, not {result}")
        return result

    # ---- dispatch ----
    def visit(self, node: lark.Tree | lark.Token | None) -> str:
        if not isinstance(node, lark.Tree):
            return DYN
        handler = getattr(self, f"_{node.data}", None)
        if handler is not None:
            return handler(node)
        types = [self.visit(child) for child in node.children]
        return types[0] if len(types) == 1 else DYN

    def _trees(self, children: Iterable[object]) -> list[lark.Tree]:
        return [c for c in children if isinstance(c, lark.Tree)]

    # ---- operators ----
    def _expr(self, node: lark.Tree) -> str:
        parts = self._trees(node.children)
        if len(parts) == 1:
            return self.visit(parts[0])
        condition, yes, no = (self.visit(p) for p in parts)
        if _known(condition) and condition != BOOL:
            raise _overload_error("_?_:_", condition, yes, no)
        return yes if yes == no else DYN

    def _logical(self, node: lark.Tree, function: str) -> str:
        parts = self._trees(node.children)
        types = [self.visit(p) for p in parts]
        if len(types) == 1:
            return types[0]
        if any(_known(t) and t != BOOL for t in types):
            raise _overload_error(function, *types)
        return BOOL

    def _conditionalor(self, node: lark.Tree) -> str:
        return self._logical(node, "_||_")

    def _conditionaland(self, node: lark.Tree) -> str:
        return self._logical(node, "_&&_")

    def _binary(self, node: lark.Tree) -> str:
        parts = self._trees(node.children)
        if len(parts) == 1:
            return self.visit(parts[0])
        operator_node, right_node = parts
        op = operator_node.data
        left = self.visit(operator_node.children[0])
        right = self.visit(right_node)
        function = OPERATORS[op]
        if op == "relation_in":
            return BOOL
        if op in ("relation_eq", "relation_ne"):
            if (left in LIBRARY_TYPES or right in LIBRARY_TYPES or (left in PRIMITIVES and right in PRIMITIVES)) \
                    and _known(left) and _known(right) and left != right and NULL not in (left, right):
                raise _overload_error(function, left, right)
            return BOOL
        if left in LIBRARY_TYPES or right in LIBRARY_TYPES:
            hint = " (use compareTo, isGreaterThan or isLessThan)" if op.startswith("relation") else ""
            raise CheckError(str(_overload_error(function, left, right)) + hint)
        cross_numeric = op.startswith("relation") and left in NUMBERS and right in NUMBERS
        if left in PRIMITIVES and right in PRIMITIVES and left != right and not cross_numeric:
            raise _overload_error(function, left, right)
        if op.startswith("relation"):
            return BOOL
        return left if left == right else DYN

    _relation = _binary
    _addition = _binary
    _multiplication = _binary

    def _unary(self, node: lark.Tree) -> str:
        parts = self._trees(node.children)
        if len(parts) == 1:
            return self.visit(parts[0])
        op, operand_node = parts
        operand = self.visit(operand_node)
        if op.data == "unary_not":
            if _known(operand) and operand != BOOL:
                raise _overload_error("!_", operand)
            return BOOL
        if operand in LIBRARY_TYPES or operand in (STRING, BOOL, BYTES):
            raise _overload_error("-_", operand)
        return operand

    # ---- members ----
    def _select(self, receiver: str, field: str) -> str:
        if receiver == DEVICE:
            if field not in DEVICE_FIELDS:
                raise CheckError(f"undefined field '{field}' (a device has driver, attributes and capacity)")
            return DEVICE_FIELDS[field]
        if receiver == ATTR_DOMAINS:
            return ATTRS
        if receiver == CAP_DOMAINS:
            return CAPS
        if receiver == CAPS:
            return QUANTITY
        if receiver in LIBRARY_TYPES or receiver in PRIMITIVES or receiver == LIST:
            raise CheckError(f"type '{receiver}' does not support field selection")
        return DYN

    def _member_dot(self, node: lark.Tree) -> str:
        member, field = node.children
        return self._select(self.visit(member), str(field))

    def _member_index(self, node: lark.Tree) -> str:
        member, index = node.children
        receiver = self.visit(member)
        self.visit(index)
        if receiver in (ATTR_DOMAINS, CAP_DOMAINS, CAPS):
            return self._select(receiver, "")
        return DYN

    def _member_dot_arg(self, node: lark.Tree) -> str:
        member, name_token, *rest = node.children
        name = str(name_token)
        args = self._trees(rest[0].children) if rest and isinstance(rest[0], lark.Tree) else []
        if name in MACROS:
            return self._macro(member, name, args)
        if self._is_ident(member, "cel"):
            raise UnsupportedError(f"cel.{name}() is not supported by this CEL engine; write the expression without it")
        receiver = self.visit(member)
        arg_types = [self.visit(a) for a in args]
        if name == "matches" and len(args) == 1:
            _check_regex(args[0])
        return self._method(receiver, name, arg_types)

    def _macro(self, member: lark.Tree, name: str, args: list[lark.Tree]) -> str:
        self.visit(member)
        variable = self._ident_name(args[0]) if args else None
        if variable is None or len(args) != 2:
            raise CheckError(f"{name}() takes a variable name and an expression")
        self.scopes.append({variable})
        try:
            self.visit(args[1])
        finally:
            self.scopes.pop()
        return MACROS[name]

    def _method(self, receiver: str, name: str, arg_types: list[str]) -> str:
        if name not in FUNCTIONS and name not in METHOD_RESULTS and name not in _celpy_functions():
            raise UnsupportedError(f"'{name}' is not provided by this CEL engine")
        if receiver in LIBRARY_TYPES or receiver == STRING:
            signature = METHODS.get((receiver, name))
            if signature is None:
                raise _overload_error(name, receiver, *arg_types)
            accepted, result = signature
            fewest = MIN_ARGS.get((receiver, name), len(accepted))
            if not fewest <= len(arg_types) <= len(accepted) or any(
                _known(t) and t not in ok for t, ok in zip(arg_types, accepted, strict=False)
            ):
                raise _overload_error(name, receiver, *arg_types)
            return result
        if name in METHOD_ARITIES and len(arg_types) not in METHOD_ARITIES[name]:
            raise _overload_error(name, receiver, *arg_types)
        return METHOD_RESULTS.get(name, DYN)

    # ---- primaries ----
    def _ident(self, node: lark.Tree) -> str:
        name = str(node.children[0])
        if name == "device":
            return DEVICE
        if any(name in scope for scope in self.scopes):
            return DYN
        raise CheckError(f"undeclared reference to '{name}' (the DRA selector environment declares only 'device')")

    _dot_ident = _ident

    def _ident_arg(self, node: lark.Tree) -> str:
        name_token, *rest = node.children
        name = str(name_token)
        args = self._trees(rest[0].children) if rest and isinstance(rest[0], lark.Tree) else []
        if name not in GLOBALS:
            raise UnsupportedError(f"'{name}' is not provided by this CEL engine")
        if name == "has":
            return BOOL
        arg_types = [self.visit(a) for a in args]
        if name == "matches" and len(args) == 2:
            _check_regex(args[1])
        accepted = GLOBAL_ARGS.get(name)
        if accepted is not None:
            if not 1 <= len(arg_types) <= len(accepted) or any(
                _known(t) and t not in ok for t, ok in zip(arg_types, accepted, strict=False)
            ):
                raise _overload_error(name, *arg_types)
        return GLOBALS[name]

    _dot_ident_arg = _ident_arg

    def _literal(self, node: lark.Tree) -> str:
        token = node.children[0]
        return LITERALS.get(token.type, DYN) if isinstance(token, lark.Token) else DYN

    def _list_lit(self, node: lark.Tree) -> str:
        elements = [self.visit(e) for child in self._trees(node.children) for e in self._trees(child.children)]
        known = [t for t in elements if _known(t) and t != NULL]
        for t in known[1:]:
            if t != known[0]:
                raise CheckError(f"expected type '{known[0]}' but found '{t}' (a list literal's elements must have "
                                 "one type)")
        return LIST

    def _map_lit(self, node: lark.Tree) -> str:
        for child in node.children:
            self.visit(child)
        return MAP

    def _paren_expr(self, node: lark.Tree) -> str:
        return self.visit(self._trees(node.children)[0])

    # ---- helpers ----
    def _ident_name(self, expr: lark.Tree) -> str | None:
        node: object = expr
        while isinstance(node, lark.Tree):
            if node.data == "ident":
                return str(node.children[0])
            if len(node.children) != 1:
                return None
            node = node.children[0]
        return None

    def _is_ident(self, member: lark.Tree, name: str) -> bool:
        return (
            member.data == "member"
            and len(member.children) == 1
            and isinstance(member.children[0], lark.Tree)
            and member.children[0].data == "primary"
            and member.children[0].children[0].data == "ident"
            and str(member.children[0].children[0].children[0]) == name
        )


def _string_literal(node: lark.Tree) -> str | None:
    """The value of an argument that is a plain string literal, else None."""
    current: object = node
    while isinstance(current, lark.Tree):
        if current.data == "literal":
            token = current.children[0]
            if isinstance(token, lark.Token) and token.type in ("STRING_LIT", "MLSTRING_LIT"):
                from celpy.evaluation import celstr

                return str(celstr(token))
            return None
        trees = [c for c in current.children if isinstance(c, lark.Tree)]
        if len(trees) != 1 or len(current.children) != 1:
            return None
        current = trees[0]
    return None


def _check_regex(node: lark.Tree) -> None:
    """cel.ValidateRegexLiterals: a literal pattern must compile (RE2, as cel-go's ``matches``)."""
    pattern = _string_literal(node)
    if pattern is None:
        return
    import re2

    options = re2.Options()
    options.log_errors = False  # the error is reported here, not on stderr
    try:
        re2.compile(pattern, options)
    except Exception as exc:  # noqa: BLE001 - re2 raises its own error type
        detail = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise CheckError(f"invalid matches argument: error parsing regexp: {detail}") from None


_BASE: set[str] | None = None


def _celpy_functions() -> set[str]:
    global _BASE
    if _BASE is None:
        from celpy.evaluation import base_functions

        _BASE = set(base_functions)
    return _BASE


def check(tree: lark.Tree) -> str:
    """The expression's result type; raises CheckError on a type error."""
    return Checker().check(tree)
