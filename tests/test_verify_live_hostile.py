"""make verify's live reads against hostile kubeconfigs, credential plugins and answers.

Every outbound read has a size cap (a 10 GB Content-Length, a gzip bomb) and a deadline that covers the
kubeconfig's exec plugin (one that waits for a sign-in forever); KUBECONFIG is read as kubectl reads it.
"""

from __future__ import annotations

import gzip
import json
import os
import time
from pathlib import Path

import pytest

from tests import verify_fixtures as fixtures
from tests.kube_api_fake import FakeApi
from verify import kubeconfig, live
from verify.__main__ import main


@pytest.fixture(scope="module")
def good() -> dict:
    return fixtures.snapshot()


def _verify(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["--stack", "dev", "--no-simulate", "--json", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _kubeconfig(folder: Path, server: str, user: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "kubeconfig.yaml"
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "fake",
        "clusters": [{"name": "fake", "cluster": {"server": server}}],
        "users": [{"name": "fake", "user": user}],
        "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}]}))
    return path


def test_kubeconfig_list_skips_missing_entries_as_kubectl_does(good, tmp_path, capsys, monkeypatch):
    with FakeApi(good) as api:
        path = api.kubeconfig(tmp_path)
        monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(tmp_path / "missing.yaml"), "", str(path)]))
        code, out, err = _verify(capsys)
    assert code == 0, err
    assert json.loads(out)["source"].startswith("cluster http://127.0.0.1")


def test_kubeconfig_list_of_missing_files_names_them(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'a.yaml'}{os.pathsep}{tmp_path / 'b.yaml'}")
    code, _, err = _verify(capsys)
    assert code == 2 and "none of its files exists" in err and "a.yaml" in err and "b.yaml" in err


def test_a_kubeconfig_path_with_a_colon_is_one_path(good, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    with FakeApi(good) as api:
        path = _kubeconfig(tmp_path / "team:gpu", api.url, {"token": "t"})
        code, _, err = _verify(capsys, "--kubeconfig", str(path))
    assert code == 0, err


def test_merge_first_file_wins_and_relative_paths_follow_their_file(tmp_path):
    first = tmp_path / "one"
    second = tmp_path / "two"
    _kubeconfig(first, "https://first", {"client-certificate": "certs/me.crt", "client-key": "/abs/me.key"})
    _kubeconfig(second, "https://second", {"token": "x"})
    (second / "kubeconfig.yaml").write_text((second / "kubeconfig.yaml").read_text().replace(
        '"current-context": "fake"', '"current-context": "other"'))
    merged = kubeconfig.load([first / "kubeconfig.yaml", second / "kubeconfig.yaml"])
    assert merged["current-context"] == "fake"
    assert [c["cluster"]["server"] for c in merged["clusters"]] == ["https://first"]
    user = merged["users"][0]["user"]
    assert user["client-certificate"] == str(first / "certs" / "me.crt") and user["client-key"] == "/abs/me.key"


def test_a_kubeconfig_key_written_twice_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    path = tmp_path / "kubeconfig.yaml"
    path.write_text("apiVersion: v1\ncurrent-context: a\ncurrent-context: b\n")
    code, _, err = _verify(capsys, "--kubeconfig", str(path))
    assert code == 2 and "written twice" in err and "lines 2 and 3" in err


def _plugin(folder: Path, body: str) -> Path:
    script = folder / "plugin.sh"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return script


def test_an_exec_plugin_that_never_returns_ends_at_the_deadline(good, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    pid_file = tmp_path / "pid"
    script = _plugin(tmp_path, f"echo $$ > {pid_file}\nsleep 600\n")
    path = _kubeconfig(tmp_path / "cfg", "http://127.0.0.1:9", {"exec": {
        "apiVersion": "client.authentication.k8s.io/v1", "command": str(script), "interactiveMode": "Never"}})
    code, _, err = _verify(capsys, "--kubeconfig", str(path), "--deadline", "1.5")
    assert code == 2
    assert "gave no credential within" in err and "plugin.sh" in err and "--deadline" in err
    pid = int(pid_file.read_text())
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the plugin (and its group) was stopped


def test_an_exec_plugin_token_reaches_the_api(good, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    credential = {"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                  "status": {"token": "from-the-plugin"}}
    script = _plugin(tmp_path, f"echo '{json.dumps(credential)}'\n")
    with FakeApi(good) as api:
        path = _kubeconfig(tmp_path / "cfg", api.url, {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1", "command": str(script), "interactiveMode": "Never"}})
        code, _, err = _verify(capsys, "--kubeconfig", str(path))
    assert code == 0, err


def test_an_exec_plugin_that_fails_is_named(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    script = _plugin(tmp_path, "echo 'please run gcloud auth login' >&2\nexit 1\n")
    path = _kubeconfig(tmp_path / "cfg", "http://127.0.0.1:9", {"exec": {"command": str(script)}})
    code, _, err = _verify(capsys, "--kubeconfig", str(path))
    assert code == 2 and "failed (exit 1)" in err and "gcloud auth login" in err


def _huge_length(handler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(10 * 2**30))
    handler.end_headers()
    handler.wfile.write(b'{"items": [')


def _gzip_bomb(size: int):
    body = gzip.compress(b'{"items": [], "pad": "' + b"0" * size + b'"}', compresslevel=9)

    def answer(handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Encoding", "gzip")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
    return answer


@pytest.mark.parametrize("answer, words", [
    (_huge_length, "10,737,418,240 bytes (Content-Length)"),
    (_gzip_bomb(8 * 2**20), "larger than 1,048,576 bytes (decompressed)"),
], ids=["10-GB-content-length", "gzip-bomb"])
def test_an_answer_past_the_size_cap_is_refused(good, tmp_path, capsys, monkeypatch, answer, words):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setattr(live, "MAX_PAGE_BYTES", 2**20)
    with FakeApi(good, raw={"/api/v1/nodes": answer}) as api:
        code, _, err = _verify(capsys, "--kubeconfig", str(api.kubeconfig(tmp_path)), "--deadline", "20")
    assert code == 2 and "cannot check the cluster without Node" in err and words in err, err


def test_an_optional_kind_past_the_cap_is_a_partial_answer(good, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setattr(live, "MAX_PAGE_BYTES", 2**20)
    with FakeApi(good, raw={"/api/v1/events": _gzip_bomb(8 * 2**20)}) as api:
        code, out, err = _verify(capsys, "--kubeconfig", str(api.kubeconfig(tmp_path)))
    assert code == 0, err
    read = [f["message"] for f in json.loads(out)["findings"] if f["check"] == "read"]
    assert any("Event not read" in m and "decompressed" in m for m in read), read
