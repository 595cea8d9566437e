"""``python -m preflight --stack <stack>``: can the stack's accelerator pools get nodes in their zones?

GKE stacks: Compute Engine machine and accelerator offerings per zone, the region's quota and the
project's ``GPUS_ALL_REGIONS`` (:mod:`preflight.gke`). EKS stacks: EC2 instance type offerings per zone, GPU shapes, vCPU quotas and
Spot placement scores (:mod:`preflight.capacity`, :mod:`preflight.eks_signals`). AKS stacks: VM size
offerings, zones and restrictions from the Resource SKUs API and vCPU quotas from the Compute usages API
(:mod:`preflight.aks`, :mod:`preflight.azure_api`).

Every cloud call goes through :mod:`preflight.calls`: a deadline per call (``--call-timeout``) and per
run (``--deadline``), 429 and 5xx retried a bounded number of times, malformed answers reported as such.
A signal that cannot be read (permission denied, throttled after retries, 5xx, malformed, timed out)
is a warning naming the call and the permission; every other check is still reported.

Exit codes: 0 every pool is served (possibly with warnings); 1 some pool is not (not offered in any
configured zone, or quota too small for one node or for ``min`` nodes); 2 nothing could be checked
(no credentials, API disabled, no call answered, invalid config) - always with one clear message,
never a traceback. ``--json`` prints the same findings as JSON.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from preflight.calls import CallPolicy, Calls, first_line, seconds_argument
from preflight.outcome import fail

ROOT = Path(__file__).resolve().parent.parent
#: The registry area of a cloud's preflight: ``clouds.part(cloud, AREA)`` is ``preflight.<cloud>``, whose
#: ``run(args, cfg, other_config, calls)`` checks the stack and returns the exit code.
AREA = "preflight"


def main(argv: list[str] | None = None, *, policy: CallPolicy | None = None) -> int:
    """Run the preflight; ``policy`` overrides the deadlines and retries (tests use short ones)."""
    from stacks.stack_files import stack_name_argument

    parser = argparse.ArgumentParser(prog="make preflight", description=__doc__.splitlines()[0])
    parser.add_argument("--stack", required=True, type=stack_name_argument,
                        help="stack name: checks Pulumi.<stack>.yaml")
    parser.add_argument("--stack-dir", default=str(ROOT), help="folder holding Pulumi.<stack>.yaml")
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")
    parser.add_argument("--deadline", type=seconds_argument, default=CallPolicy.run_seconds, metavar="SECONDS",
                        help="stop calling the cloud after this long and report what was checked "
                             f"(default {CallPolicy.run_seconds:g})")
    parser.add_argument("--call-timeout", type=seconds_argument, default=CallPolicy.call_seconds, metavar="SECONDS",
                        help=f"give up on one call attempt after this long (default {CallPolicy.call_seconds:g})")
    args = parser.parse_args(argv)
    if policy is None:
        policy = CallPolicy(run_seconds=args.deadline, call_seconds=args.call_timeout)

    try:
        return _run(args, policy)
    except Exception as exc:  # noqa: BLE001 - the documented promise: one message and exit 2, never a traceback
        return fail(f"preflight: stopped by an unexpected {type(exc).__name__}: {first_line(exc)}")


def _run(args: argparse.Namespace, policy: CallPolicy) -> int:
    loaded = _load(args.stack, Path(args.stack_dir))
    if isinstance(loaded, int):
        return loaded
    cfg, other_config = loaded
    from gpu_fungibility import clouds

    cloud = cfg.cluster.cloud
    checks = clouds.optional_part(cloud, AREA)
    if checks is None:
        return fail(f"preflight: no preflight for {clouds.profile(cloud).title} stacks yet (cluster.cloud: {cloud})")
    return checks.run(args, cfg, other_config, Calls(policy))


def _load(stack: str, stack_dir: Path):
    """(parsed config, non-project config such as gcp:project), or an exit code after saying why not."""
    from offline_plan.run import read_stack_file
    from stacks.loader import ConfigError, parse_stack_config

    try:
        stack_file = read_stack_file(stack, stack_dir)
        cfg = parse_stack_config(stack_file.namespace_config)  # the components' checks included
    except FileNotFoundError as exc:
        return fail(f"preflight: {exc}")
    except ConfigError as exc:
        return fail(f"preflight: Pulumi.{stack}.yaml: {exc}")
    return cfg, stack_file.other_config


if __name__ == "__main__":
    sys.exit(main())
