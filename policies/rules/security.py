"""Security rules (resource, mandatory).

``no-public-inference-endpoint``: a ``LoadBalancer`` Service must be internal
(GKE ``networking.gke.io/load-balancer-type: Internal``, EKS
``service.beta.kubernetes.io/aws-load-balancer-scheme: internal`` or the legacy
``aws-load-balancer-internal: "true"``) unless the policy config's
``allowedPublicServices`` lists it as ``name`` or ``namespace/name``.

``secrets-from-secret-store``: token-like environment variables (``HF_TOKEN``,
``*_API_KEY``, ``*_SECRET``, ``*_PASSWORD`` ...) of every container come from a
Secret (``valueFrom.secretKeyRef``), never a literal ``value``; no container
argument carries a literal Hugging Face token.

``pinned-charts``: every Helm release or chart names an exact version (or an
OCI digest), never a range or nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pulumi_policy import ReportViolation, ResourceValidationArgs

from ..stack_view import UNKNOWN, WORKLOAD_KINDS, dig, res_of
from ..unknowns import NotJudged, has_unknown, is_unknown
from .common import config_list, containers, pod_spec, pod_spec_problem

INTERNAL_LB_ANNOTATIONS = {
    "networking.gke.io/load-balancer-type": "internal",
    "cloud.google.com/load-balancer-type": "internal",
    "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
    "service.beta.kubernetes.io/aws-load-balancer-internal": "true",
    "service.beta.kubernetes.io/azure-load-balancer-internal": "true",
}

HELM_TYPES = ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v3:Chart", "kubernetes:helm.sh/v4:Chart")
EXACT_VERSION = re.compile(r"^v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")
SENSITIVE_WORDS = {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "CREDENTIALS", "CREDENTIAL"}
HF_TOKEN_LITERAL = re.compile(r"\bhf_[A-Za-z0-9]{20,}\b")
TOKEN_FLAG_LITERAL = re.compile(r"--(?:hf-token|token|api-key)[= ](?!\$)\S+")


def is_internal(annotations: Mapping[str, Any]) -> bool:
    return any(str(annotations.get(key, "")).lower() == value for key, value in INTERNAL_LB_ANNOTATIONS.items())


def validate_no_public_inference_endpoint(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if not args.resource_type.endswith(":Service") or not args.resource_type.startswith("kubernetes:core/"):
        return
    res = res_of(args)
    service_type = dig(res.props, "spec", "type")
    if is_unknown(res.props.get("spec")) or is_unknown(service_type):
        raise NotJudged([f"spec.type of Service {res.k8s_name} ({res.urn})"])
    if str(service_type) != "LoadBalancer":
        return
    metadata = res.props.get("metadata")
    annotations = (metadata if isinstance(metadata, dict) else {}).get("annotations") or {}
    if isinstance(annotations, dict) and is_internal(annotations):
        return
    if has_unknown([metadata, annotations]):
        raise NotJudged([f"metadata.annotations (internal or not) of LoadBalancer Service {res.k8s_name} ({res.urn})"])
    allowed = config_list(args.get_config(), "allowedPublicServices")
    if res.k8s_name in allowed or f"{res.k8s_namespace}/{res.k8s_name}" in allowed:
        return
    report_violation(
        f"Service {res.k8s_namespace}/{res.k8s_name} is an internet-facing LoadBalancer. Make it internal "
        "(networking.gke.io/load-balancer-type: Internal on GKE, service.beta.kubernetes.io/"
        "aws-load-balancer-scheme: internal on EKS) or allow it explicitly with this policy's "
        "allowedPublicServices config.",
        None,
    )


def is_sensitive_name(name: str) -> bool:
    words = [w for w in re.split(r"[^A-Za-z0-9]+", name.upper()) if w]
    if any(w in SENSITIVE_WORDS for w in words):
        return True
    return any(a == "API" and b == "KEY" for a, b in zip(words, words[1:], strict=False))


def env_problems(container: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    name = container.get("name") or "<unnamed>"
    for env in container.get("env") or []:
        if not isinstance(env, Mapping) or not is_sensitive_name(str(env.get("name") or "")):
            continue
        var = env.get("name")
        if env.get("value") not in (None, ""):
            problems.append(f"container {name} sets {var} to a literal value; take it from a Secret "
                            "(valueFrom.secretKeyRef)")
        elif is_unknown(env.get("valueFrom")) or has_unknown(dig(env, "valueFrom", "secretKeyRef")):
            continue  # taken from something not known yet: judged once it is (see validate_secrets_from_secret_store)
        elif env.get("valueFrom") is not None and not (env.get("valueFrom") or {}).get("secretKeyRef"):
            problems.append(f"container {name} takes {var} from somewhere other than a Secret; use "
                            "valueFrom.secretKeyRef")
    for arg in [*(container.get("command") or []), *(container.get("args") or [])]:
        text = str(arg)
        if text == UNKNOWN:
            continue
        if HF_TOKEN_LITERAL.search(text) or TOKEN_FLAG_LITERAL.search(text):
            problems.append(f"container {name} passes a literal token on its command line; read it from an "
                            "environment variable bound to a Secret")
            break
    return problems


def validate_secrets_from_secret_store(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if not args.resource_type.startswith("kubernetes:") or args.resource_type.startswith("kubernetes:helm"):
        return
    res = res_of(args)
    spec = pod_spec(res)
    if spec is None:
        problem = pod_spec_problem(res)
        if problem:
            report_violation(f"{res.kind} {res.k8s_name}: {problem}", None)
        elif (res.kind or res.type.rsplit(":", 1)[-1]) in WORKLOAD_KINDS and has_unknown(res.props.get("spec")):
            raise NotJudged([f"the pod spec of {res.kind} {res.k8s_name} ({res.urn})"])
        return
    pending = []
    for container in containers(spec):
        for problem in env_problems(container):
            report_violation(f"{res.kind} {res.k8s_name}: {problem}", None)
        pending += [f"env {env.get('name')} of container {container.get('name')} of {res.kind} {res.k8s_name} "
                    f"({res.urn})" for env in container.get("env") or [] if isinstance(env, Mapping)
                    and is_sensitive_name(str(env.get("name") or "")) and has_unknown(env.get("valueFrom"))]
    if has_unknown([spec.get("containers"), spec.get("initContainers")]) and not pending:
        pending.append(f"the containers of {res.kind} {res.k8s_name} ({res.urn})")
    if pending:
        raise NotJudged(pending)


def validate_pinned_charts(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type not in HELM_TYPES:
        return
    res = res_of(args)
    chart = str(res.props.get("chart") or "")
    version = str(res.props.get("version") or "").strip()
    if "@sha256:" in chart:
        return
    if is_unknown(version) or is_unknown(chart):
        raise NotJudged([f"the chart and version of Helm release {res.name} ({res.urn})"])
    if not version:
        report_violation(f"Helm chart {chart or res.name} has no version: every deploy could install a different "
                         "chart. Pin an exact version.", None)
    elif not EXACT_VERSION.match(version):
        report_violation(f"Helm chart {chart or res.name} version {version!r} is not an exact version "
                         "(ranges float). Pin an exact version such as 0.4.0.", None)
