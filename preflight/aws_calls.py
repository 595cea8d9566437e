"""The EKS preflight's AWS calls through :mod:`preflight.calls`: one attempt per try, errors by kind.

boto3 clients are made with the run's per-call timeout as connect and read timeout and botocore's own
retries off (``total_max_attempts=1``), so :class:`preflight.calls.Calls` alone decides about retries
and deadlines. What botocore raises becomes a :class:`CallError` naming the operation:

- ``ClientError`` by error code and HTTP status: throttling codes (``Throttling``, ``ThrottlingException``,
  ``RequestLimitExceeded``, ``TooManyRequestsException``, ...) and 429 are ``throttled``; 5xx and
  ``InternalError``/``ServiceUnavailable`` are ``server`` (both retried, after ``Retry-After`` when sent);
  ``AccessDenied*``/``UnauthorizedOperation`` are ``denied`` (a warning naming the IAM action); bad,
  expired or unsigned credentials are ``credentials`` and ``OptInRequired`` (the region is not enabled)
  ``disabled``, both fatal (exit 2).
- ``NoCredentialsError``/``PartialCredentialsError``: ``credentials``; ``EndpointConnectionError`` and
  connect timeouts: ``unreachable``; read timeouts: ``timeout``; ``ResponseParserError`` (a truncated or
  garbled answer): ``malformed``; any other ``BotoCoreError``: ``failed``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from preflight.calls import (
    CREDENTIALS,
    DENIED,
    DISABLED,
    FAILED,
    MALFORMED,
    SERVER,
    THROTTLED,
    TIMEOUT,
    UNREACHABLE,
    CallError,
    CallPolicy,
    Calls,
    first_line,
    mapping,
    retry_after_seconds,
)

T = TypeVar("T")
NO_CREDENTIALS = "no AWS credentials found"

THROTTLING_CODES = frozenset({"Throttling", "ThrottlingException", "ThrottledException", "RequestLimitExceeded",
                              "TooManyRequestsException", "RequestThrottled", "RequestThrottledException",
                              "SlowDown", "ProvisionedThroughputExceededException", "EC2ThrottledException"})
SERVER_CODES = frozenset({"InternalError", "InternalFailure", "InternalServerError", "ServiceUnavailable",
                          "ServiceUnavailableException", "Unavailable", "ServiceException"})
DENIED_CODES = frozenset({"AccessDenied", "AccessDeniedException", "UnauthorizedOperation"})
CREDENTIAL_CODES = frozenset({"AuthFailure", "InvalidClientTokenId", "ExpiredToken", "ExpiredTokenException",
                              "RequestExpired", "SignatureDoesNotMatch", "UnrecognizedClientException",
                              "MissingAuthenticationToken", "IncompleteSignature"})


def client_config(policy: CallPolicy) -> Any:
    """botocore ``Config`` for the run: per-call socket timeouts, no retries of its own."""
    from botocore.config import Config

    return Config(connect_timeout=policy.call_seconds, read_timeout=policy.call_seconds,
                  retries={"total_max_attempts": 1, "mode": "standard"})


def aws_call(calls: Calls, client: Any, operation: str, action: str, *, absent: frozenset[str] = frozenset(),
             parse: Callable[[dict[str, Any]], T] | None = None, **params: Any) -> T | dict[str, Any] | None:
    """``parse(client.<operation>(**params))`` through ``calls``; None when AWS answers an ``absent`` code.

    ``action`` is the IAM action (``ec2:DescribeInstanceTypes``): it names the call and the permission.
    ``parse`` reads the answer; what it raises on an unexpected shape makes the call ``malformed``.
    """

    def fetch(_seconds: float) -> dict[str, Any] | None:
        return _one_attempt(getattr(client, operation), params, absent)

    def read(reply: Any) -> Any:
        if reply is None:
            return None
        answer = mapping(reply, "the answer")
        return parse(answer) if parse else answer

    return calls.run(action, fetch, read, needs=action)


def _one_attempt(method: Callable[..., Any], params: dict[str, Any], absent: frozenset[str]) -> Any:
    from botocore.exceptions import (
        BotoCoreError,
        ClientError,
        ConnectTimeoutError,
        EndpointConnectionError,
        NoCredentialsError,
        PartialCredentialsError,
        ReadTimeoutError,
    )
    from botocore.parsers import ResponseParserError

    try:
        return method(**params)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in absent:
            return None
        raise classify(exc) from None
    except (NoCredentialsError, PartialCredentialsError):
        raise CallError(CREDENTIALS, NO_CREDENTIALS) from None
    except (EndpointConnectionError, ConnectTimeoutError) as exc:
        raise CallError(UNREACHABLE, f"cannot reach AWS ({first_line(exc)}); check the region and your network") \
            from None
    except ReadTimeoutError as exc:
        raise CallError(TIMEOUT, first_line(exc)) from None
    except ResponseParserError as exc:
        raise CallError(MALFORMED, f"malformed answer ({first_line(exc)})") from None
    except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:  # botocore's parsers on odd shapes
        raise CallError(MALFORMED, f"malformed answer ({type(exc).__name__}: {first_line(exc)})") from None
    except BotoCoreError as exc:
        raise CallError(FAILED, f"{type(exc).__name__}: {first_line(exc)}") from None


def classify(exc: Any) -> CallError:
    """A botocore ``ClientError`` as a :class:`CallError` of the right kind."""
    error = exc.response.get("Error", {}) or {}
    meta = exc.response.get("ResponseMetadata", {}) or {}
    code, message = str(error.get("Code", "")), str(error.get("Message", ""))
    status = int(meta.get("HTTPStatusCode") or 0)
    headers = {str(k).lower(): v for k, v in (meta.get("HTTPHeaders") or {}).items()}
    said = f"{code}: {message}" if message else code
    retry_after = retry_after_seconds(headers.get("retry-after"))
    if code in THROTTLING_CODES or status == 429:
        return CallError(THROTTLED, f"throttled ({said})", retry_after=retry_after)
    if code in SERVER_CODES or status >= 500:
        return CallError(SERVER, f"server error ({status} {said})", retry_after=retry_after)
    if code in CREDENTIAL_CODES:
        return CallError(CREDENTIALS, f"AWS refused the credentials in use ({said}); refresh or change them "
                         "(e.g. `aws sso login`) and rerun")
    if code == "OptInRequired":
        return CallError(DISABLED, f"the region is not enabled for this account ({said})")
    if code in DENIED_CODES:
        return CallError(DENIED, f"access denied ({said})")
    return CallError(FAILED, f"AWS error ({said})")


class AwsApi:
    """The boto3 clients of one run (``ec2``, ``service-quotas``), every call made through :func:`aws_call`."""

    def __init__(self, calls: Calls, clients: dict[str, Any]):
        self.calls, self.clients = calls, clients

    def call(self, service: str, operation: str, action: str, *, absent: frozenset[str] = frozenset(),
             parse: Callable[[dict[str, Any]], Any] | None = None, **params: Any) -> Any:
        return aws_call(self.calls, self.clients[service], operation, action, absent=absent, parse=parse, **params)
