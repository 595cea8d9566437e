"""A model too large for the device memory a replica can get: weighed from the parameter count its id states.

Most Hugging Face model ids state their size (``meta-llama/Llama-3.3-70B-Instruct``, ``google/gemma-3-4b-it``).
Where one does, its weights are weighed at 2 bytes a parameter (bf16/fp16, what vLLM loads an unquantized
checkpoint in) against the device memory of each alternative a replica can land on: the pool's GPUs on one
node (``count`` x NVML's total, what the driver publishes) times ``gpuMemoryUtilization`` (vLLM's default 0.9:
vllm ``EngineArgs.gpu_memory_utilization``). The KV cache, activations and CUDA graphs need room on top, so
weights that merely fit are not promised to serve; weights that do not fit never load.

Nothing is said where the id states no size, names a quantized checkpoint (AWQ, GPTQ, FP8, INT4/INT8, GGUF,
bitsandbytes, ...) or the workload passes ``--quantization``/``--dtype`` itself, names a mixture of experts
as ``8x7B`` (its total is not the product), or an alternative is a TPU (no device memory recorded).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpu_fungibility import catalog

if TYPE_CHECKING:
    from stacks.config import StackConfig, Workload

BYTES_PER_PARAMETER = 2  # bf16 / fp16
VLLM_DEFAULT_GPU_MEMORY_UTILIZATION = 0.9
GIB = 2**30

_SIZE = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)([BbMm])(?![A-Za-z0-9])")
#: Quantized checkpoints, and models published quantized whatever the id says (openai/gpt-oss: MXFP4 weights).
_QUANTIZED = re.compile(r"awq|gptq|fp8|fp4|int4|int8|4bit|8bit|w4a16|w8a8|bnb|gguf|exl2|mlx|nvfp4|mxfp4|q[2-8]_"
                        r"|gpt-oss", re.IGNORECASE)
_MIXTURE = re.compile(r"\d+x\d+(?:\.\d+)?[Bb]")
_OWN_PRECISION = ("--quantization", "-q", "--dtype", "--kv-cache-dtype", "--load-format")


def stated_parameters(model_id: str) -> float | None:
    """The parameter count a model id states (``70e9`` for ``Llama-3.3-70B-Instruct``), or None when it states
    none, states a mixture of experts (``8x7B``) or names a quantized checkpoint. The largest size named wins
    (``Qwen3-30B-A3B``: 30B in memory, 3B active)."""
    name = model_id.rsplit("/", 1)[-1]
    if _QUANTIZED.search(model_id) or _MIXTURE.search(name):
        return None
    sizes = [float(number) * (1e9 if unit in "Bb" else 1e6) for number, unit in _SIZE.findall(name)]
    return max(sizes) if sizes else None


def _sets_precision(workload: Workload) -> bool:
    return any(arg.split("=", 1)[0] in _OWN_PRECISION for arg in workload.extra_args)


def model_weight_warnings(cfg: StackConfig) -> list[str]:
    """``workloads.<name>.model`` warnings: weights larger than some or every alternative's device memory."""
    warnings = []
    for name, workload in cfg.workloads.items():
        if not workload.model or workload.mig or _sets_precision(workload):
            continue
        parameters = stated_parameters(workload.model)
        if parameters is None:
            continue
        weights_gib = parameters * BYTES_PER_PARAMETER / GIB
        utilization = workload.gpu_memory_utilization or VLLM_DEFAULT_GPU_MEMORY_UTILIZATION
        room: dict[str, tuple[float, str]] = {}
        for pool_name in cfg.placement_pools(workload):
            pool = cfg.node_pools.get(pool_name)
            if pool is None or not pool.accelerator.known or not isinstance(pool.accelerator.model, catalog.GpuModel):
                continue
            gpu, count = pool.accelerator.model, pool.accelerator.count
            usable = gpu.published_memory_mib * count / 1024 * utilization
            room[pool_name] = (usable, f"{pool_name}: {count} x {gpu.product_name}, {usable:.1f} GiB")
        too_small = [pool for pool, (usable, _) in room.items() if usable <= weights_gib]
        if not too_small:
            continue
        size = f"{parameters / 1e9:g}B" if parameters >= 1e9 else f"{parameters / 1e6:g}M"
        weighed = (f"workloads.{name}.model: {workload.model} states {size} parameters, {weights_gib:.1f} GiB of "
                   f"weights in bf16 (2 bytes a parameter), with the KV cache on top")
        listed = "; ".join(room[pool][1] for pool in too_small)
        if len(too_small) == len(room):
            warnings.append(f"{weighed}: more than the device memory of every alternative a replica can get at "
                            f"gpuMemoryUtilization {utilization:g} ({listed}), so no replica loads it. Choose "
                            "pools with more device memory (more GPUs per node), a smaller model, or a quantized "
                            "checkpoint")
        else:
            warnings.append(f"{weighed}: more than the device memory of {', '.join(too_small)} at "
                            f"gpuMemoryUtilization {utilization:g} ({listed}): a replica that lands there never "
                            "loads it. Drop those pools from its placement, or give them more GPUs per node")
    return warnings
