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
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from preflight.calls import CallError, CallPolicy, Calls, first_line, seconds_argument

EXIT_OK, EXIT_NOT_SERVED, EXIT_CANNOT_CHECK = 0, 1, 2
ROOT = Path(__file__).resolve().parent.parent
PROJECT_ENV = "GOOGLE_CLOUD_PROJECT"

CREDENTIALS_HELP = (
    "preflight: no AWS credentials found. It makes read-only calls in {region}: EC2 "
    "DescribeInstanceTypeOfferings, DescribeInstanceTypes, DescribeAvailabilityZones, GetSpotPlacementScores "
    "and Service Quotas GetServiceQuota.\n"
    "Provide credentials, then rerun `make preflight STACK={stack}`, for example:\n"
    "  aws sso login --profile <profile> && export AWS_PROFILE=<profile>\n"
    "  or: aws configure\n"
    "  or: export AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... [AWS_SESSION_TOKEN=...]"
)
AWS_PERMISSIONS = ("ec2:DescribeInstanceTypeOfferings, ec2:DescribeInstanceTypes, ec2:DescribeAvailabilityZones, "
                   "ec2:GetSpotPlacementScores, servicequotas:GetServiceQuota, "
                   "servicequotas:GetAWSDefaultServiceQuota")
MAX_LISTED = 8  # failed calls listed when nothing could be checked


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
        return _fail(f"preflight: stopped by an unexpected {type(exc).__name__}: {first_line(exc)}")


def _run(args: argparse.Namespace, policy: CallPolicy) -> int:
    loaded = _load(args.stack, Path(args.stack_dir))
    if isinstance(loaded, int):
        return loaded
    cfg, other_config = loaded
    from gpu_fungibility import clouds

    runners = {"gke": lambda: _run_gke(args, cfg, other_config, Calls(policy)),
               "eks": lambda: _run_eks(args, cfg, Calls(policy)),
               "aks": lambda: _run_aks(args, cfg, other_config, Calls(policy))}
    return runners[clouds.profile(cfg.cluster.cloud).name]()


def _run_gke(args: argparse.Namespace, cfg: Any, other_config: dict[str, Any], calls: Calls) -> int:
    project = str(other_config.get("gcp:project") or os.environ.get(PROJECT_ENV, "")).strip()
    if not project:
        return _fail(f"preflight: no GCP project: set gcp:project in Pulumi.{args.stack}.yaml "
                     f"(`pulumi config set gcp:project <project>`) or export {PROJECT_ENV}")
    try:
        from google.auth import exceptions as auth_exceptions
    except ImportError:
        return _fail("preflight: google-auth is not installed; run `make venv` (it is in requirements.txt)")

    from preflight.gke import check_gke, render, to_json
    from preflight.google_api import (
        PERMISSIONS,
        CannotCheck,
        ComputeClient,
        UrllibRequest,
        credentials_from_environment,
    )

    request = UrllibRequest()
    try:
        credentials, source = credentials_from_environment(project, args.stack, request)
        compute = ComputeClient(project, credentials, request, calls)
        checks = check_gke(cfg, compute)
    except CannotCheck as exc:
        return _fail(str(exc))
    except CallError as exc:  # fatal: credentials refused, API disabled
        return _fail(f"preflight: {exc.detail} (on {exc.call})")
    except auth_exceptions.GoogleAuthError as exc:
        return _fail(f"preflight: Google credentials could not be used: {exc}")
    if nothing_answered(calls):
        return _fail(nothing_checked("the Compute Engine API", calls,
                                     f"read-only access in project {project}: {', '.join(PERMISSIONS)} "
                                     "(e.g. roles/compute.viewer)"))

    code = EXIT_NOT_SERVED if any(c.verdict == "fail" for c in checks) else EXIT_OK
    if args.json:
        print(json.dumps({**to_json(project, checks), "unanswered_calls": [str(f) for f in calls.failures],
                          "exit_code": code}, indent=2))
    else:
        print(render(project, checks))
        print(f"\n{compute.calls} Compute Engine API calls to {compute.endpoint}; credentials: {source}")
        print_unanswered(calls)
        if not checks:
            print("no accelerator pools to check")
    return code


def _run_eks(args: argparse.Namespace, cfg: Any, calls: Calls) -> int:
    region = cfg.cluster.location
    try:
        import boto3
        from botocore.exceptions import BotoCoreError, NoRegionError
    except ImportError:
        return _fail("preflight: boto3 is not installed; run `make venv` (it is in requirements.txt)")

    from preflight import eks_signals
    from preflight.aws_calls import NO_CREDENTIALS, AwsApi, client_config
    from preflight.capacity import check_capacity, render_table

    try:
        config = client_config(calls.policy)
        api = AwsApi(calls, {service: boto3.client(service, region_name=region, config=config)
                             for service in ("ec2", "service-quotas")})
        checks = check_capacity(cfg, api)
        quotas = eks_signals.check_vcpu_quotas(checks, api)
        spot_note = eks_signals.spot_placement_scores(api, region, checks)
    except NoRegionError:
        return _fail(f"preflight: no AWS region; cluster.location in Pulumi.{args.stack}.yaml should name one "
                     "(e.g. us-west-2)")
    except CallError as exc:  # fatal: no or refused credentials, region not enabled
        if exc.detail == NO_CREDENTIALS:
            return _fail(CREDENTIALS_HELP.format(region=region, stack=args.stack))
        return _fail(f"preflight: {exc.detail} (on {exc.call}). The preflight needs {AWS_PERMISSIONS}.")
    except BotoCoreError as exc:
        return _fail(f"preflight: AWS SDK error: {exc}")
    if nothing_answered(calls):
        return _fail(nothing_checked(f"AWS in {region}", calls, AWS_PERMISSIONS))

    code = EXIT_NOT_SERVED if any(c.verdict == "fail" for c in checks) else EXIT_OK
    if args.json:
        pools = [{**asdict(c), "served_zones": c.served_zones, "verdict": c.verdict} for c in checks]
        print(json.dumps({"cloud": "eks", "region": region, "pools": pools,
                          "vcpu_quotas": [asdict(q) for q in quotas], "spot_scores_note": spot_note,
                          "unanswered_calls": [str(f) for f in calls.failures], "exit_code": code}, indent=2))
        return code
    sections = [s for s in (eks_signals.quota_section(quotas, checks), eks_signals.spot_section(checks, spot_note))
                if s]
    extra = [line for i, section in enumerate(sections) for line in ([""] if i else []) + section]
    print(render_table(region, checks, extra))
    print_unanswered(calls)
    if not checks:
        print("no GPU pools to check")
    return code


def _run_aks(args: argparse.Namespace, cfg: Any, other_config: dict[str, Any], calls: Calls) -> int:
    try:
        import azure.identity  # noqa: F401
    except ImportError:
        return _fail("preflight: azure-identity is not installed; run `make venv` (it is in requirements.txt)")
    from preflight import aks, azure_api

    subscription = azure_api.subscription_of(other_config)
    if not subscription:
        return _fail(f"preflight: no Azure subscription: set azure-native:subscriptionId in Pulumi.{args.stack}.yaml "
                     "(`pulumi config set azure-native:subscriptionId <id>`) or export AZURE_SUBSCRIPTION_ID")
    region = cfg.cluster.location
    try:
        azure_api.check_subscription(subscription)
        azure_api.endpoint_of(os.environ.get(azure_api.ENDPOINT_ENV))  # before any token is asked for
        token = azure_api.access_token(azure_api.default_credential(), max(calls.remaining(), 0.001))
        client = azure_api.ArmClient(subscription, token, calls)
        checks, quotas = aks.check_aks(cfg, client)
    except azure_api.CannotCheck as exc:
        return _fail(str(exc))
    except CallError as exc:  # fatal: credentials refused
        return _fail(f"preflight: {exc.detail} (on {exc.call})")
    if nothing_answered(calls):
        return _fail(nothing_checked("Azure Resource Manager", calls,
                                     f"{azure_api.PERMISSIONS} on subscription {subscription}"))
    code = EXIT_NOT_SERVED if any(c.verdict == "fail" for c in checks) else EXIT_OK
    if args.json:
        print(json.dumps({**aks.to_json(region, subscription, checks, quotas),
                          "unanswered_calls": [str(f) for f in calls.failures], "exit_code": code}, indent=2))
        return code
    print(aks.render(region, subscription, checks, quotas))
    print(f"\n{client.calls} Azure Resource Manager calls to {client.endpoint}")
    print_unanswered(calls)
    if not checks:
        print("no GPU pools to check")
    return code


def nothing_answered(calls: Calls) -> bool:
    """Every call failed: not one signal was read (exit 2, not a report of warnings)."""
    return calls.answered == 0 and bool(calls.failures)


def nothing_checked(service: str, calls: Calls, needs: str) -> str:
    shown = list(dict.fromkeys(str(f) for f in calls.failures))
    more = f"\n  ... and {len(shown) - MAX_LISTED} more" if len(shown) > MAX_LISTED else ""
    return (f"preflight: nothing could be checked: no call to {service} was answered.\n"
            + "\n".join(f"  - {line}" for line in shown[:MAX_LISTED]) + more
            + f"\nThe preflight needs {needs}.")


def print_unanswered(calls: Calls) -> None:
    if calls.failures:
        print(f"{len(calls.failures)} call(s) gave no usable answer; what they feed is marked 'not checked' above:")
        for failure in dict.fromkeys(str(f) for f in calls.failures):
            print(f"  - {failure}")


def _load(stack: str, stack_dir: Path):
    """(parsed config, non-project config such as gcp:project), or an exit code after saying why not."""
    from offline_plan.run import read_stack_file
    from stacks.loader import ConfigError, parse_stack_config

    try:
        stack_file = read_stack_file(stack, stack_dir)
        cfg = parse_stack_config(stack_file.namespace_config)  # the components' checks included
    except FileNotFoundError as exc:
        return _fail(f"preflight: {exc}")
    except ConfigError as exc:
        return _fail(f"preflight: Pulumi.{stack}.yaml: {exc}")
    return cfg, stack_file.other_config


def _fail(message: str) -> int:
    print(message, file=sys.stderr)
    return EXIT_CANNOT_CHECK


if __name__ == "__main__":
    sys.exit(main())
