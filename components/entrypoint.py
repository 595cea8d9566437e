"""The vLLM container's start-up command.

The command is ``/bin/sh -c <vllm_entrypoint.sh>`` and the arguments are the
program name, the accelerator family and the vLLM server arguments, one list
entry each: nothing is spliced into shell text, so a model name or an extra
argument can never be reinterpreted by the shell. The script counts the
devices the container was given and adds ``--tensor-parallel-size``.
"""

from pathlib import Path

SCRIPT_PATH = Path(__file__).with_name("vllm_entrypoint.sh")
PROGRAM_NAME = "vllm-entrypoint"
SHELL = "/bin/sh"
SERVE_HOST = "0.0.0.0"

#: Flags the workload sets itself; an ``extraArgs`` entry must not repeat them.
MANAGED_FLAGS = (
    "--tensor-parallel-size",
    "-tp",
    "--host",
    "--port",
    "--model",
    "--max-model-len",
    "--gpu-memory-utilization",
)


def script() -> str:
    """The entrypoint script's text (read when a workload is built, not at import)."""
    return SCRIPT_PATH.read_text()


def server_args(
    *,
    model: str,
    port: int,
    max_model_len: int | None = None,
    gpu_memory_utilization: float | None = None,
    extra_args: list[str] | None = None,
) -> list[str]:
    """The vLLM OpenAI server arguments, apart from the tensor-parallel size."""
    args = [f"--host={SERVE_HOST}", f"--port={port}", f"--model={model}"]
    if max_model_len is not None:
        args.append(f"--max-model-len={max_model_len}")
    if gpu_memory_utilization is not None:
        args.append(f"--gpu-memory-utilization={gpu_memory_utilization}")
    args.extend(extra_args or [])
    return args


def container_command(family: str, args: list[str]) -> tuple[list[str], list[str]]:
    """``(command, args)`` for a container serving on ``family`` (``gpu`` or ``tpu``)."""
    if family not in ("gpu", "tpu"):
        raise ValueError(f"unknown accelerator family {family!r}")
    return [SHELL, "-c", script()], [PROGRAM_NAME, family, *args]


def conflicting_flags(extra_args: list[str]) -> list[str]:
    """The entries of ``extra_args`` that repeat a flag the workload manages."""
    return [
        arg for arg in extra_args
        if any(arg == flag or arg.startswith(f"{flag}=") for flag in MANAGED_FLAGS)
    ]
