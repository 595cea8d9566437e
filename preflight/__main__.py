"""``python -m preflight --stack <stack>``: can the stack's accelerator pools get nodes in their zones?

GKE stacks: Compute Engine machine and accelerator offerings per zone and the region's quota
(:mod:`preflight.gke`). EKS stacks: EC2 instance type offerings per zone, GPU shapes, vCPU quotas and
Spot placement scores (:mod:`preflight.capacity`, :mod:`preflight.eks_signals`).

Exit codes: 0 every pool is served (possibly with warnings); 1 some pool is not (not offered in any
configured zone, or quota too small for one node or for ``min`` nodes); 2 the check could not run
(no credentials, API disabled, no permission, invalid config, unreachable API) - always with one
clear message, never a traceback. ``--json`` prints the same findings as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

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
DENIED_CODES = {"AuthFailure", "UnauthorizedOperation", "AccessDenied", "AccessDeniedException",
                "InvalidClientTokenId", "ExpiredToken", "RequestExpired", "SignatureDoesNotMatch",
                "UnrecognizedClientException"}


def main(argv: list[str] | None = None) -> int:
    from stacks.stack_files import stack_name_argument

    parser = argparse.ArgumentParser(prog="make preflight", description=__doc__.splitlines()[0])
    parser.add_argument("--stack", required=True, type=stack_name_argument,
                        help="stack name: checks Pulumi.<stack>.yaml")
    parser.add_argument("--stack-dir", default=str(ROOT), help="folder holding Pulumi.<stack>.yaml")
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")
    args = parser.parse_args(argv)

    loaded = _load(args.stack, Path(args.stack_dir))
    if isinstance(loaded, int):
        return loaded
    cfg, other_config = loaded
    from gpu_fungibility import clouds

    runners = {"gke": lambda: _run_gke(args, cfg, other_config), "eks": lambda: _run_eks(args, cfg)}
    return runners[clouds.profile(cfg.cluster.cloud).name]()


def _run_gke(args: argparse.Namespace, cfg: Any, other_config: dict[str, Any]) -> int:
    project = str(other_config.get("gcp:project") or os.environ.get(PROJECT_ENV, "")).strip()
    if not project:
        return _fail(f"preflight: no GCP project: set gcp:project in Pulumi.{args.stack}.yaml "
                     f"(`pulumi config set gcp:project <project>`) or export {PROJECT_ENV}")
    try:
        from google.auth import exceptions as auth_exceptions
    except ImportError:
        return _fail("preflight: google-auth is not installed; run `make venv` (it is in requirements.txt)")

    from preflight.gke import check_gke, render, to_json
    from preflight.google_api import CannotCheck, ComputeClient, UrllibRequest, credentials_from_environment

    request = UrllibRequest()
    try:
        credentials, source = credentials_from_environment(project, args.stack, request)
        compute = ComputeClient(project, credentials, request)
        checks = check_gke(cfg, compute)
    except CannotCheck as exc:
        return _fail(str(exc))
    except auth_exceptions.GoogleAuthError as exc:
        return _fail(f"preflight: Google credentials could not be used: {exc}")

    code = EXIT_NOT_SERVED if any(c.verdict == "fail" for c in checks) else EXIT_OK
    if args.json:
        print(json.dumps({**to_json(project, checks), "exit_code": code}, indent=2))
    else:
        print(render(project, checks))
        print(f"\n{compute.calls} Compute Engine API calls to {compute.endpoint}; credentials: {source}")
        if not checks:
            print("no accelerator pools to check")
    return code


def _run_eks(args: argparse.Namespace, cfg: Any) -> int:
    region = cfg.cluster.location
    try:
        import boto3
        from botocore.exceptions import (
            BotoCoreError,
            ClientError,
            EndpointConnectionError,
            NoCredentialsError,
            NoRegionError,
            PartialCredentialsError,
        )
    except ImportError:
        return _fail("preflight: boto3 is not installed; run `make venv` (it is in requirements.txt)")

    from preflight import eks_signals
    from preflight.capacity import check_capacity, render_table

    try:
        ec2 = boto3.client("ec2", region_name=region)
        checks = check_capacity(cfg, ec2)
        quotas = eks_signals.check_vcpu_quotas(checks, boto3.client("service-quotas", region_name=region))
        spot_note = eks_signals.spot_placement_scores(ec2, region, checks)
    except (NoCredentialsError, PartialCredentialsError):
        return _fail(CREDENTIALS_HELP.format(region=region, stack=args.stack))
    except NoRegionError:
        return _fail(f"preflight: no AWS region; cluster.location in Pulumi.{args.stack}.yaml should name one "
                     "(e.g. us-west-2)")
    except EndpointConnectionError as exc:
        return _fail(f"preflight: cannot reach AWS in {region} ({exc}); check the region and your network")
    except ClientError as exc:
        error = exc.response.get("Error", {})
        code = error.get("Code", "")
        if code in DENIED_CODES:
            return _fail(f"preflight: AWS refused the credentials in use ({code}: {error.get('Message', '')}). "
                         f"They need {AWS_PERMISSIONS}; refresh or change them (e.g. `aws sso login`) and rerun.")
        return _fail(f"preflight: AWS call failed ({code}: {error.get('Message', '')})")
    except BotoCoreError as exc:
        return _fail(f"preflight: AWS SDK error: {exc}")

    code = EXIT_NOT_SERVED if any(c.verdict == "fail" for c in checks) else EXIT_OK
    if args.json:
        pools = [{**asdict(c), "served_zones": c.served_zones, "verdict": c.verdict} for c in checks]
        print(json.dumps({"cloud": "eks", "region": region, "pools": pools,
                          "vcpu_quotas": [asdict(q) for q in quotas], "spot_scores_note": spot_note,
                          "exit_code": code}, indent=2))
        return code
    sections = [s for s in (eks_signals.quota_section(quotas, checks), eks_signals.spot_section(checks, spot_note))
                if s]
    extra = [line for i, section in enumerate(sections) for line in ([""] if i else []) + section]
    print(render_table(region, checks, extra))
    if not checks:
        print("no GPU pools to check")
    return code


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
