"""The rehearsal harness' Python client, without Go: a small fake harness speaks the protocol, a fake `go` builds.

The real control plane is exercised by tests/rehearsal (make test-rehearse).
"""

from __future__ import annotations

import json
import os
import stat
import sys
import textwrap
from pathlib import Path

import pytest

from rehearse import control_plane as client
from rehearse.control_plane import ApplyResult, Harness, HarnessError, HarnessTimeout, HarnessUnavailable

ROOT = Path(__file__).resolve().parent.parent

FAKE_HARNESS = r'''
import json, os, sys, tempfile, time
mode = os.environ.get("FAKE_MODE", "ok")
args = sys.argv[1:]
workdir = args[args.index("--workdir") + 1] if "--workdir" in args else tempfile.mkdtemp(prefix="fake-harness-")
if mode == "crash-at-start":
    print("boom: cannot listen", file=sys.stderr, flush=True)
    sys.exit(3)
if mode == "not-ready":
    print(json.dumps({"ready": False, "error": "etcd did not start"}), flush=True)
    sys.exit(1)
if mode == "silent-start":
    time.sleep(60)
os.makedirs(workdir, exist_ok=True)
kubeconfig = os.path.join(workdir, "kubeconfig")
open(kubeconfig, "w").write("apiVersion: v1\n")
print("log line on stderr", file=sys.stderr, flush=True)
print(json.dumps({"ready": True, "kubeconfig": kubeconfig, "version": "v1.35.4", "startSeconds": 0.1}), flush=True)
seen = []
for line in sys.stdin:
    if not line.strip():
        continue
    req = json.loads(line)
    op, rid = req["op"], req["id"]
    seen.append(op)
    if op == "apply":
        results = []
        for obj in req["objects"]:
            ref = "%s/%s" % (obj["kind"], obj["metadata"]["name"])
            if obj["metadata"]["name"].startswith("bad"):
                results.append({"ref": ref, "ok": False, "error": "DeviceClass.resource.k8s.io \"bad\" is invalid"})
            else:
                results.append({"ref": ref, "ok": True})
        reply = {"id": rid, "ok": True, "results": results}
    elif op == "settle":
        if mode == "settle-timeout":
            reply = {"id": rid, "ok": False, "error": "timeout after 1.0 s: Pod/default/p: not scheduled yet"}
        elif mode == "hang":
            time.sleep(60)
            continue
        else:
            reply = {"id": rid, "ok": True, "elapsedSeconds": 0.25,
                     "echo": [req.get("timeoutSeconds"), req.get("quietMillis")]}
    elif op == "list":
        reply = {"id": rid, "ok": True, "items": {k: [{"kind": "Pod", "seen": seen}] for k in req["kinds"]
                                                  if k != "empty"}}
    elif op == "delete":
        reply = {"id": rid, "ok": True} if req["withPodsOnNodes"] else {"id": rid, "ok": False, "error": "nope"}
    elif op == "reset":
        if mode == "wrong-id":
            print(json.dumps({"id": rid + 100, "ok": True}), flush=True)
            print("not json at all", flush=True)
        reply = {"id": rid, "ok": True}
    elif op == "shutdown":
        print(json.dumps({"id": rid, "ok": True}), flush=True)
        break
    elif op == "die":
        sys.exit(7)
    else:
        reply = {"id": rid, "ok": False, "error": "unknown op %r" % op}
    print(json.dumps(reply), flush=True)
if "--workdir" not in args:
    os.remove(kubeconfig)
    os.rmdir(workdir)
'''


@pytest.fixture
def fake(tmp_path):
    path = tmp_path / "fake-harness"
    path.write_text(f"#!{sys.executable}\n" + FAKE_HARNESS)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def start(fake, monkeypatch, mode="ok", **kwargs):
    monkeypatch.setenv("FAKE_MODE", mode)
    return Harness.start("1.35", binary=fake, **kwargs)


def test_protocol_round_trip(fake, monkeypatch, tmp_path):
    with start(fake, monkeypatch, workdir=tmp_path / "wd") as harness:
        assert harness.version == "v1.35.4"
        assert harness.kubeconfig == (tmp_path / "wd" / "kubeconfig").resolve()
        assert harness.kubeconfig.is_file()
        results = harness.apply([{"kind": "Node", "metadata": {"name": "n1"}},
                                 {"kind": "DeviceClass", "metadata": {"name": "bad-cel"}}])
        assert results[0] == ApplyResult(ref="Node/n1", ok=True, error=None)
        assert not results[1].ok and "is invalid" in results[1].error
        assert harness.settle(timeout_s=5, quiet_ms=100) == 0.25
        listed = harness.list("pods", "empty")
        assert listed["empty"] == [] and listed["pods"][0]["seen"] == ["apply", "settle", "list"]
        harness.delete([{"apiVersion": "v1", "kind": "Node", "name": "n1"}], with_pods_on_nodes=True)
        with pytest.raises(HarnessError, match="delete: nope"):
            harness.delete([{"apiVersion": "v1", "kind": "Node", "name": "n1"}])
        harness.reset()
        with pytest.raises(HarnessError, match="unknown op"):
            harness._call("frobnicate")
    assert not harness.running
    with pytest.raises(HarnessError, match="closed"):
        harness.reset()


def test_settle_timeout_is_harness_timeout(fake, monkeypatch):
    with start(fake, monkeypatch, mode="settle-timeout") as harness:
        with pytest.raises(HarnessTimeout, match="not scheduled yet"):
            harness.settle(timeout_s=1)
        harness.reset()  # still usable afterwards


def test_a_hung_harness_never_hangs_the_caller(fake, monkeypatch):
    harness = start(fake, monkeypatch, mode="hang", reply_timeout_s=0.5)
    with pytest.raises(HarnessTimeout, match="did not answer settle"):
        harness.settle(timeout_s=0.5)
    assert harness._proc.poll() is not None, "the hung process is killed"
    harness.close()


def test_silent_start_times_out(fake, monkeypatch):
    with pytest.raises(HarnessTimeout, match="did not answer start"):
        start(fake, monkeypatch, mode="silent-start", start_timeout_s=0.5)


def test_not_ready_and_crash_name_the_reason(fake, monkeypatch):
    with pytest.raises(HarnessError, match="etcd did not start"):
        start(fake, monkeypatch, mode="not-ready")
    with pytest.raises(HarnessError, match=r"exited \(code 3\)[\s\S]*boom: cannot listen"):
        start(fake, monkeypatch, mode="crash-at-start")


def test_exit_mid_session_and_stray_lines(fake, monkeypatch):
    with start(fake, monkeypatch, mode="wrong-id") as harness:
        harness.reset()  # a reply with another id and a non-JSON line are skipped
        with pytest.raises(HarnessError, match=r"exited \(code 7\)"):
            harness.request("die")
        with pytest.raises(HarnessError):
            harness.reset()


def test_no_files_left_without_workdir(fake, monkeypatch):
    with start(fake, monkeypatch) as harness:
        workdir = harness.kubeconfig.parent
        assert workdir.is_dir()
    assert not workdir.exists()


# -- building ----------------------------------------------------------------------------------------------------

def fake_go(tmp_path: Path, version: str = "go1.26.1", build: str = "ok") -> Path:
    """A `go` command: `go env GOVERSION` prints version; `go build ... -o OUT .` writes OUT (or fails)."""
    path = tmp_path / "go"
    path.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import sys, os, json
        args = sys.argv[1:]
        if args[:2] == ["env", "GOVERSION"]:
            print({version!r}); sys.exit(0)
        if args and args[0] in ("build", "vet"):
            with open(os.environ["FAKE_GO_CALLS"], "a") as calls:
                calls.write(json.dumps(args + ["GOFLAGS=" + os.environ.get("GOFLAGS", "")]) + "\\n")
            if {build!r} == "fail":
                print("some/pkg/x.go:12:3: undefined: frobnicate", file=sys.stderr); sys.exit(1)
            out = args[args.index("-o") + 1] if "-o" in args else os.devnull
            if out != os.devnull:
                open(out, "w").write("#!/bin/sh\\n"); os.chmod(out, 0o755)
            sys.exit(0)
        sys.exit(2)
        """))
    path.chmod(0o755)
    return path


def test_missing_go_is_unavailable_with_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("REHEARSE_GO", raising=False)
    with pytest.raises(HarnessUnavailable, match=r"`go` is not on PATH.*install Go >= 1\.24"):
        client.ensure_built("1.35", cache=tmp_path / "cache", progress=lambda line: None)


def test_old_go_is_unavailable(tmp_path):
    go = fake_go(tmp_path, version="go1.22.5")
    with pytest.raises(HarnessUnavailable, match=r"needs Go >= 1\.24.*go1\.22"):
        client.ensure_built("1.35", go=str(go), cache=tmp_path / "cache", progress=lambda line: None)


def test_build_once_with_one_progress_line(tmp_path, monkeypatch):
    go = fake_go(tmp_path)
    calls = tmp_path / "calls"
    monkeypatch.setenv("FAKE_GO_CALLS", str(calls))
    lines: list[str] = []
    first = client.ensure_built("1.35", go=str(go), cache=tmp_path / "cache", progress=lines.append)
    again = client.ensure_built("1.35", go=str(go), cache=tmp_path / "cache", progress=lines.append)
    assert first == again and first.is_file()
    assert first.name.startswith("harness-v1.35.4-")
    assert lines == ["building the rehearsal control plane for Kubernetes v1.35.4 (first use, a few minutes)..."]
    args = json.loads(calls.read_text().splitlines()[0])
    assert "-modfile=k8s/1.35/go.mod" in args and "k8s1_35" in args and "-trimpath" not in args
    assert "-X k8s.io/component-base/version.gitVersion=v1.35.4" in args[args.index("-ldflags") + 1]


def test_failed_build_quotes_the_log(tmp_path, monkeypatch):
    go = fake_go(tmp_path, build="fail")
    monkeypatch.setenv("FAKE_GO_CALLS", str(tmp_path / "calls"))
    with pytest.raises(HarnessUnavailable, match=r"failed \(exit 1\)[\s\S]*undefined: frobnicate"):
        client.ensure_built("1.35", go=str(go), cache=tmp_path / "cache", progress=lambda line: None)
    assert not list((tmp_path / "cache" / "bin").glob("harness-*"))


def test_source_change_means_a_new_binary(tmp_path, monkeypatch):
    before = client.binary_path("1.35", tmp_path)
    extra = client.SOURCE / "zz_test_only.go"
    try:
        extra.write_text("package main\n")
        assert client.binary_path("1.35", tmp_path) != before
    finally:
        extra.unlink()
    assert client.binary_path("1.35", tmp_path) == before


def test_unknown_minor_names_the_known_ones():
    with pytest.raises(HarnessUnavailable, match=r"Kubernetes 1\.20.*1\.35"):
        client.ensure_built("1.20")
    assert client.minor_of("v1.35.4") == client.minor_of("1.35.2-gke.1") == "1.35"


def test_cli_without_go_exits_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("REHEARSE_GO", raising=False)
    monkeypatch.setattr(client, "CACHE", tmp_path / "cache")
    assert client.main(["build", "--minor", "1.35"]) == 2
    assert "cannot rehearse" in capsys.readouterr().err


# -- versions as data --------------------------------------------------------------------------------------------

def test_each_modfile_matches_versions_json():
    import re

    sys.path.insert(0, str(client.SOURCE))
    try:
        import gen_modfile
    finally:
        sys.path.pop(0)
    table = client.versions()
    assert "1.35" in table
    for minor, patch in table.items():
        modfile = (client.SOURCE / "k8s" / minor / "go.mod").read_text()
        assert (client.SOURCE / "k8s" / minor / "go.sum").is_file()
        assert re.search(rf"^\s*(require\s+)?k8s\.io/kubernetes {re.escape(patch)}$", modfile, re.M), minor
        replaced = dict(re.findall(r"^\s*(k8s\.io/\S+) => \1 (\S+)$", modfile, re.M))
        v0 = gen_modfile.staging_version(patch)
        assert len(replaced) >= 30, f"{minor}: {len(replaced)} staging modules replaced"
        assert set(replaced.values()) == {v0}, minor
        for required in ("k8s.io/api", "k8s.io/apimachinery", "k8s.io/apiserver", "k8s.io/client-go",
                         "k8s.io/kube-scheduler", "k8s.io/dynamic-resource-allocation", "k8s.io/component-base"):
            assert required in replaced, f"{minor}: {required} not replaced"
        # every staging module the build pulls in (v0.0.0 in Kubernetes' own go.mod) is replaced
        for name in re.findall(r"^\s*(k8s\.io/[\w\-./]+) v0\.0\.0(?: // indirect)?$", modfile, re.M):
            assert name in replaced, f"{minor}: {name} required at v0.0.0 but not replaced"


def test_harness_module_is_stdlib_only():
    import ast

    tree = ast.parse(Path(client.__file__).read_text())
    names = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    names |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert names <= set(sys.stdlib_module_names) | {"__future__"}, names - set(sys.stdlib_module_names)


def test_cache_folder_is_ignored():
    assert ".rehearse-cache/" in (ROOT / ".gitignore").read_text().split()


def test_no_ambient_goflags_reach_the_build(tmp_path, monkeypatch):
    """-mod=mod would let go rewrite the generated modfiles, -modfile pick another, -trimpath break the fixtures."""
    go = fake_go(tmp_path)
    calls = tmp_path / "calls"
    monkeypatch.setenv("FAKE_GO_CALLS", str(calls))
    monkeypatch.setenv("GOFLAGS", "-trimpath -mod=mod -modfile=elsewhere/go.mod")
    monkeypatch.setenv("GOWORK", str(tmp_path / "go.work"))
    seen = {}
    real_popen = client.subprocess.Popen

    def spy(cmd, **kwargs):
        if "build" in cmd:
            seen.update(GOFLAGS=kwargs["env"]["GOFLAGS"], GOWORK=kwargs["env"]["GOWORK"])
        return real_popen(cmd, **kwargs)

    monkeypatch.setattr(client.subprocess, "Popen", spy)
    client.ensure_built("1.35", go=str(go), cache=tmp_path / "cache", progress=lambda line: None)
    assert seen == {"GOFLAGS": "-mod=readonly", "GOWORK": "off"}
    assert os.environ["GOFLAGS"] == "-trimpath -mod=mod -modfile=elsewhere/go.mod"  # the caller's is untouched


def test_another_toolchain_means_another_binary(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_GO_CALLS", str(tmp_path / "calls"))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    older = client.ensure_built("1.35", go=str(fake_go(tmp_path / "a", version="go1.26.1")),
                                cache=tmp_path / "cache", progress=lambda line: None)
    newer = client.ensure_built("1.35", go=str(fake_go(tmp_path / "b", version="go1.26.8")),
                                cache=tmp_path / "cache", progress=lambda line: None)
    assert older != newer and newer.is_file()
    assert client.binary_path("1.35", tmp_path / "cache", "go1.26.8") == newer


def test_compile_builds_and_vets_every_minor_against_its_modfile(tmp_path, monkeypatch, capsys):
    go = fake_go(tmp_path)
    calls = tmp_path / "calls"
    monkeypatch.setenv("FAKE_GO_CALLS", str(calls))
    monkeypatch.setenv("REHEARSE_GO", str(go))
    monkeypatch.setenv("GOFLAGS", "-mod=mod")
    assert client.main(["compile"]) == 0
    made = [json.loads(line) for line in calls.read_text().splitlines()]
    minors = sorted(client.versions(), key=lambda m: tuple(map(int, m.split("."))))
    assert [(c[0], c[1]) for c in made] == [(verb, f"-modfile=k8s/{m}/go.mod") for m in minors
                                            for verb in ("build", "vet")]
    assert all("GOFLAGS=-mod=readonly" in c for c in made)
    assert all(c[c.index("-o") + 1] == os.devnull for c in made if c[0] == "build")
    out = capsys.readouterr().out
    assert all(f"Kubernetes {m}: go build and go vet passed" in out for m in minors)


def test_a_minor_that_does_not_compile_fails_compile_quoting_go(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_GO_CALLS", str(tmp_path / "calls"))
    monkeypatch.setenv("REHEARSE_GO", str(fake_go(tmp_path, build="fail")))
    assert client.main(["compile", "--minor", "1.36"]) == 2
    assert "`go build` for Kubernetes 1.36 failed (exit 1)" in capsys.readouterr().err
