"""Preflight for EKS stacks: EC2 instance type offerings per zone, GPU shapes, vCPU quotas and Spot placement
scores (:mod:`preflight.capacity`, :mod:`preflight.eks_signals`), read with boto3 in ``cluster.location``."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import Any

from preflight.calls import CallError, Calls
from preflight.outcome import exit_code, fail, nothing_answered, nothing_checked, print_unanswered

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


def run(args: argparse.Namespace, cfg: Any, other_config: dict[str, Any], calls: Calls) -> int:
    region = cfg.cluster.location
    try:
        import boto3
        from botocore.exceptions import BotoCoreError, NoRegionError
    except ImportError:
        return fail("preflight: boto3 is not installed; run `make venv` (it is in requirements.txt)")

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
        return fail(f"preflight: no AWS region; cluster.location in Pulumi.{args.stack}.yaml should name one "
                    "(e.g. us-west-2)")
    except CallError as exc:  # fatal: no or refused credentials, region not enabled
        if exc.detail == NO_CREDENTIALS:
            return fail(CREDENTIALS_HELP.format(region=region, stack=args.stack))
        return fail(f"preflight: {exc.detail} (on {exc.call}). The preflight needs {AWS_PERMISSIONS}.")
    except BotoCoreError as exc:
        return fail(f"preflight: AWS SDK error: {exc}")
    if nothing_answered(calls):
        return fail(nothing_checked(f"AWS in {region}", calls, AWS_PERMISSIONS))

    code = exit_code(checks)
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
