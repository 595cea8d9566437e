"""Client of the rehearsal's control plane: Kubernetes' own apiserver, scheduler and controllers in one Go process.

The Go program lives in ``rehearse/harness/`` (its contract: ``rehearse/README.md``). :func:`ensure_built`
compiles it on first use for one Kubernetes minor (the patch comes from ``rehearse/harness/versions.json``) into
``.rehearse-cache/bin/``; the file name carries a hash of the Go sources, the minor's modfile and the Go toolchain
(``go env GOVERSION``), so a change of any builds again. The build ignores the caller's ``GOFLAGS`` and ``go.work``
(:func:`build_env`): ``-mod=mod`` would let the go command rewrite the generated modfiles, ``-trimpath`` breaks the
apiserver's test fixtures. :class:`Harness` starts it and speaks its JSON-lines protocol, with a deadline on every reply:
a hung process never hangs the caller. Standard library only.

    with Harness.start("1.35") as cluster:
        cluster.apply([node, device_class, deployment])
        cluster.settle()
        pods = cluster.list("pods")["pods"]

``python -m rehearse.control_plane build [--minor 1.35]`` builds (``make rehearse-build``);
``python -m rehearse.control_plane compile [--minor all]`` runs ``go build`` and ``go vet`` of every minor's modfile
(``make rehearse-compile``, in CI: each supported minor compiles, nothing is kept);
``python -m rehearse.control_plane start [--minor 1.35]`` runs a control plane until Ctrl-C and prints its kubeconfig.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SOURCE = Path(__file__).resolve().parent / "harness"
VERSIONS_FILE = SOURCE / "versions.json"
CACHE = ROOT / ".rehearse-cache"
#: The oldest Go that builds Kubernetes 1.34 (its go.mod says `go 1.24.0`); newer minors may ask the go command
#: for a newer toolchain, which it fetches from the module proxy like any module (GOTOOLCHAIN=auto).
MIN_GO = (1, 24)
DEFAULT_MINOR = "1.35"
BUILD_TIMEOUT_S = 3600.0
START_TIMEOUT_S = 180.0
REPLY_TIMEOUT_S = 120.0
GO_INSTALL = "install Go >= 1.24 (https://go.dev/doc/install) and put `go` on PATH, then run `make rehearse-build`"


class HarnessUnavailable(RuntimeError):
    """The control plane cannot be had here (no Go, too old a Go, a failed build); the message says what to do."""


class HarnessError(RuntimeError):
    """The control plane answered with an error, or stopped answering."""


class HarnessTimeout(HarnessError):
    """The cluster did not settle in time, or the process did not answer in time."""


@dataclass(frozen=True)
class ApplyResult:
    ref: str
    ok: bool
    error: str | None = None


def versions() -> dict[str, str]:
    """Kubernetes minor -> the patch the harness is built from, e.g. {"1.35": "v1.35.4"}."""
    return json.loads(VERSIONS_FILE.read_text())


def minor_of(version: str) -> str:
    """'1.35', 'v1.35', 'v1.35.4', '1.35.2-gke.100' -> '1.35'."""
    match = re.match(r"v?(\d+)\.(\d+)", str(version).strip())
    if not match:
        raise HarnessUnavailable(f"not a Kubernetes version: {version!r}")
    return f"{match.group(1)}.{match.group(2)}"


def patch_for(minor: str) -> str:
    table = versions()
    key = minor_of(minor)
    if key not in table:
        raise HarnessUnavailable(f"no rehearsal control plane for Kubernetes {key}: the harness is built for "
                                 f"{', '.join(sorted(table))} ({VERSIONS_FILE.relative_to(ROOT)})")
    return table[key]


def _minor_key(minor: str) -> tuple[int, ...]:
    return tuple(int(part) for part in minor_of(minor).split("."))


def build_tag(minor: str) -> str:
    return "k8s" + minor_of(minor).replace(".", "_")


def source_hash(minor: str, toolchain: str = "") -> str:
    """A hash of everything the binary is built from: the Go sources, the minor's modfile and go.sum, the build
    arguments and environment, and the toolchain (``go env GOVERSION``) that builds it."""
    digest = hashlib.sha256()
    minor = minor_of(minor)
    files = sorted(SOURCE.glob("*.go")) + [SOURCE / "go.mod", SOURCE / "k8s" / minor / "go.mod",
                                           SOURCE / "k8s" / minor / "go.sum"]
    for path in files:
        digest.update(path.relative_to(SOURCE).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"<missing>")
        digest.update(b"\0")
    digest.update(" ".join(_build_args(minor, "OUT")).encode())
    digest.update(f"\0{BUILD_GOFLAGS}\0{toolchain}".encode())
    return digest.hexdigest()[:12]


def binary_path(minor: str, cache: Path | None = None, toolchain: str = "") -> Path:
    return (cache or CACHE) / "bin" / f"harness-{patch_for(minor)}-{source_hash(minor, toolchain)}"


#: The only GOFLAGS the build runs with: the modfiles are generated (gen_modfile.py) and never rewritten by go.
BUILD_GOFLAGS = "-mod=readonly"


def build_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of every go command of the harness: the caller's, except ``GOFLAGS`` (replaced by
    :data:`BUILD_GOFLAGS`: ``-mod=mod`` would rewrite the modfiles, ``-modfile`` pick another, ``-trimpath``
    break the apiserver's test fixtures) and ``GOWORK`` (off: a go.work above the folder would change the
    modules)."""
    env = dict(os.environ if environ is None else environ)
    env["GOFLAGS"] = BUILD_GOFLAGS
    env["GOWORK"] = "off"
    return env


def _ldflags(patch: str) -> str:
    major, minor = patch.lstrip("v").split(".")[:2]
    pkg = "k8s.io/component-base/version"
    return f"-X {pkg}.gitVersion={patch} -X {pkg}.gitMajor={major} -X {pkg}.gitMinor={minor}"


def _build_args(minor: str, output: str) -> list[str]:
    # No -trimpath: the apiserver's test server finds its certificate fixtures through its source path.
    return ["build", f"-modfile=k8s/{minor}/go.mod", "-tags", build_tag(minor), "-ldflags", _ldflags(patch_for(minor)),
            "-o", output, "."]


def toolchain(go: str) -> str:
    """The toolchain the go command builds the harness with (``go env GOVERSION`` in its folder: with
    GOTOOLCHAIN=auto that may be a newer one than ``go`` itself), e.g. ``go1.26.8``."""
    try:
        done = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True, timeout=60, check=False,
                              cwd=SOURCE, env=build_env())
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def go_version(go: str) -> tuple[int, int]:
    """(major, minor) of the go command, e.g. (1, 26)."""
    try:
        done = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise HarnessUnavailable(f"`{go} env GOVERSION` failed ({exc}); {GO_INSTALL}") from None
    match = re.match(r"go(\d+)\.(\d+)", done.stdout.strip())
    if done.returncode != 0 or not match:
        reason = (done.stderr.strip().splitlines() or [done.stdout.strip() or "no output"])[-1]
        raise HarnessUnavailable(f"`{go} env GOVERSION` did not name a Go version ({reason}); {GO_INSTALL}")
    return int(match.group(1)), int(match.group(2))


def find_go(go: str | None = None) -> str:
    found = go or os.environ.get("REHEARSE_GO") or shutil.which("go")
    if not found:
        raise HarnessUnavailable(f"the rehearsal needs the Go toolchain to build Kubernetes' control plane and `go` "
                                 f"is not on PATH; {GO_INSTALL}")
    version = go_version(found)
    if version < MIN_GO:
        raise HarnessUnavailable(f"the rehearsal needs Go >= {MIN_GO[0]}.{MIN_GO[1]}, and {found} is "
                                 f"go{version[0]}.{version[1]}; {GO_INSTALL}")
    return found


def _tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _kill_group(proc: subprocess.Popen, grace_s: float = 5.0) -> None:
    """SIGTERM the process group (the process leads its own session), then SIGKILL after a grace period."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


@contextlib.contextmanager
def _lock(path: Path):
    """An exclusive lock between processes that build at the same time (fcntl where there is one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            yield
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_built(minor: str = DEFAULT_MINOR, *, progress: Callable[[str], Any] = print, go: str | None = None,
                 cache: Path | None = None, timeout_s: float = BUILD_TIMEOUT_S) -> Path:
    """The harness binary for a Kubernetes minor, built on first use (one progress line) and cached.

    Raises :class:`HarnessUnavailable` with what to do when Go is missing or older than 1.24, or the build fails.
    """
    minor = minor_of(minor)
    patch = patch_for(minor)
    go = find_go(go)
    target = binary_path(minor, cache, toolchain(go))
    if target.is_file() and os.access(target, os.X_OK):
        return target
    bin_dir = target.parent
    with _lock(bin_dir / f".build-{patch}.lock"):
        if target.is_file():
            return target
        progress(f"building the rehearsal control plane for Kubernetes {patch} (first use, a few minutes)...")
        log = bin_dir.parent / f"build-{patch}.log"
        partial = target.with_name(target.name + ".partial")
        env = build_env()
        started = time.monotonic()
        with open(log, "w") as out:
            out.write(f"$ cd {SOURCE} && {go} {' '.join(_build_args(minor, str(partial)))}\n")
            out.flush()
            try:
                proc = subprocess.Popen([go, *_build_args(minor, str(partial))], cwd=SOURCE, stdout=out,
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                        start_new_session=True)
            except OSError as exc:
                raise HarnessUnavailable(f"could not run {go}: {exc}; {GO_INSTALL}") from None
            try:
                code = proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                code = None
            except BaseException:
                _kill_group(proc)
                partial.unlink(missing_ok=True)
                raise
        if code != 0 or not partial.is_file():
            partial.unlink(missing_ok=True)
            why = f"did not finish within {timeout_s:.0f} s" if code is None else f"failed (exit {code})"
            raise HarnessUnavailable(
                f"building the rehearsal control plane for Kubernetes {patch} {why}; the build needs the Go module "
                f"proxy (or a filled module cache) and about 4 GB of disk. Last lines of {log}:\n{_tail(log)}")
        os.replace(partial, target)
        with open(log, "a") as out:
            out.write(f"built in {time.monotonic() - started:.1f} s\n")
        for stale in bin_dir.glob(f"harness-{patch}-*"):
            if stale != target and not stale.name.endswith(".partial"):
                stale.unlink(missing_ok=True)
    return target


def compile_minor(minor: str, *, go: str | None = None, progress: Callable[[str], Any] = print,
                  timeout_s: float = BUILD_TIMEOUT_S) -> None:
    """``go build`` (output discarded) and ``go vet`` of the harness against one minor's modfile and build tag:
    what CI runs for every supported minor, so a minor the rehearsal does not run in CI still compiles.
    Raises :class:`HarnessUnavailable` naming the command and quoting its output when either fails."""
    minor = minor_of(minor)
    patch_for(minor)  # an unknown minor names the known ones
    go = find_go(go)
    tags = ["-modfile=k8s/" + minor + "/go.mod", "-tags", build_tag(minor)]
    for command in ([go, "build", *tags, "-o", os.devnull, "."], [go, "vet", *tags, "."]):
        progress(f"$ (cd {SOURCE.relative_to(ROOT)} && {' '.join(['go', *command[1:]])})")
        try:
            done = subprocess.run(command, cwd=SOURCE, env=build_env(), capture_output=True, text=True,
                                  stdin=subprocess.DEVNULL, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            raise HarnessUnavailable(f"`go {command[1]}` for Kubernetes {minor} did not finish within "
                                     f"{timeout_s:.0f} s") from None
        if done.returncode != 0:
            said = "\n".join((done.stdout + done.stderr).strip().splitlines()[-25:])
            raise HarnessUnavailable(f"`go {command[1]}` for Kubernetes {minor} failed (exit {done.returncode}):\n"
                                     f"{said}")


# Every running harness of this process, closed at exit and on SIGTERM.
_LIVE: weakref.WeakSet = weakref.WeakSet()
_SIGTERM_INSTALLED = False


def _close_all() -> None:
    for harness in list(_LIVE):
        with contextlib.suppress(Exception):
            harness.close()


def _install_sigterm() -> None:
    """SIGTERM becomes SystemExit(143) (so `with` blocks close their harness), unless the program handles it."""
    global _SIGTERM_INSTALLED
    if _SIGTERM_INSTALLED or threading.current_thread() is not threading.main_thread():
        return
    _SIGTERM_INSTALLED = True
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        def on_sigterm(signum, frame):
            _close_all()
            raise SystemExit(128 + signum)

        signal.signal(signal.SIGTERM, on_sigterm)


import atexit  # noqa: E402 - registered next to what it closes

atexit.register(_close_all)


class Harness:
    """A running control plane. Use :meth:`start`; close it (or use ``with``) to stop it and remove its files."""

    def __init__(self, proc: subprocess.Popen, *, reply_timeout_s: float = REPLY_TIMEOUT_S) -> None:
        self._proc = proc
        self._replies: queue.Queue = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=200)
        self._next_id = 0
        self._lock = threading.Lock()
        self._closed = False
        self.reply_timeout_s = reply_timeout_s
        self.kubeconfig: Path = Path()
        self.version: str = ""
        self.start_seconds: float = 0.0
        #: pods ("namespace/name") a settle saw flapping their claim statuses (see :meth:`settle`)
        self.flapping: set[str] = set()
        threading.Thread(target=self._read_stdout, daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()
        _LIVE.add(self)

    # -- process ---------------------------------------------------------------------------------------------
    @classmethod
    def start(cls, minor: str = DEFAULT_MINOR, workdir: str | Path | None = None, *,
              progress: Callable[[str], Any] = print, binary: str | Path | None = None, verbosity: int | None = None,
              start_timeout_s: float = START_TIMEOUT_S, reply_timeout_s: float = REPLY_TIMEOUT_S) -> Harness:
        """Build if needed, start, and wait for the control plane to be ready.

        workdir: where the kubeconfig goes (kept); default a temporary directory the harness removes on exit.
        """
        exe = Path(binary) if binary else ensure_built(minor, progress=progress)
        command = [str(exe)]
        if workdir is not None:
            command += ["--workdir", str(Path(workdir).resolve())]
        if verbosity is not None:
            command += ["--v", str(verbosity)]
        _install_sigterm()
        try:
            proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    start_new_session=True, bufsize=0)
        except OSError as exc:
            raise HarnessUnavailable(f"could not run the rehearsal control plane {exe}: {exc}; remove "
                                     f"{CACHE / 'bin'} and run `make rehearse-build`") from None
        harness = cls(proc, reply_timeout_s=reply_timeout_s)
        try:
            first = harness._wait_reply(None, start_timeout_s, "start")
            if not first.get("ready"):
                raise HarnessError(f"the control plane did not start: {first.get('error') or first}"
                                   f"{harness._stderr_tail()}")
            harness.kubeconfig = Path(first["kubeconfig"])
            harness.version = str(first.get("version", ""))
            harness.start_seconds = float(first.get("startSeconds", 0.0))
        except BaseException:
            harness.close()
            raise
        return harness

    def _read_stdout(self) -> None:
        stream = self._proc.stdout
        for raw in iter(stream.readline, b""):
            try:
                self._replies.put(json.loads(raw))
            except ValueError:
                self._stderr.append("stdout (not JSON): " + raw.decode(errors="replace").rstrip())
        self._replies.put(EOFError())

    def _read_stderr(self) -> None:
        for raw in iter(self._proc.stderr.readline, b""):
            self._stderr.append(raw.decode(errors="replace").rstrip())

    def _stderr_tail(self, lines: int = 15) -> str:
        tail = list(self._stderr)[-lines:]
        return ("\nlast lines of its log:\n" + "\n".join(tail)) if tail else ""

    def _wait_reply(self, request_id: int | None, timeout_s: float, what: str) -> dict:
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self._abort()
                raise HarnessTimeout(f"the control plane did not answer {what} within {timeout_s:g} s; stopped it"
                                     f"{self._stderr_tail()}")
            try:
                reply = self._replies.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue
            if isinstance(reply, EOFError):
                self._replies.put(reply)  # every later call sees the end too
                code = self._proc.poll()
                if code is None:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        code = self._proc.wait(timeout=2)
                self._stderr_reader.join(timeout=2)  # its last words, before quoting them
                raise HarnessError(f"the control plane exited (code {code}) during {what}{self._stderr_tail()}")
            if not isinstance(reply, dict):
                raise HarnessError(f"the control plane answered {what} with {reply!r}, not a JSON object")
            if request_id is None or reply.get("id") == request_id:
                return reply
            # a late reply to an earlier request that timed out on this side: dropped

    def request(self, op: str, *, timeout_s: float | None = None, **fields: Any) -> dict:
        """One request, its reply (ok or not). Raises HarnessError when the process is gone, HarnessTimeout when it
        does not answer within timeout_s."""
        if self._closed:
            raise HarnessError(f"{op}: the control plane was closed")
        with self._lock:
            self._next_id += 1
            request_id = self._next_id
            line = json.dumps({"id": request_id, "op": op, **fields}, separators=(",", ":")) + "\n"
            try:
                self._proc.stdin.write(line.encode())
                self._proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                raise HarnessError(f"{op}: the control plane is not running (exit code {self._proc.poll()})"
                                   f"{self._stderr_tail()}") from None
            return self._wait_reply(request_id, self.reply_timeout_s if timeout_s is None else timeout_s, op)

    def _call(self, op: str, *, timeout_s: float | None = None, **fields: Any) -> dict:
        reply = self.request(op, timeout_s=timeout_s, **fields)
        if not reply.get("ok"):
            raise HarnessError(f"{op}: {reply.get('error') or reply}")
        return reply

    # -- the protocol ----------------------------------------------------------------------------------------
    def apply(self, objects: Iterable[dict]) -> list[ApplyResult]:
        """Server-side apply (field manager "rehearse", force), in order; one result per object."""
        objects = list(objects)
        reply = self._call("apply", objects=objects, timeout_s=self.reply_timeout_s + 2.0 * len(objects))
        return [ApplyResult(ref=str(r.get("ref", "")), ok=bool(r.get("ok")), error=r.get("error"))
                for r in reply.get("results", [])]

    def settle(self, timeout_s: float = 60.0, quiet_ms: int = 500) -> float:
        """Wait until the controllers and the scheduler are done; seconds waited. HarnessTimeout when they are not
        done within timeout_s (the message says what is still moving). Pods whose claim statuses flap (the
        resourceclaim controller's loop before Kubernetes 1.37, kubernetes/kubernetes#138407) do not hold it up;
        they are added to :attr:`flapping` as "namespace/name"."""
        reply = self.request("settle", timeoutSeconds=timeout_s, quietMillis=int(quiet_ms),
                             timeout_s=timeout_s + self.reply_timeout_s)
        self.flapping.update(reply.get("flapping") or ())
        if not reply.get("ok"):
            error = str(reply.get("error") or reply)
            if error.startswith("timeout"):
                raise HarnessTimeout(f"settle: {error}")
            raise HarnessError(f"settle: {error}")
        return float(reply.get("elapsedSeconds", 0.0))

    def list(self, *kinds: str) -> dict[str, list[dict]]:
        """Objects as the API returns them, per kind ("pods", "resourceclaims", "nodes", ...)."""
        reply = self._call("list", kinds=list(kinds))
        items = reply.get("items") or {}
        return {kind: list(items.get(kind) or []) for kind in kinds}

    def delete(self, refs: Iterable[dict], with_pods_on_nodes: bool = False) -> None:
        """Delete objects ({"apiVersion", "kind", "name"[, "namespace"]}) with grace period 0. Deleting a Node also
        deletes its ResourceSlices; with_pods_on_nodes also the pods bound to it (as after a spot reclaim)."""
        self._call("delete", refs=list(refs), withPodsOnNodes=bool(with_pods_on_nodes))

    def reset(self) -> None:
        """Delete everything the rehearsal made; returns when the cluster is empty again."""
        self._call("reset")

    # -- lifetime --------------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return not self._closed and self._proc.poll() is None

    def _abort(self) -> None:
        _kill_group(self._proc, grace_s=2.0)

    def close(self, timeout_s: float = 20.0) -> None:
        """Shut the control plane down (it removes its temporary files); kill its process group if it lingers."""
        if self._closed:
            return
        self._closed = True
        proc = self._proc
        if proc.poll() is None:
            with contextlib.suppress(Exception):
                proc.stdin.write(b'{"id":0,"op":"shutdown"}\n')
                proc.stdin.flush()
            with contextlib.suppress(Exception):
                proc.stdin.close()
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
        else:
            with contextlib.suppress(Exception):
                proc.stdin.close()
        _LIVE.discard(self)

    def __enter__(self) -> Harness:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        with contextlib.suppress(Exception):
            if not self._closed and self._proc.poll() is None:
                _kill_group(self._proc, grace_s=1.0)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m rehearse.control_plane", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("build", "compile", "start", "versions"))
    parser.add_argument("--minor", default=None,
                        help=f"Kubernetes minor (default {DEFAULT_MINOR}; compile: every minor of versions.json)")
    parser.add_argument("--workdir", help="start: keep the kubeconfig in this directory")
    parser.add_argument("--v", type=int, dest="verbosity", help="start: log verbosity of the control plane")
    args = parser.parse_args(argv)
    try:
        if args.command == "versions":
            print(json.dumps(versions(), indent=1))
        elif args.command == "compile":
            for minor in [args.minor] if args.minor and args.minor != "all" else sorted(versions(), key=_minor_key):
                started = time.monotonic()
                compile_minor(minor, progress=lambda line: print(line, file=sys.stderr, flush=True))
                print(f"Kubernetes {minor}: go build and go vet passed ({time.monotonic() - started:.1f} s)",
                      flush=True)
        elif args.command == "build":
            started = time.monotonic()
            path = ensure_built(args.minor or DEFAULT_MINOR, progress=lambda line: print(line, file=sys.stderr, flush=True))
            print(f"{path} ({time.monotonic() - started:.1f} s)")
        else:
            started = time.monotonic()
            with Harness.start(args.minor or DEFAULT_MINOR, args.workdir, verbosity=args.verbosity,
                               progress=lambda line: print(line, file=sys.stderr, flush=True)) as harness:
                print(f"Kubernetes {harness.version} control plane ready in {time.monotonic() - started:.1f} s; "
                      f"kubeconfig: {harness.kubeconfig} (Ctrl-C stops it)", flush=True)
                while harness.running:
                    time.sleep(0.5)
    except HarnessUnavailable as exc:
        print(f"cannot rehearse: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
