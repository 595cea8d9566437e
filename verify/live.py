"""Read the live cluster with the official ``kubernetes`` client: list calls only, paged, bounded in time.

Every kind is listed cluster-wide with ``limit``/``continue`` pages of :data:`PAGE` objects, through the
preflight's call layer (:mod:`preflight.calls`): each page is bounded by the per-call timeout and by what
is left of the run's deadline (waited for in a thread, so a server that trickles its answer cannot hold
the run), 429 and 5xx answers are retried a bounded number of times (after ``Retry-After`` when sent), and
an answer that is not a Kubernetes list is a malformed-answer error naming the call. A kind the credentials may
not list (403) or the server does not serve (404) is a partial answer: its checks say "not checked"
and the run goes on. An unreachable server, a 401, or a cluster of which nothing could be read is a
:class:`~verify.snapshot.ReadError` (exit 2) with the reason.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import input_files
from preflight.calls import (
    CREDENTIALS,
    DENIED,
    MALFORMED,
    TIMEOUT,
    UNREACHABLE,
    CallError,
    CallPolicy,
    Calls,
    http_error,
    mapping,
)
from verify.snapshot import ReadError, View, build_view

PAGE = 250
#: The most one page of a list may hold, decompressed (250 objects; a page of 250 big pods is a few MiB), and
#: what the whole read may hold (the largest snapshot file verify reads): a 10 GB Content-Length or a gzip
#: bomb ends the read of that kind, never fills the memory.
MAX_PAGE_BYTES = 64 * 2**20
MAX_READ_BYTES = 512 * 2**20
_CHUNK = 1 << 16
#: (kind, group path, resource). resource.k8s.io/v1 is DRA's GA version (Kubernetes 1.34, the stacks' version).
KINDS: tuple[tuple[str, str, str], ...] = (
    ("Node", "/api/v1", "nodes"),
    ("Pod", "/api/v1", "pods"),
    ("Event", "/api/v1", "events"),
    ("DaemonSet", "/apis/apps/v1", "daemonsets"),
    ("Deployment", "/apis/apps/v1", "deployments"),
    ("ResourceSlice", "/apis/resource.k8s.io/v1", "resourceslices"),
    ("DeviceClass", "/apis/resource.k8s.io/v1", "deviceclasses"),
    ("ResourceClaim", "/apis/resource.k8s.io/v1", "resourceclaims"),
    ("ResourceClaimTemplate", "/apis/resource.k8s.io/v1", "resourceclaimtemplates"),
)
#: DRA's API group, asked for first: where it is not served (AKS, where DRA is unconfirmed:
#: gpu_fungibility.support_calendar) no promise about devices can hold, and the run says so before anything else.
DRA_GROUP = "/apis/resource.k8s.io/v1"
#: Without these nothing this tool promises can be checked: their absence is "cannot be read" (exit 2).
REQUIRED = ("Node", "Pod")
HOW_TO = ("give a kubeconfig: --kubeconfig FILE (make verify KUBECONFIG=FILE), or export KUBECONFIG, or run "
          "where the Pulumi CLI can read the stack's `kubeconfig` output (pulumi stack output kubeconfig "
          "--show-secrets > kubeconfig.yaml)")


@dataclass
class Budget:
    """The run's deadline and each call's; 429 and 5xx answers are retried within them (preflight.calls)."""

    run_seconds: float = 120.0
    call_seconds: float = 20.0
    attempts: int = 4
    backoff_seconds: float = 0.5

    def calls(self) -> Calls:
        return Calls(CallPolicy(run_seconds=self.run_seconds, call_seconds=self.call_seconds,
                                attempts=self.attempts, backoff_seconds=self.backoff_seconds))


def kubeconfig_source(given: str | None, env: str | None, stack: str, stack_dir: Path) -> dict[str, Any]:
    """The kubeconfig as a dict: ``--kubeconfig`` (one file), else ``$KUBECONFIG`` (a list, as kubectl reads
    it; :mod:`verify.kubeconfig`), else the stack's ``kubeconfig`` output (the Pulumi CLI)."""
    from verify import kubeconfig

    try:
        found = kubeconfig.paths_from(given, env)
    except ReadError as exc:
        raise ReadError(f"{exc}; {HOW_TO}") from None
    if found is not None:
        return kubeconfig.load(found[1])
    pulumi = shutil.which("pulumi")
    if pulumi is None:
        raise ReadError(f"no kubeconfig: {HOW_TO} (the Pulumi CLI is not installed here)")
    try:
        done = subprocess.run([pulumi, "stack", "output", "kubeconfig", "--show-secrets", "--stack", stack],
                              cwd=stack_dir, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ReadError(f"`pulumi stack output kubeconfig` failed ({exc}); {HOW_TO}") from None
    if done.returncode != 0 or not done.stdout.strip():
        reason = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ReadError(f"`pulumi stack output kubeconfig --stack {stack}`: {reason}; {HOW_TO}")
    if len(done.stdout) > kubeconfig.KUBECONFIG_FILE.max_bytes:
        raise ReadError(f"the stack's kubeconfig output is larger than {kubeconfig.KUBECONFIG_FILE.describe_bytes()}")
    try:
        loaded = input_files.parse_yaml(done.stdout, "the stack's kubeconfig output", kubeconfig.KUBECONFIG_FILE)
    except input_files.InputFileError as exc:
        raise ReadError(str(exc)) from None
    if not isinstance(loaded, dict):
        raise ReadError("the stack's kubeconfig output is not a kubeconfig")
    return loaded


def _client(source: dict[str, Any], context: str | None, seconds: float):
    """The API client of the kubeconfig's context; its exec plugin, if any, run within ``seconds``."""
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    from verify.kubeconfig import resolve_exec

    source = resolve_exec(source, context, seconds)
    settings = client.Configuration()
    settings.retries = False  # one attempt per call: the deadline decides, not urllib3's retries (set before
    try:                      # the client is made: its connection pool takes it then)
        return config.new_client_from_config_dict(source, context=context, client_configuration=settings)
    except (ConfigException, OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
        raise ReadError(f"kubeconfig: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None


def _server(api) -> str:
    return str(api.configuration.host)


def _page(api, path: str, query: list[tuple[str, Any]]) -> Any:
    """One page of a list call, as a function of the seconds it may take (for :meth:`Calls.run`)."""
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import DecodeError, HTTPError, ReadTimeoutError

    def fetch(seconds: float) -> Any:
        try:
            # (connect, read): the client ignores a bare float (kubernetes/client/rest.py accepts an int or a pair)
            response = api.call_api(path, "GET", query_params=query, header_params={"Accept": "application/json"},
                                    auth_settings=["BearerToken"], _preload_content=False,
                                    _request_timeout=(seconds, seconds))
        except ApiException as exc:
            error = http_error(exc.status or 0, f"HTTP {exc.status} {exc.reason}", dict(exc.headers or {}))
            error.status = exc.status
            raise error from None
        except HTTPError as exc:
            if isinstance(exc, ReadTimeoutError) or isinstance(getattr(exc, "reason", None), ReadTimeoutError):
                raise CallError(TIMEOUT, f"no answer within {seconds:g} s") from None
            raise CallError(UNREACHABLE, f"{type(exc).__name__}: {str(exc).splitlines()[0]}") from None
        body = response[0] if isinstance(response, tuple) else response
        try:
            return read_capped(body, MAX_PAGE_BYTES)
        except ReadTimeoutError:
            raise CallError(TIMEOUT, f"no complete answer within {seconds:g} s") from None
        except DecodeError as exc:
            raise CallError(MALFORMED, f"an answer that does not decompress ({str(exc)[:120]})") from None
        except HTTPError as exc:
            raise CallError(UNREACHABLE, f"the answer broke off ({type(exc).__name__})") from None

    return fetch


def read_capped(response: Any, limit: int) -> bytes:
    """The body of a urllib3 response, decompressed, refused past ``limit`` bytes: a ``Content-Length``
    above it is refused before reading, and a compressed body (a gzip bomb) is inflated a chunk at a time."""
    try:
        declared = int(response.headers.get("Content-Length") or 0)
    except (TypeError, ValueError):
        declared = 0
    if declared > limit:
        response.close()
        raise CallError(MALFORMED, f"an answer of {declared:,} bytes (Content-Length); at most {limit:,} is read")
    chunks, total = [], 0
    while True:
        chunk = response.read(_CHUNK, decode_content=True)
        if not chunk:
            break
        total += len(chunk)
        if total > limit:
            response.close()
            raise CallError(MALFORMED, f"an answer larger than {limit:,} bytes (decompressed); at most that is read")
        chunks.append(chunk)
    response.release_conn()
    return b"".join(chunks)


def _list(api, group: str, resource: str, calls: Calls, room: list[int]) -> list[dict[str, Any]]:
    """Every page of one kind; ``room`` holds the bytes the whole read may still take."""
    items: list[dict[str, Any]] = []
    token = ""
    while True:
        query = [("limit", PAGE)] + ([("continue", token)] if token else [])
        page = calls.run(f"list {resource}", _page(api, f"{group}/{resource}", query), parse=_parse_page)
        room[0] -= page["bytes"]
        if room[0] < 0:
            raise CallError(MALFORMED, f"the cluster's answers pass {MAX_READ_BYTES:,} bytes in all; at most "
                                       "that is read (use --snapshot with a smaller selection)", call=f"list {resource}")
        items += page["items"]
        token = page["continue"]
        if not token:
            return items


def _parse_page(data: Any) -> dict[str, Any]:
    page = mapping(json.loads(data), "a list answer")
    items = page.get("items") or []
    if not isinstance(items, list):
        raise TypeError("items is not a list")
    token = (mapping(page.get("metadata") or {}, "metadata")).get("continue") or ""
    if not isinstance(token, str):
        raise TypeError("metadata.continue is not a string")
    return {"items": items, "continue": token, "bytes": len(data)}


def _dra_not_served(api, calls: Calls) -> bool:
    try:
        calls.run("discover resource.k8s.io/v1", _page(api, DRA_GROUP, []), parse=lambda data: data)
    except CallError as exc:
        return getattr(exc, "status", None) == 404  # any other failure: the reads below report it
    return False


def read_cluster(source: dict[str, Any], context: str | None, budget: Budget) -> View:
    calls = budget.calls()
    api = _client(source, context, calls.remaining())
    server = _server(api)
    if _dra_not_served(api, calls):
        raise ReadError(f"{server}: DRA is not served: {DRA_GROUP} answers 404, so no claim can be allocated; "
                        "turn DRA on for the cluster (or move to a version that serves it) before anything else")
    objects: list[dict[str, Any]] = []
    unread: dict[str, str] = {}
    room = [MAX_READ_BYTES]
    for kind, group, resource in KINDS:
        api_group = group.split("/")[2] if group.startswith("/apis/") else "core"
        try:
            for item in _list(api, group, resource, calls, room):
                if not isinstance(item, dict):
                    raise CallError(MALFORMED, f"an item of the {resource} list is not an object",
                                    call=f"list {resource}")
                objects.append({**item, "kind": kind})
        except CallError as exc:
            if exc.kind == CREDENTIALS:
                raise ReadError(f"{server}: unauthorized (401): the kubeconfig's credentials were refused; "
                                "refresh them (e.g. gcloud container clusters get-credentials / "
                                "aws eks update-kubeconfig / az aks get-credentials)") from None
            if exc.kind == UNREACHABLE:
                raise ReadError(f"{server}: unreachable ({exc.detail})") from None
            if exc.kind == DENIED:
                unread[kind] = f"forbidden (403): needs `list {resource}` in API group {api_group}"
            elif getattr(exc, "status", None) == 404:
                unread[kind] = f"not served (404): {group} is not enabled on this cluster"
            elif exc.kind == TIMEOUT:
                unread[kind] = (f"{exc.detail} (--call-timeout {budget.call_seconds:g} s, "
                                f"--deadline {budget.run_seconds:g} s)")
            else:
                unread[kind] = str(exc)
    if len(unread) == len(KINDS):
        raise ReadError(f"{server}: nothing could be read: " + "; ".join(f"{k}: {v}" for k, v in unread.items()))
    missing = [k for k in REQUIRED if k in unread]
    if missing:
        raise ReadError(f"{server}: cannot check the cluster without {' and '.join(missing)}: "
                        + "; ".join(f"{k}: {unread[k]}" for k in missing))
    return build_view(objects, source=f"cluster {server}", unread=unread)
