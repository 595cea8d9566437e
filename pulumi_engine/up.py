"""``make up-rehearsal``: ``pulumi up`` of the stack by the real engine, its Kubernetes half onto the rehearsal's
Kubernetes control plane (rehearse/harness: Kubernetes' own apiserver, scheduler and controllers).

The stand-in cloud plugins "create" the cloud resources and answer the control plane's address and CA as the
cluster's endpoint (:data:`pulumi_engine.standin.MODE_ENV` ``apply``); the real pulumi-kubernetes provider then
creates every Kubernetes object on that API server, through the kubeconfig the program builds. The program's
kubeconfigs authenticate with the clouds' exec plugins (each cloud's ``AUTH_COMMANDS`` in
``pulumi_engine/<cloud>.py``): small stand-ins of the same names answer the control plane's token. Nothing leaves
the machine.

What cannot happen offline, and is reported as such (:data:`OFFLINE_FAILURES`): a Helm Release loads its chart
from its registry, so each Release fails; ``--continue-on-error`` carries on with every resource that does not
depend on it, and the engine skips the ones that do (on the shipped stacks: the DeviceClasses, claim templates and
workloads, which wait for their driver's Release). Excluding the Releases instead (``--exclude``) is no way out:
at v3.274.1 a dependent of an excluded resource that was never created fails the snapshot's integrity check.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pulumi_engine import build, cloud_parts, standin
from pulumi_engine.preview import (
    PASSPHRASE,
    PROJECT,
    ROOT,
    SECRET_PLACEHOLDER,
    _read_events,
    _stack_file_for_engine,
    run_cli,
)

TOKEN_ENV = "GPU_FUNGIBILITY_STANDIN_TOKEN"


#: Failures that are the offline setting's, not the stack's: a Helm chart that cannot be fetched (every
#: Release; the HTTP proxy is a closed loopback port), and a ResourceQuota the provider awaits for a status the
#: rehearsal's control plane never writes (it runs no resourcequota controller).
OFFLINE_FAILURES = {
    "chart not fetched (offline)": ("has a problem: failed to perform", "is not a valid chart repository",
                                     "proxyconnect tcp"),
    "quota status never written (no resourcequota controller)": ("ResourceQuota",),
}


@dataclass
class UpRun:
    stack: str
    ok: bool
    created: list[str]
    failed: dict[str, str]
    on_the_api_server: dict[str, list[str]] = field(default_factory=dict)
    stderr: str = ""
    summary: str = ""

    def why(self, message: str) -> str | None:
        """The offline reason a failure message shows, or None for a failure of the stack itself."""
        return next((reason for reason, marks in OFFLINE_FAILURES.items() if any(m in message for m in marks)),
                    None)

    @property
    def stack_failures(self) -> dict[str, str]:
        return {urn: message for urn, message in self.failed.items() if self.why(message) is None}


def _auth_stubs(folder: Path) -> Path:
    """A stand-in of each exec plugin the registered clouds' kubeconfigs run (:func:`cloud_parts.auth_commands`),
    each printing an ExecCredential with the control plane's token."""
    credential = ('{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential",'
                  '"status":{"token":"%s"}}')
    for name in cloud_parts.auth_commands():
        stub = folder / name
        stub.write_text("#!/bin/sh\n# Stand-in exec credential plugin (pulumi_engine.up): the rehearsal's token.\n"
                        f"printf '{credential}\\n' \"${TOKEN_ENV}\"\n")
        stub.chmod(0o755)
    return folder


def _outcomes(events: list[dict[str, Any]]) -> tuple[list[str], dict[str, str]]:
    created: list[str] = []
    failed: dict[str, str] = {}
    for event in events:
        if "resOutputsEvent" in event:
            meta = event["resOutputsEvent"].get("metadata") or {}
            if meta.get("op") == "create" and (meta.get("new") or {}).get("custom"):
                created.append(meta.get("urn", ""))
        if "resOpFailedEvent" in event:
            meta = event["resOpFailedEvent"].get("metadata") or {}
            failed.setdefault(meta.get("urn", ""), "")
        diagnostic = event.get("diagnosticEvent") or {}
        if diagnostic.get("severity") == "error" and diagnostic.get("urn"):
            failed[diagnostic["urn"]] = (failed.get(diagnostic["urn"]) or "") + diagnostic.get("message", "").strip()
    return created, failed


def up_on_rehearsal(stack: str, minor: str = "1.35", *, root: Path = ROOT,
                    tools: build.Tools | None = None) -> UpRun:
    """``pulumi up`` of ``stack`` onto a fresh rehearsal control plane of Kubernetes ``minor``; what it made."""
    from rehearse import cluster
    from rehearse.control_plane import Harness, ensure_built

    tools = tools or build.ensure_tools()
    binary = ensure_built(minor)
    with tempfile.TemporaryDirectory(prefix="gpu-fungibility-up-") as scratch, \
            Harness.start(minor, binary=binary) as harness:
        scratch_dir = Path(scratch)
        kube = yaml.safe_load(Path(harness.kubeconfig).read_text())
        server = kube["clusters"][0]["cluster"]["server"]
        ca_b64 = kube["clusters"][0]["cluster"]["certificate-authority-data"]
        token = kube["users"][0]["user"]["token"]
        import base64

        (scratch_dir / "ca.pem").write_bytes(base64.b64decode(ca_b64))
        harness.apply([crd for crd, _ in cluster.served_crds()])  # what the clouds serve (GKE's ComputeClass)
        work = scratch_dir / "work"
        (work / "state").mkdir(parents=True)
        secure = _stack_file_for_engine(stack, root, work)
        stubs = _auth_stubs(scratch_dir)
        env = {
            **build.offline_env(tools),
            "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
            standin.MODE_ENV: "apply",
            standin.CLUSTER_ENV: json.dumps({"server": server, "ca": ca_b64}),
            TOKEN_ENV: token,
            "SSL_CERT_FILE": str(scratch_dir / "ca.pem"),
        }
        env["PATH"] = f"{stubs}:{env['PATH']}"

        secrets = {key: SECRET_PLACEHOLDER for key in {*secure, f"{PROJECT}:hfToken"}}  # `up` needs the token
        done = run_cli(stack, ["up", "--yes", "--skip-preview", "--continue-on-error"], work=work, env=env,
                       tools=tools, root=root, secrets=secrets, event_log=scratch_dir / "events.jsonl")
        created, failed = _outcomes(_read_events(scratch_dir / "events.jsonl"))
        listed = harness.list("namespaces", "deployments", "daemonsets", "services", "secrets",
                              "deviceclasses", "resourceclaimtemplates")
        on_server = {kind: sorted(f"{(o['metadata'].get('namespace') or '')}/{o['metadata']['name']}".lstrip("/")
                                  for o in objects) for kind, objects in listed.items()}
        summary = done.stdout[done.stdout.rfind("Resources:"):] if "Resources:" in done.stdout else ""
        return UpRun(stack, done.returncode == 0, created, failed, on_server, done.stderr, summary.strip())
