"""Pulumi's own CLI and the pulumi-kubernetes provider, built from their Go modules, and the stand-in plugins installed.

Nothing of Pulumi lives in this repository: ``pulumi_engine/go/cli`` and ``pulumi_engine/go/kubernetes`` are two
small consumer modules that name the versions (``go.mod``/``go.sum``); ``go build`` fetches the sources from the Go
module proxy. The binaries go to ``.engine-cache/`` under names that carry a hash of everything they are built
from (the module files, the Go toolchain's version and the build flags), so a change of any of them builds again,
and a second checkout never shares a half-written binary with this one.

- The CLI: ``github.com/pulumi/pulumi/pkg/v3/cmd/pulumi`` at :data:`CLI_VERSION`, its version stamped in as a
  release build stamps it.
- pulumi-kubernetes: the proxy serves ``provider/v4`` only at the pseudo-version in ``go/kubernetes/go.mod``
  (January 2026). Its own main embeds a generated ``schema-embed.json`` that the module zip lacks, so the project's
  main embeds the zip's ``schema.json`` (copied into the build folder, never into the repository). It is installed
  as the version the Python SDK asks for (``pulumi_kubernetes/pulumi-plugin.json``): the engine then names its
  default provider as it would name the released one.
- every cloud provider a registered cloud names (``STANDIN_PACKAGES`` of ``pulumi_engine/<cloud>.py``): the
  project's stand-in (:mod:`pulumi_engine.standin`), installed with
  ``pulumi plugin install resource <name> <version> --file`` under the version each SDK names.

``python -m pulumi_engine build`` (``make preview-build``) builds and installs; ``make preview`` does it on first use.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from pulumi_engine import standin

ROOT = Path(__file__).resolve().parent.parent
GO_SOURCES = Path(__file__).resolve().parent / "go"
CACHE = ROOT / ".engine-cache"
CLI_VERSION = "v3.274.1"
CLI_PACKAGE = "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
KUBERNETES_MODULE = "github.com/pulumi/pulumi-kubernetes/provider/v4"
MIN_GO = (1, 24)
BUILD_TIMEOUT_S = 5400.0
CLOSED_PROXY = "http://127.0.0.1:9"
GO_INSTALL = "install Go >= 1.24 (https://go.dev/doc/install) and put `go` on PATH, then run `make preview-build`"


class EngineUnavailable(RuntimeError):
    """The real engine cannot be had here (no Go, a failed build); the message says what to do."""


@dataclass(frozen=True)
class Tools:
    cache: Path
    cli_root: Path  # <cli_root>/bin/pulumi
    kubernetes_provider: Path
    home: Path  # PULUMI_HOME, with the plugins installed

    @property
    def cli(self) -> Path:
        return self.cli_root / "bin" / "pulumi"


def find_go() -> tuple[str, str]:
    """The go command and its version (``go1.26.8``); EngineUnavailable when there is none or it is too old."""
    go = os.environ.get("PREVIEW_GO") or shutil.which("go")
    if not go:
        raise EngineUnavailable(f"the real Pulumi engine is built from Go modules and `go` is not on PATH; {GO_INSTALL}")
    done = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True, timeout=60, check=False)
    match = re.match(r"go(\d+)\.(\d+)", done.stdout.strip())
    if done.returncode != 0 or not match:
        raise EngineUnavailable(f"`{go} env GOVERSION` named no Go version; {GO_INSTALL}")
    if (int(match.group(1)), int(match.group(2))) < MIN_GO:
        raise EngineUnavailable(f"the engine build needs Go >= 1.24, found {done.stdout.strip()}; {GO_INSTALL}")
    return go, done.stdout.strip()


def go_env(go_version: str) -> dict[str, str]:
    """The environment of every go command here: ambient GOFLAGS (``-mod=mod`` would rewrite the modfiles) ignored."""
    env = {k: v for k, v in os.environ.items() if k != "GOFLAGS"}
    env["GOFLAGS"] = "-mod=readonly"
    return env


def _hash(paths: list[Path], *extra: str) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for item in extra:
        digest.update(item.encode() + b"\0")
    return digest.hexdigest()[:12]


def _cli_args(output: Path) -> list[str]:
    ldflags = f"-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version={CLI_VERSION}"
    return ["build", "-trimpath", "-ldflags", ldflags, "-o", str(output), CLI_PACKAGE]


def _kubernetes_args(output: Path, version: str) -> list[str]:
    return ["build", "-trimpath", "-ldflags", f"-s -w -X main.version={version}", "-o", str(output), "."]


def _run(cmd: list[str], cwd: Path, env: dict[str, str], what: str) -> subprocess.CompletedProcess:
    try:
        done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
                              check=False)
    except subprocess.TimeoutExpired:
        raise EngineUnavailable(f"{what} did not finish in {BUILD_TIMEOUT_S:.0f} s") from None
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-25:])
        raise EngineUnavailable(f"{what} failed:\n{tail}")
    return done


def _install_atomically(built: Path, final: Path) -> None:
    final.parent.mkdir(parents=True, exist_ok=True)
    os.replace(built, final)


def build_cli(go: str, go_version: str, cache: Path = CACHE) -> Path:
    """``<cache>/cli-<version>-<hash>/`` with ``bin/pulumi`` in it (built unless already there)."""
    source = GO_SOURCES / "cli"
    tag = _hash([source / "go.mod", source / "go.sum", source / "tools.go"], go_version,
                *_cli_args(Path("OUT")))
    root = cache / f"cli-{CLI_VERSION}-{tag}"
    binary = root / "bin" / "pulumi"
    if not binary.exists():
        partial = cache / "tmp" / f"pulumi-{tag}-{os.getpid()}"
        partial.parent.mkdir(parents=True, exist_ok=True)
        print(f"building the Pulumi CLI {CLI_VERSION} from its Go modules (cold: about 15 minutes on 2 cores)",
              file=sys.stderr, flush=True)
        _run([go, *_cli_args(partial)], source, go_env(go_version), f"the Pulumi CLI {CLI_VERSION} build")
        _install_atomically(partial, binary)
    return root


def sdk_plugin_version(package: str) -> str:
    return standin.sdk_plugin_version(package)


def build_kubernetes_provider(go: str, go_version: str, cache: Path = CACHE) -> Path:
    """``<cache>/bin/pulumi-resource-kubernetes-<version>-<hash>`` (built unless already there)."""
    source = GO_SOURCES / "kubernetes"
    version = sdk_plugin_version("kubernetes")
    tag = _hash([source / "go.mod", source / "go.sum", source / "main.go"], go_version,
                *_kubernetes_args(Path("OUT"), version))
    binary = cache / "bin" / f"pulumi-resource-kubernetes-{version}-{tag}"
    if binary.exists():
        return binary
    env = go_env(go_version)
    work = cache / "tmp" / f"kubernetes-{tag}-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for name in ("go.mod", "go.sum", "main.go"):
        shutil.copyfile(source / name, work / name)
    found = _run([go, "mod", "download", "-json", KUBERNETES_MODULE], work, env, "fetching the kubernetes provider")
    module_dir = Path(json.loads(found.stdout)["Dir"]) / "cmd" / "pulumi-resource-kubernetes"
    for name in ("schema", "terraform-mapping"):
        shutil.copyfile(module_dir / f"{name}.json", work / f"{name}-embed.json")
    print("building the pulumi-kubernetes provider from its Go module (cold: about 20 minutes on 2 cores)",
          file=sys.stderr, flush=True)
    _run([go, *_kubernetes_args(work / "provider", version)], work, env, "the pulumi-kubernetes provider build")
    _install_atomically(work / "provider", binary)
    shutil.rmtree(work, ignore_errors=True)
    return binary


def offline_env(tools: Tools) -> dict[str, str]:
    """What the CLI needs to run with no network: its home, no update check, no plugin download."""
    return {
        "PULUMI_HOME": str(tools.home),
        "PULUMI_SKIP_UPDATE_CHECK": "1",
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
        "PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK": "true",
        "PULUMI_IGNORE_AMBIENT_PLUGINS": "true",
        "PULUMI_SKIP_CONFIRMATIONS": "true",
        "PULUMI_DEBUG_COMMANDS": "true",  # --event-log, as the Automation API runs the CLI
        "PATH": f"{tools.cli_root / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        # Nothing leaves the machine: any HTTP(S) request the CLI or a plugin would make (an update check, a
        # plugin or chart download) goes to a loopback port nothing serves and fails at once; loopback itself
        # (the engine's gRPC between the CLI, the program, the plugins and the pack) is never proxied.
        **{name: CLOSED_PROXY for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy")},
        **{name: "127.0.0.1,localhost,::1" for name in ("NO_PROXY", "no_proxy")},
    }


def _standin_launcher(package: str, version: str, cache: Path) -> Path:
    launcher = cache / "standin" / f"pulumi-resource-{package}"
    launcher.parent.mkdir(parents=True, exist_ok=True)
    quote = lambda p: "'" + str(p).replace("'", "'\\''") + "'"  # noqa: E731
    text = (f"#!/bin/sh\n# Stand-in for the {package} provider (pulumi_engine/standin.py); not the real provider.\n"
            f"PYTHONPATH={quote(ROOT)}${{PYTHONPATH:+:$PYTHONPATH}} exec {quote(sys.executable)} "
            f"-m pulumi_engine.standin {package} {version} \"$@\"\n")
    launcher.write_text(text)
    launcher.chmod(0o755)
    return launcher


def install_plugins(tools_cli: Path, home: Path, kubernetes_provider: Path, cache: Path = CACHE) -> None:
    """Install the kubernetes provider and the registered clouds' stand-ins into ``home`` (PULUMI_HOME) when not
    already there."""
    wanted = {"kubernetes": (sdk_plugin_version("kubernetes"), kubernetes_provider)}
    for package in standin.packages():
        version = sdk_plugin_version(package)
        wanted[package] = (version, _standin_launcher(package, version, cache))
    env = {**os.environ, "PULUMI_HOME": str(home), "PULUMI_SKIP_UPDATE_CHECK": "1"}
    for package, (version, file) in wanted.items():
        installed = home / "plugins" / f"resource-{package}-v{version}" / f"pulumi-resource-{package}"
        if installed.exists() and installed.read_bytes() == file.read_bytes():
            continue
        shutil.rmtree(installed.parent, ignore_errors=True)
        _run([str(tools_cli), "plugin", "install", "resource", package, version, "--file", str(file), "--reinstall"],
             cache, env, f"installing the {package} plugin")


def ensure_tools(cache: Path = CACHE) -> Tools:
    """Build what is missing and install the plugins; the :class:`Tools` a preview runs with."""
    go, go_version = find_go()
    cli_root = build_cli(go, go_version, cache)
    provider = build_kubernetes_provider(go, go_version, cache)
    home = cache / "home"
    install_plugins(cli_root / "bin" / "pulumi", home, provider, cache)
    return Tools(cache=cache, cli_root=cli_root, kubernetes_provider=provider, home=home)
