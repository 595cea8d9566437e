"""Which Compute Engine quota limits each GKE accelerator pool, keyed by the accelerator catalog's type
names (``components/catalog.py``), next to the facts they describe.

Compute Engine regional quotas, as ``regions.get`` returns them in ``quotas[].metric``
(https://cloud.google.com/compute/docs/reference/rest/v1/regions, field ``quotas[]``):

- GPUs: one metric per model, ``NVIDIA_<MODEL>_GPUS``, and ``PREEMPTIBLE_NVIDIA_<MODEL>_GPUS`` for
  Spot and preemptible VMs. The documented ``Quota.metric`` enum (Compute v1 client references, e.g.
  Google.Cloud.Compute.V1 ``Quota.Types.Metric``) lists ``COMMITTED_NVIDIA_{T4,L4,A100,A100_80GB,H100}_GPUS``
  next to the plain and ``PREEMPTIBLE_`` forms (``NVIDIA_K80_GPUS``, ``PREEMPTIBLE_NVIDIA_P100_GPUS``,
  ...); the exact plain names below, H200 and B200 included, are the ones ``gcloud compute regions
  describe`` prints for projects holding that quota. Newer models are added to regions.get without
  always reaching the enum, so a metric a region does not list is reported as a warning, never guessed around.
- Spot VMs draw on preemptible quota when the project has some; "to prevent Spot VMs from consuming
  your quotas for standard VMs' CPUs, GPUs, and disks, consider requesting preemptible quota"
  (https://cloud.google.com/compute/docs/instances/create-use-spot), i.e. without preemptible quota
  they consume the standard metric. :func:`spot_falls_back_to_standard` says so in one place.
- TPUs on GKE use Compute Engine quota (not the Cloud TPU API's), counted in chips. TPU v5e:
  ``TPU_LITE_PODSLICE_V5`` / ``PREEMPTIBLE_TPU_LITE_PODSLICE_V5`` ("TPU v5 Lite PodSlice chips"),
  as ``regions.get`` lists them. TPU v6e ("TPUs per TPU family", dimension ``tpu_family=CT6E``;
  "Preemptible TPU slices v6e") and TPU v5p ("TPU v5p chips") have no ``regions.get`` metric we could
  verify: their rows say which console quota to check instead (a warning, not a verdict).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GkeQuota:
    """The Compute Engine quota metrics one accelerator type counts against (None: not in regions.get)."""

    standard: str | None
    preemptible: str | None
    unit: str  # "GPUs" or "TPU chips"
    console_name: str = ""  # what to look for in the console when there is no regions.get metric


def _gpu(model: str) -> GkeQuota:
    return GkeQuota(f"NVIDIA_{model}_GPUS", f"PREEMPTIBLE_NVIDIA_{model}_GPUS", "GPUs")


#: accelerator catalog type -> Compute Engine quota metrics.
GKE_QUOTAS: dict[str, GkeQuota] = {
    "nvidia-tesla-t4": _gpu("T4"),
    "nvidia-l4": _gpu("L4"),
    "nvidia-tesla-a100": _gpu("A100"),
    "nvidia-a100-80gb": _gpu("A100_80GB"),
    "nvidia-h100-80gb": _gpu("H100"),
    "nvidia-h200-141gb": _gpu("H200"),
    "nvidia-b200": _gpu("B200"),
    "tpu-v5-lite-podslice": GkeQuota("TPU_LITE_PODSLICE_V5", "PREEMPTIBLE_TPU_LITE_PODSLICE_V5", "TPU chips"),
    "tpu-v5p-slice": GkeQuota(None, None, "TPU chips",
                              console_name="'TPU v5p chips' / 'Preemptible TPU v5p chips'"),
    "tpu-v6e-slice": GkeQuota(None, None, "TPU chips",
                              console_name="'TPUs per TPU family' (tpu_family=CT6E) / "
                                           "'Preemptible TPU slices v6e'"),
}


#: Project-wide cap on GPUs of every model in every region, Spot and preemptible GPUs included; new
#: projects often have 0. Read from ``projects.get`` ``quotas[]``
#: (https://cloud.google.com/compute/docs/reference/rest/v1/projects/get; metric enum value
#: ``GPUS_ALL_REGIONS`` in https://cloud.google.com/compute/docs/reference/rest/v1/Quota; "GPUs (all
#: regions)" in https://cloud.google.com/compute/resource-usage#gpu_quota).
ALL_REGIONS_GPUS = "GPUS_ALL_REGIONS"


def quota_of(accelerator_type: str) -> GkeQuota | None:
    return GKE_QUOTAS.get(accelerator_type)


def spot_falls_back_to_standard(preemptible_limit: float | None) -> bool:
    """Spot VMs use the standard metric when the project has no preemptible quota (limit 0 or unlisted)."""
    return not preemptible_limit
