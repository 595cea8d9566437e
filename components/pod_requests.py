"""A pod's CPU and memory requests as kube-scheduler computes them.

Kubernetes v1.35.4, read at its source:

- the API server defaults a container's missing request from its limit (pkg/apis/core/v1/defaults.go,
  ``SetDefaults_Pod``: "if a container has limits but no requests, requests default to limits", per resource);
- the scheduler sums what its containers request, then walks the init containers in order
  (staging/src/k8s.io/component-helpers/resource/helpers.go, ``PodRequests``): a sidecar (an init container
  with ``restartPolicy: Always``) runs beside the containers, so it is added to the sum and to every init
  container that starts after it; an ordinary init container runs alone with the sidecars started before it;
  the pod requests the larger of the sum and the largest init step (plus ``spec.overhead``);
- quantities are exact: CPU in millicores rounded up (``Quantity.MilliValue``), memory in bytes (``Value``,
  rounded up), so two requests of ``536870913`` bytes do not fit a 1Gi node;
- for scoring, NodeResourcesFit counts a container without a CPU or memory request as 100m / 200Mi
  (pkg/scheduler/util/pod_resources.go ``DefaultMilliCPURequest``, ``DefaultMemoryRequest``; the
  ``NonMissingContainerRequests`` option of ``PodRequests``).
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .dra_cel.quantity import Quantity, QuantityError

DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024


@dataclass(frozen=True)
class Requests:
    """millicores and bytes."""

    cpu_m: int = 0
    memory: int = 0

    def __add__(self, other: "Requests") -> "Requests":
        return Requests(self.cpu_m + other.cpu_m, self.memory + other.memory)

    def max(self, other: "Requests") -> "Requests":
        return Requests(max(self.cpu_m, other.cpu_m), max(self.memory, other.memory))


def millicores(text: Any) -> int:
    """A CPU quantity in millicores, rounded up; raises ValueError for a malformed or negative one."""
    value = _quantity(text, "cpu")
    return math.ceil(value * 1000)


def memory_bytes(text: Any) -> int:
    """A memory quantity in bytes, rounded up; raises ValueError for a malformed or negative one."""
    return math.ceil(_quantity(text, "memory"))


def _quantity(text: Any, what: str) -> Fraction:
    try:
        value = Quantity.parse(str(text)).value
    except QuantityError as exc:
        raise ValueError(f"{text!r} is not a Kubernetes {what} quantity ({exc})") from None
    if value < 0:
        raise ValueError(f"{text!r}: a {what} request must not be negative")
    return value


def container_requests(container: Mapping[str, Any], non_zero: bool = False) -> Requests:
    """One container's requests after the API server's defaulting (a missing request takes its limit);
    ``non_zero``: a request still missing counts as the scheduler's default (scoring only)."""
    resources = container.get("resources") or {}
    requests = resources.get("requests") or {}
    limits = resources.get("limits") or {}
    cpu = requests.get("cpu", limits.get("cpu"))
    memory = requests.get("memory", limits.get("memory"))
    return Requests(
        millicores(cpu) if cpu is not None else (DEFAULT_MILLI_CPU_REQUEST if non_zero else 0),
        memory_bytes(memory) if memory is not None else (DEFAULT_MEMORY_REQUEST if non_zero else 0))


def is_sidecar(container: Mapping[str, Any]) -> bool:
    return container.get("restartPolicy") == "Always"


def combine(containers: Sequence[Requests], init_containers: Sequence[tuple[Requests, bool]],
            overhead: Requests = Requests()) -> Requests:
    """``PodRequests``: the containers' sum with the sidecars, or the largest init step if larger."""
    total = Requests()
    for requests in containers:
        total = total + requests
    sidecars = Requests()
    largest_init = Requests()
    for requests, sidecar in init_containers:
        if sidecar:
            total = total + requests
            sidecars = sidecars + requests
            step = sidecars
        else:
            step = requests + sidecars
        largest_init = largest_init.max(step)
    return total.max(largest_init) + overhead


def pod_requests(pod: Mapping[str, Any], non_zero: bool = False) -> Requests:
    """The pod's requests as the scheduler computes them; raises ValueError on a malformed quantity."""
    overhead = pod.get("overhead") or {}
    return combine(
        [container_requests(c, non_zero) for c in pod.get("containers") or ()],
        [(container_requests(c, non_zero), is_sidecar(c)) for c in pod.get("initContainers") or ()],
        Requests(millicores(overhead["cpu"]) if "cpu" in overhead else 0,
                 memory_bytes(overhead["memory"]) if "memory" in overhead else 0))
