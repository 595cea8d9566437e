"""Kubernetes' node-selection rules: taints and tolerations, node selectors, required node affinity.

The one copy of these semantics in the project: the components use it to
write tolerations, the simulator to place pods, the policy pack to decide
which plugin runs on which pool. Pure functions over plain dicts shaped like
the Kubernetes API (camelCase keys).

Semantics (``k8s.io/component-helpers/scheduling/corev1`` and
``k8s.io/api/core/v1`` ``Toleration.ToleratesTaint``):

- ``nodeSelector``: every key must be present with exactly that value.
- required node affinity: ``nodeSelectorTerms`` are ORed; inside a term the
  ``matchExpressions`` (and ``matchFields``) are ANDed; an empty term matches
  nothing, and so does a selector with no terms.
- operators: ``In`` (label present, value listed), ``NotIn`` (label absent or
  value not listed), ``Exists``, ``DoesNotExist``, ``Gt``/``Lt`` (label present,
  both sides integers, exactly one value); an unknown operator never matches.
- ``preferredDuringScheduling...`` never decides *whether* a pod may run.
- taints: a node admits a pod when every ``NoSchedule`` and ``NoExecute`` taint
  is tolerated; ``PreferNoSchedule`` never blocks. A toleration matches a taint
  when its effect is empty or equal, and either its operator is ``Exists`` (any
  value; an empty key with ``Exists`` matches every taint) or its operator is
  ``Equal`` (the default) with an equal key and value.
- label and taint keys: ``[prefix/]name``, name up to 63 characters of
  letters, digits, ``-``, ``_``, ``.`` starting and ending alphanumeric, prefix a
  DNS subdomain (``k8s.io/apimachinery/pkg/util/validation``).
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")

#: Effect spellings of the cloud APIs (GKE ``nodeConfig.taints``, EKS ``taints``) -> Kubernetes.
CLOUD_EFFECTS = {
    "NO_SCHEDULE": "NoSchedule",
    "PREFER_NO_SCHEDULE": "PreferNoSchedule",
    "NO_EXECUTE": "NoExecute",
}
#: Kubernetes -> the cloud APIs' spelling (the same on GKE and EKS).
API_EFFECTS = {k8s: api for api, k8s in CLOUD_EFFECTS.items()}

#: Tolerations the DaemonSet controller adds to every daemon pod (pkg/controller/daemon/util).
DAEMONSET_DEFAULT_TOLERATIONS: tuple[dict[str, str], ...] = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
)


@dataclass(frozen=True)
class NodeTaint:
    """A taint on a node, in Kubernetes spelling (``NoSchedule``, ``PreferNoSchedule``, ``NoExecute``)."""

    key: str
    value: str = ""
    effect: str = "NoSchedule"

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"

    def as_dict(self) -> dict[str, str]:
        return {"key": self.key, "value": self.value, "effect": self.effect}


def taint_from_api(raw: Mapping[str, Any]) -> NodeTaint:
    """A taint from Kubernetes or cloud-API spelling (``NO_SCHEDULE`` becomes ``NoSchedule``)."""
    effect = str(raw.get("effect") or "NoSchedule")
    return NodeTaint(str(raw.get("key") or ""), str(raw.get("value") or ""), CLOUD_EFFECTS.get(effect, effect))


# ---- label and taint keys --------------------------------------------------------------

_QUALIFIED_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL_RULE = ("a label key is [prefix/]name: name up to 63 letters, digits, '-', '_', '.' starting and ending "
              "alphanumeric; prefix a DNS subdomain")


def label_key_problem(key: str) -> str | None:
    """Why Kubernetes would refuse ``key`` as a label or taint key, or None."""
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return f"{key!r} has an invalid prefix {prefix!r}; {LABEL_RULE}"
    if not _QUALIFIED_NAME.match(name):
        return f"{key!r} is not a valid key; {LABEL_RULE}"
    return None


def label_value_problem(value: str) -> str | None:
    """Why Kubernetes would refuse ``value`` as a label or taint value, or None."""
    if value and not _QUALIFIED_NAME.match(value):
        return (f"{value!r} is not a valid value: up to 63 letters, digits, '-', '_', '.', "
                "starting and ending alphanumeric (or empty)")
    return None


def is_dns_subdomain(name: str) -> bool:
    return len(name) <= 253 and bool(_DNS_SUBDOMAIN.match(name))


# ---- label selection ----------------------------------------------------------------


def requirement_matches(requirement: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """One ``NodeSelectorRequirement`` against node labels."""
    key = requirement.get("key")
    operator = requirement.get("operator")
    values = [str(v) for v in (requirement.get("values") or [])]
    present = key in labels
    value = labels.get(key) if present else None
    if operator == "In":
        return present and value in values
    if operator == "NotIn":
        return not present or value not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt"):
        if not present or len(values) != 1:
            return False
        try:
            node_value, bound = int(str(value)), int(values[0])
        except ValueError:
            return False
        return node_value > bound if operator == "Gt" else node_value < bound
    return False  # an unknown operator is invalid: the term cannot match


def term_matches(term: Mapping[str, Any], labels: Mapping[str, str], node_name: str | None = None) -> bool:
    """One ``NodeSelectorTerm``: all expressions and fields must match; an empty term matches nothing."""
    expressions = list(term.get("matchExpressions") or [])
    fields = list(term.get("matchFields") or [])
    if not expressions and not fields:
        return False
    if not all(requirement_matches(r, labels) for r in expressions):
        return False
    field_values = {"metadata.name": node_name} if node_name is not None else {}
    return all(requirement_matches(f, field_values) for f in fields)


def node_selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str],
                          node_name: str | None = None) -> bool:
    """A ``NodeSelector`` (``nodeSelectorTerms``, ORed); no terms matches nothing; None matches every node."""
    if selector is None:
        return True
    terms = list(selector.get("nodeSelectorTerms") or [])
    return any(term_matches(t, labels, node_name) for t in terms)


def simple_selector_matches(node_selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """A pod's ``nodeSelector`` map: every key present with exactly that value."""
    return all(labels.get(k) == str(v) for k, v in (node_selector or {}).items())


def required_node_selector(affinity: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """``affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution``, or None."""
    node_affinity = (affinity or {}).get("nodeAffinity") or {}
    return node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")


# ---- taints and tolerations ---------------------------------------------------------


def toleration_tolerates(toleration: Mapping[str, Any], taint: NodeTaint) -> bool:
    effect = toleration.get("effect") or ""
    if effect and effect != taint.effect:
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return key == "" or key == taint.key
    if operator == "Equal":
        return key == taint.key and str(toleration.get("value") or "") == taint.value
    return False


def untolerated_taints(tolerations: Iterable[Mapping[str, Any]], taints: Iterable[NodeTaint]) -> list[NodeTaint]:
    """The ``NoSchedule``/``NoExecute`` taints no toleration covers (these keep the pod off)."""
    tolerations = list(tolerations)
    return [t for t in taints
            if t.effect in BLOCKING_EFFECTS and not any(toleration_tolerates(tol, t) for tol in tolerations)]


def tolerations_for(taints: Iterable[NodeTaint], base: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """``base`` plus one explicit toleration per taint no toleration covers yet, in order.

    A taint with a value gets an ``Equal`` toleration for exactly that value, one
    without a value an ``Exists`` toleration for its key: never a blanket
    ``operator: Exists`` without a key.
    """
    result = [dict(t) for t in base]
    for taint in taints:
        if any(toleration_tolerates(t, taint) for t in result):
            continue
        if taint.value:
            result.append({"key": taint.key, "operator": "Equal", "value": taint.value, "effect": taint.effect})
        else:
            result.append({"key": taint.key, "operator": "Exists", "effect": taint.effect})
    return result


def unique_taints(taints: Iterable[NodeTaint]) -> list[NodeTaint]:
    """Each taint once, in first-occurrence order."""
    return list(dict.fromkeys(taints))


def _requirement_text(requirement: Mapping[str, Any]) -> str:
    values = requirement.get("values") or []
    suffix = f" [{', '.join(str(v) for v in values)}]" if values else ""
    return f"{requirement.get('key')} {requirement.get('operator')}{suffix}"


def describe_mismatch(selector: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    """Why no term of a required node affinity matches: the failing expressions and the node's values."""
    terms = list(selector.get("nodeSelectorTerms") or [])
    if not terms:
        return "required node affinity has no nodeSelectorTerms (matches no node)"
    failing: list[str] = []
    for term in terms:
        for requirement in term.get("matchExpressions") or []:
            if not requirement_matches(requirement, labels):
                key = requirement.get("key")
                actual = f"{key}={labels[key]}" if key in labels else f"no {key} label"
                failing.append(f"{_requirement_text(requirement)} (node has {actual})")
    detail = "; ".join(dict.fromkeys(failing)) or "empty terms"
    return f"required node affinity does not match: {detail}"


# ---- the whole decision ----------------------------------------------------------------


@dataclass(frozen=True)
class PodPlacement:
    """Where a pod may run: its nodeSelector, affinity and tolerations."""

    node_selector: Mapping[str, Any]
    affinity: Mapping[str, Any] | None
    tolerations: Sequence[Mapping[str, Any]]
    daemon: bool = True  # DaemonSet pods get the controller's default tolerations

    def all_tolerations(self) -> list[Mapping[str, Any]]:
        extra = list(DAEMONSET_DEFAULT_TOLERATIONS) if self.daemon else []
        return [*self.tolerations, *extra]


@dataclass(frozen=True)
class Verdict:
    runs: bool
    reasons: tuple[str, ...]  # why not (empty when it runs)


def evaluate(placement: PodPlacement, labels: Mapping[str, str], taints: Iterable[NodeTaint],
             node_name: str | None = None) -> Verdict:
    """Whether the pod may run on a node with these labels and taints, and if not, why."""
    reasons: list[str] = []
    missing = {k: str(v) for k, v in (placement.node_selector or {}).items() if labels.get(k) != str(v)}
    if missing:
        reasons.append("nodeSelector needs " + ", ".join(f"{k}={v}" for k, v in sorted(missing.items())))
    selector = required_node_selector(placement.affinity)
    if selector is not None and not node_selector_matches(selector, labels, node_name):
        reasons.append(describe_mismatch(selector, labels))
    blocked = untolerated_taints(placement.all_tolerations(), taints)
    if blocked:
        reasons.append("does not tolerate " + ", ".join(str(t) for t in blocked))
    return Verdict(not reasons, tuple(reasons))
