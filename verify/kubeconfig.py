"""Kubeconfig files as kubectl reads them, and their exec credential plugins run within the run's deadline.

- ``--kubeconfig FILE`` names one file, taken whole (a path may hold a colon).
- ``$KUBECONFIG`` is a list of files separated by ``os.pathsep`` (``:``; ``;`` on Windows). As kubectl does
  (client-go tools/clientcmd/loader.go, ``ClientConfigLoadingRules.Load``): empty entries and files that do
  not exist are skipped; the files are merged in order, the first file to set a value winning (the
  current context, and each cluster, user and context by name); a relative path inside a file
  (``certificate-authority``, ``client-certificate``, ``client-key``, ``tokenFile``, an exec ``command``
  holding a ``/``) is relative to that file's folder.
- Every file is read with the shared bounded reader (:mod:`input_files`): size, depth, aliases, duplicate keys.
- An ``exec`` user (gke-gcloud-auth-plugin, aws eks get-token, kubelogin) is run here, before the client is
  built, as its own process group with the run's remaining ``--deadline``: a plugin that waits for a sign-in
  that never comes is stopped (the whole group) and the run ends with exit 2 naming it; its output is read
  within a size limit. The client then gets the token or certificate the plugin printed.
"""

from __future__ import annotations

import base64
import copy
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import input_files
from verify.snapshot import ReadError

#: A kubeconfig is a few KB (certificates included); 1 MiB holds hundreds of clusters.
KUBECONFIG_FILE = input_files.Limits(max_bytes=2**20, max_depth=32, max_nodes=100_000)
#: What an exec plugin may print (an ExecCredential is a token or a certificate: a few KB).
MAX_PLUGIN_OUTPUT = 2**20
SECTIONS = (("clusters", "cluster"), ("users", "user"), ("contexts", "context"))
_PATH_FIELDS = {"cluster": ("certificate-authority",), "user": ("client-certificate", "client-key", "tokenFile")}


def paths_from(given: str | None, env: str | None) -> tuple[str, list[Path]] | None:
    """(origin, files to merge) from ``--kubeconfig`` or ``$KUBECONFIG``; None when neither is set.

    ReadError when ``--kubeconfig`` names no file, or when no entry of ``$KUBECONFIG`` exists."""
    if given:
        path = Path(given).expanduser()
        if not path.is_file():
            raise ReadError(f"--kubeconfig {path}: no such file")
        return "--kubeconfig", [path]
    if not env:
        return None
    entries = [Path(e).expanduser() for e in env.split(os.pathsep) if e.strip()]
    found = [p for p in entries if p.is_file()]
    if not found:
        listed = ", ".join(str(p) for p in entries) or "(empty)"
        raise ReadError(f"KUBECONFIG: none of its files exists ({listed})")
    return "KUBECONFIG", found


def load(paths: list[Path]) -> dict[str, Any]:
    """The files merged as kubectl merges them, relative paths made absolute."""
    merged: dict[str, Any] = {"apiVersion": "v1", "kind": "Config", "clusters": [], "users": [], "contexts": []}
    names: dict[str, set[str]] = {section: set() for section, _ in SECTIONS}
    for path in paths:
        try:
            data = input_files.read_yaml(path, KUBECONFIG_FILE)
        except input_files.InputFileError as exc:
            raise ReadError(f"kubeconfig {exc}") from None
        if data is None:
            continue
        if not isinstance(data, dict):
            raise ReadError(f"kubeconfig {path}: not a kubeconfig (a mapping with clusters, users, contexts)")
        if not merged.get("current-context") and isinstance(data.get("current-context"), str):
            merged["current-context"] = data["current-context"]
        for section, key in SECTIONS:
            entries = data.get(section) or []
            if not isinstance(entries, list):
                raise ReadError(f"kubeconfig {path}: {section} is not a list")
            for index, entry in enumerate(entries):
                if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) \
                        or not isinstance(entry.get(key) or {}, dict):
                    raise ReadError(f"kubeconfig {path}: {section}[{index}] is not a named {key}")
                if entry["name"] in names[section]:
                    continue  # the first file to define a name wins
                names[section].add(entry["name"])
                merged[section].append(_absolute(copy.deepcopy(entry), key, path.parent))
    return merged


def _absolute(entry: dict[str, Any], key: str, folder: Path) -> dict[str, Any]:
    body = entry.get(key) or {}
    for field in _PATH_FIELDS.get(key, ()):
        value = body.get(field)
        if isinstance(value, str) and value and not os.path.isabs(os.path.expanduser(value)):
            body[field] = str(folder / value)
    command = (body.get("exec") or {}).get("command") if key == "user" else None
    if isinstance(command, str) and "/" in command and not os.path.isabs(command):
        body["exec"]["command"] = str(folder / command)
    return entry


def resolve_exec(config: dict[str, Any], context: str | None, seconds: float) -> dict[str, Any]:
    """``config`` with the chosen context's ``exec`` user replaced by the credential its plugin prints,
    the plugin run within ``seconds``; unchanged when that user has no ``exec``."""
    chosen = context or config.get("current-context")
    ctx = next((c.get("context") or {} for c in config.get("contexts") or [] if c.get("name") == chosen), None)
    if not isinstance(ctx, dict):
        return config
    user = next((u for u in config.get("users") or [] if u.get("name") == ctx.get("user")), None)
    plugin = (user or {}).get("user", {}).get("exec") if user else None
    if not isinstance(plugin, dict):
        return config
    cluster = next((c.get("cluster") for c in config.get("clusters") or [] if c.get("name") == ctx.get("cluster")),
                   None)
    status = run_plugin(plugin, cluster if isinstance(cluster, dict) else {}, seconds, user["name"])
    config = copy.deepcopy(config)
    for entry in config["users"]:
        if entry.get("name") == user["name"]:
            entry["user"] = {k: v for k, v in entry["user"].items() if k != "exec"}
            if status.get("token"):
                entry["user"]["token"] = str(status["token"])
            else:
                entry["user"]["client-certificate-data"] = _b64(status["clientCertificateData"])
                entry["user"]["client-key-data"] = _b64(status["clientKeyData"])
    return config


def _b64(pem: Any) -> str:
    return base64.standard_b64encode(str(pem).encode()).decode()


def run_plugin(plugin: dict[str, Any], cluster: dict[str, Any], seconds: float, user: str) -> dict[str, Any]:
    """The ``status`` of the ExecCredential the plugin prints, within ``seconds`` (ReadError otherwise)."""
    command = plugin.get("command")
    if not isinstance(command, str) or not command:
        raise ReadError(f"kubeconfig user {user}: exec has no command")
    args = [str(a) for a in plugin.get("args") or []]
    env = dict(os.environ)
    for item in plugin.get("env") or []:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            env[item["name"]] = str(item.get("value", ""))
    interactive = sys.stdin.isatty() and plugin.get("interactiveMode") != "Never"
    info: dict[str, Any] = {"apiVersion": plugin.get("apiVersion", "client.authentication.k8s.io/v1"),
                            "kind": "ExecCredential", "spec": {"interactive": interactive}}
    if plugin.get("provideClusterInfo"):
        info["spec"]["cluster"] = {k: cluster[k] for k in ("server", "certificate-authority-data") if k in cluster}
    env["KUBERNETES_EXEC_INFO"] = json.dumps(info)
    name = f"the kubeconfig's exec plugin `{command}` (user {user})"
    # stdout and stderr go to temporary files, read within MAX_PLUGIN_OUTPUT: a plugin printing without end
    # fills no memory
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        try:
            process = subprocess.Popen([command, *args], stdout=stdout, stderr=None if interactive else stderr,
                                       stdin=None if interactive else subprocess.DEVNULL, env=env,
                                       start_new_session=True)
        except OSError as exc:
            raise ReadError(f"{name} cannot be run ({exc.strerror or exc})") from None
        try:
            process.wait(timeout=max(seconds, 0.001))
        except subprocess.TimeoutExpired:
            _stop(process)
            raise ReadError(f"{name} gave no credential within {seconds:g} s (--deadline); it was stopped. A "
                            "plugin waiting for a sign-in: sign in first (gcloud auth login, aws sso login, "
                            "az login), or raise --deadline") from None
        stdout.seek(0)
        out = stdout.read(MAX_PLUGIN_OUTPUT + 1)
        stderr.seek(0)
        err = stderr.read(MAX_PLUGIN_OUTPUT)
    if len(out) > MAX_PLUGIN_OUTPUT:
        raise ReadError(f"{name} printed more than {MAX_PLUGIN_OUTPUT:,} bytes; an ExecCredential is a few KB")
    if process.returncode != 0:
        said = (err or b"").decode(errors="replace").strip().splitlines()[-1:] if err else []
        raise ReadError(f"{name} failed (exit {process.returncode})" + (f": {said[0][:300]}" if said else ""))
    try:
        status = json.loads(out).get("status")
    except (ValueError, AttributeError):
        raise ReadError(f"{name} printed no ExecCredential JSON") from None
    if not isinstance(status, dict) or not (status.get("token") or (
            status.get("clientCertificateData") and status.get("clientKeyData"))):
        raise ReadError(f"{name} printed an ExecCredential without a token or a client certificate")
    return status


def _stop(process: subprocess.Popen) -> None:
    """Stop the plugin and anything it started (its own process group)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        try:
            process.wait(timeout=2)
            break
        except subprocess.TimeoutExpired:
            continue
