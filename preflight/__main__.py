"""``python -m preflight --stack eks-dev``: can the stack's GPU pools launch in its zones?

Exit codes: 0 every GPU pool is served in at least one configured zone;
1 some pool is not; 2 the check could not run (no credentials, invalid
config, unreachable EC2) - always with one clear message, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_OK, EXIT_NOT_SERVED, EXIT_CANNOT_CHECK = 0, 1, 2
ROOT = Path(__file__).resolve().parent.parent

CREDENTIALS_HELP = (
    "preflight: no AWS credentials found. It makes read-only EC2 calls "
    "(DescribeInstanceTypeOfferings, DescribeInstanceTypes) in {region}.\n"
    "Provide credentials, then rerun `make preflight STACK={stack}`, for example:\n"
    "  aws sso login --profile <profile> && export AWS_PROFILE=<profile>\n"
    "  or: aws configure\n"
    "  or: export AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... [AWS_SESSION_TOKEN=...]"
)
DENIED_CODES = {"AuthFailure", "UnauthorizedOperation", "AccessDenied", "AccessDeniedException",
                "InvalidClientTokenId", "ExpiredToken", "RequestExpired", "SignatureDoesNotMatch"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make preflight", description=__doc__.splitlines()[0])
    parser.add_argument("--stack", required=True, help="stack name: checks Pulumi.<stack>.yaml")
    parser.add_argument("--stack-dir", default=str(ROOT), help="folder holding Pulumi.<stack>.yaml")
    args = parser.parse_args(argv)

    cfg = _load(args.stack, Path(args.stack_dir))
    if isinstance(cfg, int):
        return cfg
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

    from preflight.capacity import check_capacity, render_table

    try:
        ec2 = boto3.client("ec2", region_name=region)
        checks = check_capacity(cfg, ec2)
    except (NoCredentialsError, PartialCredentialsError):
        return _fail(CREDENTIALS_HELP.format(region=region, stack=args.stack))
    except NoRegionError:
        return _fail(f"preflight: no AWS region; cluster.location in Pulumi.{args.stack}.yaml should name one "
                     "(e.g. us-west-2)")
    except EndpointConnectionError as exc:
        return _fail(f"preflight: cannot reach the EC2 API in {region} ({exc}); check the region and your network")
    except ClientError as exc:
        error = exc.response.get("Error", {})
        code = error.get("Code", "")
        if code in DENIED_CODES:
            return _fail(f"preflight: AWS refused the credentials in use ({code}: {error.get('Message', '')}). "
                         "They need ec2:DescribeInstanceTypeOfferings and ec2:DescribeInstanceTypes; refresh "
                         "or change them (e.g. `aws sso login`) and rerun.")
        return _fail(f"preflight: EC2 call failed ({code}: {error.get('Message', '')})")
    except BotoCoreError as exc:
        return _fail(f"preflight: AWS SDK error: {exc}")

    print(render_table(region, checks))
    if not checks:
        print("no GPU pools to check")
    return EXIT_OK if all(c.served for c in checks) else EXIT_NOT_SERVED


def _load(stack: str, stack_dir: Path):
    """The stack's parsed config, or an exit code after printing why it cannot be read."""
    from offline_plan.run import read_stack_file
    from stacks.loader import ConfigError, parse_stack_config

    try:
        stack_file = read_stack_file(stack, stack_dir)
        cfg = parse_stack_config(stack_file.namespace_config)  # the components' checks included
    except FileNotFoundError as exc:
        return _fail(f"preflight: {exc}")
    except ConfigError as exc:
        return _fail(f"preflight: Pulumi.{stack}.yaml: {exc}")
    if cfg.cluster.cloud != "eks":
        return _fail(f"preflight: stack {stack} is on {cfg.cluster.cloud}; the capacity preflight checks EC2 "
                     "(cluster.cloud: eks)")
    return cfg


def _fail(message: str) -> int:
    print(message, file=sys.stderr)
    return EXIT_CANNOT_CHECK


if __name__ == "__main__":
    sys.exit(main())
