"""The pack's policies: one pure validator per rule, wired to its name and enforcement level.

Importing this module starts nothing; ``policies/__main__.py`` hands
:data:`POLICIES` to a ``PolicyPack``: the shared rules, then each registered
cloud's own (its rules module's ``POLICIES``, see :mod:`~policies.cloud_parts`). Levels can be overridden per stack with
``pulumi preview --policy-pack-config <file.json>`` (see docs/policies.md).
"""

from __future__ import annotations

from gpu_fungibility import clouds
from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    ResourceValidationPolicy,
    StackValidationPolicy,
)

from .. import cloud_parts
from .capacity import validate_accelerator_pools_spot
from .claims import validate_claim_follows_compute_class, validate_claim_shape
from .endpoint import validate_control_plane_reachable
from .placement import validate_device_plugin_isolation, validate_dra_pool_served
from .preference import validate_preference_follows_claim
from .reach import validate_alternatives_satisfiable, validate_reachable_pools_served
from .requests_fit import validate_serving_requests_fit_nodes
from .security import (
    validate_no_public_inference_endpoint,
    validate_pinned_charts,
    validate_secrets_from_secret_store,
)
from .support import validate_version_advisories, validate_version_supported
from .versions import validate_kubernetes_version

PACK_NAME = "gpu-fungibility-policies"
MANDATORY = EnforcementLevel.MANDATORY
ADVISORY = EnforcementLevel.ADVISORY

_STRING_LIST = {"type": "array", "items": {"type": "string"}}
#: The date the support rules judge against (policies/rules/support.py, judge_date).
_DATE = {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}

POLICIES: list[Policy] = [
    StackValidationPolicy(
        name="dra-device-plugin-isolation",
        description="The NVIDIA device plugin and the NVIDIA DRA kubelet plugin never run on the same node.",
        validate=validate_device_plugin_isolation,
        enforcement_level=MANDATORY,
    ),
    StackValidationPolicy(
        name="dra-pool-served",
        description="Every DRA-labelled pool is selected and tolerated by its DRA kubelet plugin.",
        validate=validate_dra_pool_served,
        enforcement_level=MANDATORY,
    ),
    StackValidationPolicy(
        name="dra-reachable-pools-served",
        description="Every pool a workload's claim can land on runs its family's DRA kubelet plugin and no device "
                    "plugin, whatever labels it carries.",
        validate=validate_reachable_pools_served,
        enforcement_level=MANDATORY,
    ),
    ResourceValidationPolicy(
        name="dra-kubernetes-version",
        description="Clusters run Kubernetes 1.34 or later (DRA resource.k8s.io/v1).",
        validate=validate_kubernetes_version,
        enforcement_level=MANDATORY,
    ),
    ResourceValidationPolicy(
        name="kubernetes-version-supported",
        description="The minor the cluster will run is in its cloud's standard support and the cloud serves DRA "
                    "there (components/support_calendar.py).",
        validate=validate_version_supported,
        enforcement_level=MANDATORY,
        config_schema=PolicyConfigSchema(properties={"judgeDate": _DATE}),
    ),
    ResourceValidationPolicy(
        name="kubernetes-version-advisories",
        description="Standard support ending within 90 days, a minor no cited calendar dates, DRA unconfirmed on "
                    "the cloud, EKS extended support left on.",
        validate=validate_version_advisories,
        enforcement_level=ADVISORY,
        config_schema=PolicyConfigSchema(properties={"judgeDate": _DATE}),
    ),
    StackValidationPolicy(
        name="claim-shape",
        description="Device requests are well-formed: one of exactly/firstAvailable, at most 8 alternatives, "
                    "existing device classes, compiling CEL selectors.",
        validate=validate_claim_shape,
        enforcement_level=MANDATORY,
    ),
    StackValidationPolicy(
        name="claim-alternative-satisfiable",
        description="Each claim alternative's selectors match enough devices of the pool it stands for.",
        validate=validate_alternatives_satisfiable,
        enforcement_level=MANDATORY,
    ),
    StackValidationPolicy(
        name="serving-requests-fit-nodes",
        description="A serving pod's CPU and memory requests fit one node of every pool it can land on, with the "
                    "node's capacity below its nominal memory.",
        validate=validate_serving_requests_fit_nodes,
        enforcement_level=MANDATORY,
    ),
    StackValidationPolicy(
        name="claim-follows-compute-class",
        description="A workload's claim alternatives are its compute class's pools, in the same order.",
        validate=validate_claim_follows_compute_class,
        enforcement_level=MANDATORY,
    ),
    StackValidationPolicy(
        name="preference-follows-claim",
        description="Among running nodes, a workload's pods prefer its claim's pools in the claim's order (a "
                    "preferred node affinity whose weights strictly decrease along the firstAvailable list).",
        validate=validate_preference_follows_claim,
        enforcement_level=MANDATORY,
    ),
    ResourceValidationPolicy(
        name="accelerator-pools-spot",
        description="Accelerator pools use spot capacity unless marked as the on-demand fallback.",
        validate=validate_accelerator_pools_spot,
        enforcement_level=ADVISORY,
        config_schema=PolicyConfigSchema(properties={"onDemandPools": _STRING_LIST}),
    ),
    ResourceValidationPolicy(
        name="no-public-inference-endpoint",
        description="LoadBalancer Services are internal unless allowed by policy config.",
        validate=validate_no_public_inference_endpoint,
        enforcement_level=MANDATORY,
        config_schema=PolicyConfigSchema(properties={"allowedPublicServices": _STRING_LIST}),
    ),
    ResourceValidationPolicy(
        name="secrets-from-secret-store",
        description="Model tokens come from Kubernetes Secrets (secretKeyRef), never literal values.",
        validate=validate_secrets_from_secret_store,
        enforcement_level=MANDATORY,
    ),
    ResourceValidationPolicy(
        name="pinned-charts",
        description="Every Helm release pins an exact chart version.",
        validate=validate_pinned_charts,
        enforcement_level=MANDATORY,
    ),
    StackValidationPolicy(
        name="control-plane-reachable",
        description="The Kubernetes provider's cluster endpoint is reachable from the plan or the config: a DNS "
                    "endpoint, a public allow-listed IP endpoint, or a private one a runner range may use "
                    "(private clusters and authorized IP ranges).",
        validate=validate_control_plane_reachable,
        enforcement_level=MANDATORY,
        config_schema=PolicyConfigSchema(properties={"runnerCidrs": _STRING_LIST}),
    ),
]


def cloud_policies() -> list[Policy]:
    """Each registered cloud's own policies, in registration order (a cloud without a rules module has none)."""
    found: list[Policy] = []
    for name in clouds.names():
        try:
            rules = cloud_parts.part(name, "rules")
        except ModuleNotFoundError as missing:
            if missing.name != f"{__name__}.{name}":
                raise
            continue
        found += rules.POLICIES
    return found


POLICIES += cloud_policies()
