"""Compare two preview-shaped plans resource by resource: create, update, replace, delete.

Resources are matched by URN; a new resource whose ``aliases`` name an old URN is the same resource
under a new name (the engine would keep it). Each changed input is one property change; a change that
a provider or the resource's ``replaceOnChanges`` marks as forcing a new resource turns the update into
a replace. ``ignoreChanges`` paths are left out, as the engine leaves them out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from plan_diff import rules as rules_mod
from plan_diff.properties import Path, PropertyChange, compare_inputs, format_path, matches_prefix, parse_path

STACK_TYPE = "pulumi:pulumi:Stack"
OP_ORDER = {"replace": 0, "delete": 1, "create": 2, "update": 3}


@dataclass
class Resource:
    urn: str
    type: str
    custom: bool
    parent: str
    inputs: dict[str, Any]
    provider: str = ""
    aliases: list[str] = field(default_factory=list)
    replace_on_changes: list[str] = field(default_factory=list)
    ignore_changes: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.urn.rsplit("::", 1)[-1]


@dataclass
class Replacement:
    """A property change that forces replacement, and the rule that says so."""

    change: PropertyChange
    rule: rules_mod.Rule


@dataclass
class ResourceChange:
    op: str  # create | update | replace | delete
    old: Resource | None
    new: Resource | None
    properties: list[PropertyChange] = field(default_factory=list)
    replacements: list[Replacement] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    component: Resource | None = None

    @property
    def resource(self) -> Resource:
        return self.new or self.old  # type: ignore[return-value]

    @property
    def urn(self) -> str:
        return self.resource.urn

    @property
    def type(self) -> str:
        return self.resource.type

    @property
    def name(self) -> str:
        return self.resource.name

    def replacing(self, change: PropertyChange) -> rules_mod.Rule | None:
        return next((r.rule for r in self.replacements if r.change is change), None)


@dataclass
class PlanDiff:
    changes: list[ResourceChange]
    unchanged: int
    #: (old URN, new URN) of resources kept under a new URN by an alias, with no other change
    renamed: list[tuple[str, str]]
    #: secrets on both sides that could not be compared (a plan made without secret digests)
    uncompared_secrets: int

    def count(self, op: str) -> int:
        return sum(1 for c in self.changes if c.op == op)

    @property
    def summary(self) -> dict[str, int]:
        counts = {op: self.count(op) for op in OP_ORDER if self.count(op)}
        counts["same"] = self.unchanged
        return counts


#: What offline plans before 0.4.0 put in front of the type of every resource under the stack; the engine never did.
LEGACY_STACK_PREFIX = "::pulumi:pulumi:Stack$"


def engine_urn(urn: str) -> str:
    """A URN (or ``<provider URN>::<id>``) as the engine names it: an older offline plan's ``pulumi:pulumi:Stack$``
    prefix dropped, so a base planned before 0.4.0 is compared with a head planned after it, not shown moved."""
    return urn.replace(LEGACY_STACK_PREFIX, "::") if urn else urn


def _provider_reference(reference: str) -> str:
    """An explicit provider's reference; '' for the engine's default provider (older plans named none)."""
    reference = engine_urn(reference)
    name = reference.split("::")[3] if reference.count("::") >= 3 else ""
    return "" if "::pulumi:providers:" in reference and name.startswith("default") else reference


def _fill_legacy_provider_inputs(old: dict[str, Resource], new: dict[str, Resource]) -> None:
    """An explicit provider planned before 0.4.0 lacks the ``version`` and ``__internal`` inputs the engine always
    records; take them from the new plan, so the first diff across that change shows no false update."""
    for urn, before in old.items():
        after = new.get(urn)
        if after is None or not before.type.startswith("pulumi:providers:"):
            continue
        for key in ("version", "__internal"):
            if key not in before.inputs and key in after.inputs:
                before.inputs = {**before.inputs, key: after.inputs[key]}


def resources(plan: dict[str, Any]) -> dict[str, Resource]:
    """URN -> resource, from a ``pulumi preview --json``-shaped document (ours or the CLI's)."""
    out: dict[str, Resource] = {}
    for step in plan.get("steps", []):
        state = step.get("newState") or step.get("oldState") or {}
        urn = engine_urn(state.get("urn") or step.get("urn"))
        if not urn:
            continue
        out[urn] = Resource(
            urn=urn,
            type=state.get("type") or urn.split("::")[2].split("$")[-1],
            custom=bool(state.get("custom", True)),
            parent=engine_urn(state.get("parent", "")),
            inputs=state.get("inputs") or {},
            provider=_provider_reference(state.get("provider") or step.get("provider") or ""),
            aliases=[engine_urn(a) for a in state.get("aliases") or [] if isinstance(a, str)],
            replace_on_changes=list(state.get("replaceOnChanges") or []),
            ignore_changes=list(state.get("ignoreChanges") or []),
        )
    return out


def compare(old_plan: dict[str, Any], new_plan: dict[str, Any]) -> PlanDiff:
    old, new = resources(old_plan), resources(new_plan)
    _fill_legacy_provider_inputs(old, new)
    pairs, renamed_pairs = _match(old, new)
    changes: list[ResourceChange] = []
    renamed: list[tuple[str, str]] = []
    unchanged = 0
    uncompared = 0
    matched_old = {o for o, _ in pairs}
    for old_urn, new_urn in pairs:
        change, skipped = _compare_resource(old[old_urn], new[new_urn], new)
        uncompared += skipped
        if change is None:
            unchanged += 1
            if (old_urn, new_urn) in renamed_pairs:
                renamed.append((old_urn, new_urn))
        else:
            if (old_urn, new_urn) in renamed_pairs:
                change.notes.append(f"kept under a new URN by its alias (was `{old_urn}`)")
            changes.append(change)
    matched_new = {n for _, n in pairs}
    for urn, res in new.items():
        if urn not in matched_new:
            changes.append(ResourceChange("create", None, res))
    for urn, res in old.items():
        if urn not in matched_old:
            changes.append(ResourceChange("delete", res, None))
    _note_moves_without_alias(changes)
    for change in changes:
        change.component = _component(change, old, new)
    changes.sort(key=lambda c: (_group_key(c), OP_ORDER[c.op], c.urn))
    return PlanDiff(changes, unchanged, renamed, uncompared)


def _match(old: dict[str, Resource], new: dict[str, Resource]) -> tuple[list[tuple[str, str]], set[tuple[str, str]]]:
    """(old URN, new URN) pairs: same URN first, then a new resource's aliases, each old URN used once."""
    pairs = [(urn, urn) for urn in new if urn in old]
    taken = {urn for urn, _ in pairs}
    renamed = set()
    for urn, res in new.items():
        if urn in old:
            continue
        alias = next((a for a in res.aliases if a in old and a not in taken and a not in new), None)
        if alias:
            pairs.append((alias, urn))
            renamed.add((alias, urn))
            taken.add(alias)
    return pairs, renamed


def _compare_resource(old: Resource, new: Resource,
                      new_all: dict[str, Resource]) -> tuple[ResourceChange | None, int]:
    """The change between two states of one resource (None if none), and how many secrets it could not compare."""
    comparison = compare_inputs(old.inputs, new.inputs)
    ignored = [parse_path(p) for p in new.ignore_changes]
    properties = [c for c in comparison.changes if not any(matches_prefix(i, c.path) for i in ignored)]
    if not properties:
        return None, len(comparison.uncompared_secrets)
    notes: list[str] = []
    replacements: list[Replacement] = []
    if new.custom:
        provider_inputs = _provider_inputs(new, new_all)
        rule_list = rules_mod.rules_for(new.type, new.inputs, provider_inputs)
        option_rules = rules_mod.option_rules(new.replace_on_changes)
        for change in properties:
            rule = rules_mod.replacing_rule(option_rules + (rule_list or []), change.path, old.inputs,
                                            new.inputs)
            if rule is not None:
                replacements.append(Replacement(change, rule))
            elif rules_mod.unread(new.type, change.path):
                notes.append(f"`{format_path(change.path)}`: no provider source for this field was read here; "
                             "the provider may replace the resource")
        if rule_list is None and not replacements:
            notes.append("no replacement rules are modelled for this type: the provider may still replace it")
        if replacements and all(r.rule.api_only for r in replacements):
            notes.append("pulumi-kubernetes lists no replacement for this change; without `replaceOnChanges` "
                         "on the resource, `pulumi up` tries an in-place update that the API server refuses "
                         "(field is immutable)")
    op = "replace" if replacements else "update"
    return ResourceChange(op, old, new, properties, replacements, notes), len(comparison.uncompared_secrets)


def _provider_inputs(res: Resource, all_resources: dict[str, Resource]) -> dict[str, Any]:
    """The inputs of the explicit provider a resource names (``<provider URN>::<id>``), if any."""
    if not res.provider:
        return {}
    provider = all_resources.get(res.provider.rsplit("::", 1)[0])
    return provider.inputs if provider else {}


def _note_moves_without_alias(changes: list[ResourceChange]) -> None:
    """A delete and a create of the same type and name: a move (new parent or type path) with no alias."""
    deleted = {(c.type, c.name): c for c in changes if c.op == "delete"}
    for created in (c for c in changes if c.op == "create"):
        gone = deleted.get((created.type, created.name))
        if gone is not None and gone.resource.custom:
            note = (f"same type and name as the deleted `{gone.urn}`: moved without an alias, so a real stack "
                    "deletes and recreates it")
            created.notes.append(note)
            gone.notes.append(f"moved to `{created.urn}` without an alias")


def _component(change: ResourceChange, old: dict[str, Resource], new: dict[str, Resource]) -> Resource | None:
    """The nearest component resource (not the stack) on the resource's parent chain, or itself if it is one."""
    index = new if change.new is not None else old
    current: Resource | None = change.resource
    while current is not None:
        if not current.custom and current.type != STACK_TYPE:
            return current
        current = index.get(current.parent)
    return None


def _group_key(change: ResourceChange) -> tuple[int, str]:
    return (1, "") if change.component is None else (0, change.component.urn)


def top_level_keys(paths: list[Path]) -> list[str]:
    return sorted({str(p[0]) for p in paths if p})


def detailed_diff(change: ResourceChange) -> dict[str, dict[str, Any]]:
    """``detailedDiff`` as the engine writes it: path -> {kind, inputDiff}; ``*-replace`` when it replaces."""
    out = {}
    for prop in change.properties:
        kind = prop.kind + ("-replace" if change.replacing(prop) is not None else "")
        out[format_path(prop.path)] = {"kind": kind, "inputDiff": True}
    return out
