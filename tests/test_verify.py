"""``make verify``: the verdicts on snapshot files and, the same, on a Kubernetes-API-shaped server on 127.0.0.1."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from tests import verify_fixtures as fixtures
from tests.kube_api_fake import FakeApi
from verify import live
from verify.__main__ import main
from verify.placement import advice

EXPECTED = {"good": 0, "colocated": 1, "missing_slice": 1, "pending_memory": 1, "drift": 0}
A100_NODE = f"gke-gpu-fungibility-a100-80gb-{fixtures.NODE_SUFFIX}-0000"


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("snapshots")
    paths = {}
    for name, build in fixtures.VARIANTS.items():
        paths[name] = folder / f"{name}.json"
        paths[name].write_text(json.dumps(build()))
    return paths


def _run(capsys, *args: str) -> tuple[int, dict]:
    code = main(["--stack", "dev", "--json", "--no-simulate", *args])
    out = capsys.readouterr().out
    return code, (json.loads(out) if out.strip() else {})


def _failures(report: dict) -> list[dict]:
    return [f for f in report["findings"] if f["severity"] == "failure"]


@pytest.mark.parametrize("variant", sorted(EXPECTED))
def test_snapshot_verdicts(capsys, snapshots, variant):
    code, report = _run(capsys, "--snapshot", str(snapshots[variant]))
    assert code == EXPECTED[variant], report
    assert report["exit_code"] == code


def test_colocated_node_names_node_pool_and_pods(capsys, snapshots):
    _, report = _run(capsys, "--snapshot", str(snapshots["colocated"]))
    [failure] = _failures(report)
    assert failure["check"] == "isolation" and failure["node"] == A100_NODE and failure["pool"] == "a100-80gb"
    assert any("nvidia-gpu-device-plugin" in p for p in failure["pods"])
    assert any("dra-driver-nvidia-gpu-kubelet-plugin" in p for p in failure["pods"])


def test_missing_slice_fails_the_node_and_the_alternative(capsys, snapshots):
    _, report = _run(capsys, "--snapshot", str(snapshots["missing_slice"]))
    failures = _failures(report)
    assert {f["check"] for f in failures} == {"devices"}
    assert any(f["node"] == A100_NODE and "no ResourceSlice" in f["message"] for f in failures)
    assert any("gpu/a100-80gb matches no device" in f["message"] and f["pool"] == "a100-80gb" for f in failures)


def test_pending_for_memory_names_the_pod_and_what_to_change(capsys, snapshots):
    _, report = _run(capsys, "--snapshot", str(snapshots["pending_memory"]))
    [failure] = _failures(report)
    assert failure["check"] == "replicas" and failure["pods"][0].endswith("-99999")
    assert "Insufficient memory" in failure["message"] and "resources" in failure["message"]
    assert "a100-80gb" in failure["pool"]


def test_drift_is_a_warning_with_the_numbers(capsys, snapshots):
    code, report = _run(capsys, "--snapshot", str(snapshots["drift"]))
    assert code == 0
    [warning] = [f for f in report["findings"] if f["check"] == "drift" and f["severity"] == "warning"]
    assert warning["node"] == A100_NODE and "158579 MiB" in warning["message"] and "160627 MiB" in warning["message"]


def test_good_snapshot_with_the_simulator_and_the_table(capsys, snapshots):
    assert main(["--stack", "dev", "--snapshot", str(snapshots["good"])]) == 0
    out = capsys.readouterr().out
    assert "every promise holds" in out and "make simulate predicts #1 a100-80gb gpu/a100-80gb tp=1" in out
    from stacks.stack_files import build_dir

    report = (build_dir("dev") / "verify.md").read_text()
    assert "**Verdict:** every promise holds" in report and "| ok | gke-gpu-fungibility-a100-80gb" in report


def test_an_isolation_breach_is_found_by_the_device_plugin_label_alone(capsys, snapshots, tmp_path):
    snap = fixtures.snapshot()
    snap["items"].append(fixtures.plugin_pod("device-plugin", A100_NODE))
    path = tmp_path / "chart-plugin.json"
    path.write_text(json.dumps(snap))
    code, report = _run(capsys, "--snapshot", str(path))
    assert code == 1 and _failures(report)[0]["node"] == A100_NODE


@pytest.mark.parametrize("content, needle", [
    ("[" * 100_000 + "]" * 100_000, "nested too deep"),
    ("{not json", "not valid JSON"),
    ("\x00\x01binary", "NUL"),
    ('{"kind": "Pod"}', "expected the JSON List"),
])
def test_bad_snapshots_exit_2_with_the_file_named(capsys, tmp_path, content, needle):
    path = tmp_path / "snap.json"
    path.write_text(content)
    assert main(["--stack", "dev", "--snapshot", str(path)]) == 2
    err = capsys.readouterr().err
    assert needle in err and str(path) in err and "Traceback" not in err


def test_snapshot_size_limit(tmp_path):
    import input_files
    from verify.snapshot import ReadError, read_snapshot

    path = tmp_path / "big.json"
    path.write_text(json.dumps({"items": []}) + " " * 20)
    with pytest.raises(ReadError, match="at most 10 bytes is read"):
        read_snapshot(path, input_files.Limits(max_bytes=10))


@pytest.mark.parametrize("stack", ["../etc", "no-such-stack"])
def test_bad_stack_exits_2(capsys, stack):
    try:
        code = main(["--stack", stack, "--snapshot", "x.json"])
    except SystemExit as exited:  # a name that is a path: argparse's usage error
        code = exited.code
    assert code == 2
    assert "--stack" in capsys.readouterr().err


def test_advice_maps_scheduler_reasons():
    assert "resources" in advice("0/2 nodes are available: 2 Insufficient cpu.")
    assert "autoscaling.max" in advice("0/1 nodes are available: 1 cannot allocate all claims.")
    assert advice("0/1 nodes are available: 1 node(s) had untolerated taint {x: y}.") is None


# ---- the live path, against the loopback API server ---------------------------------------------


@pytest.mark.parametrize("variant", sorted(EXPECTED))
def test_live_gives_the_snapshot_verdicts(capsys, snapshots, tmp_path, monkeypatch, variant):
    monkeypatch.setattr(live, "PAGE", 2)  # several pages per kind
    snap = json.loads(snapshots[variant].read_text())
    _, offline = _run(capsys, "--snapshot", str(snapshots[variant]))
    with FakeApi(snap) as api:
        code, report = _run(capsys, "--kubeconfig", str(api.kubeconfig(tmp_path)))
    assert code == EXPECTED[variant]
    assert [(f["check"], f["severity"], f["message"]) for f in report["findings"]] == \
        [(f["check"], f["severity"], f["message"]) for f in offline["findings"]]
    assert {method for method, _ in api.requests} == {"GET"}  # read-only
    assert api.pages["Pod"] > 1  # followed `continue`


def test_live_forbidden_group_is_a_partial_answer(capsys, snapshots, tmp_path):
    with FakeApi(json.loads(snapshots["colocated"].read_text()), forbidden=("/apis/resource.k8s.io/",)) as api:
        code, report = _run(capsys, "--kubeconfig", str(api.kubeconfig(tmp_path)))
    assert code == 1  # isolation is still checked and still broken
    reads = [f["message"] for f in report["findings"] if f["check"] == "read"]
    assert any("`list resourceslices` in API group resource.k8s.io" in m for m in reads)
    assert any("not checked" in f["message"] for f in report["findings"] if f["check"] == "devices")


def test_live_a_cluster_without_dra_is_named_before_anything_else(capsys, snapshots, tmp_path):
    with FakeApi(json.loads(snapshots["good"].read_text()), dra_served=False) as api:
        assert main(["--stack", "dev", "--kubeconfig", str(api.kubeconfig(tmp_path))]) == 2
    assert "DRA is not served: /apis/resource.k8s.io/v1 answers 404" in capsys.readouterr().err
    assert api.requests[0] == ("GET", "/apis/resource.k8s.io/v1")
    assert len(api.requests) == 1  # nothing else is read


def test_live_everything_forbidden_exits_2(capsys, snapshots, tmp_path):
    with FakeApi(json.loads(snapshots["good"].read_text()), forbidden=("/api", "/apis")) as api:
        assert main(["--stack", "dev", "--kubeconfig", str(api.kubeconfig(tmp_path))]) == 2
    assert "nothing could be read" in capsys.readouterr().err


def test_live_unauthorized_exits_2(capsys, snapshots, tmp_path):
    with FakeApi(json.loads(snapshots["good"].read_text()), unauthorized=True) as api:
        assert main(["--stack", "dev", "--kubeconfig", str(api.kubeconfig(tmp_path))]) == 2
    assert "unauthorized (401)" in capsys.readouterr().err


def test_live_unreachable_exits_2(capsys, tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = tmp_path / "kubeconfig.yaml"
    config.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    assert main(["--stack", "dev", "--kubeconfig", str(config), "--call-timeout", "2"]) == 2
    err = capsys.readouterr().err
    assert "unreachable" in err and f"127.0.0.1:{port}" in err and "Traceback" not in err


def test_no_kubeconfig_says_how_to_give_one(capsys, monkeypatch):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setattr(live.shutil, "which", lambda name: None)
    assert main(["--stack", "dev"]) == 2
    assert "--kubeconfig FILE" in capsys.readouterr().err


def test_a_node_s_pool_comes_from_its_cloud_s_label():
    from gpu_fungibility import clouds

    from verify.snapshot import Node
    from verify.stack import load_stack

    assert clouds.profile("gke").node_pool_label == "cloud.google.com/gke-nodepool"
    assert clouds.profile("eks").node_pool_label == "eks.amazonaws.com/nodegroup"
    eks = load_stack("eks-dev", Path(__file__).resolve().parent.parent)
    pool = next(iter(eks.pools))
    group = f"{eks.config.cluster.name}-{pool}"
    assert eks.pool_of(Node("n", {"eks.amazonaws.com/nodegroup": group}, (0, 0), {})) == pool
    assert eks.pool_of(Node("n", {"cloud.google.com/gke-nodepool": pool}, (0, 0), {})) == ""


@pytest.mark.parametrize("stack, pool", [("eks-dev", "l40s"), ("prod", "a100-80gb-ondemand"), ("aks-dev", "a100spot")])
def test_the_other_shipped_stacks_good_clusters_hold(capsys, tmp_path, stack, pool):
    path = tmp_path / f"{stack}.json"
    path.write_text(json.dumps(fixtures.snapshot(stack)))
    code = main(["--stack", stack, "--json", "--no-simulate", "--snapshot", str(path)])
    report = json.loads(capsys.readouterr().out)
    assert code == 0, _failures(report)
    assert not [f for f in report["findings"] if f["severity"] == "warning" and f["check"] == "replicas"]
    assert any(f["check"] == "isolation" and f["severity"] == "ok" and f["pool"] == pool
               for f in report["findings"])


@pytest.mark.parametrize("change, needle", [
    ("remove", "runs no NVIDIA DRA kubelet plugin pod"),
    ("pending", "is not Running"),
])
def test_a_dra_node_without_a_running_plugin_fails(capsys, tmp_path, change, needle):
    snap = fixtures.snapshot()
    plugin = next(i for i in snap["items"] if i["kind"] == "Pod" and i["spec"].get("nodeName") == A100_NODE
                  and i["metadata"]["labels"].get("dra-driver-nvidia-gpu-component") == "kubelet-plugin")
    if change == "remove":
        snap["items"].remove(plugin)
    else:
        plugin["status"]["phase"] = "Pending"
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(snap))
    code, report = _run(capsys, "--snapshot", str(path))
    assert code == 1
    [failure] = _failures(report)
    assert needle in failure["message"] and failure["node"] == A100_NODE and failure["pool"] == "a100-80gb"


def test_live_slow_server_ends_at_the_deadline(capsys, snapshots, tmp_path):
    with FakeApi(json.loads(snapshots["good"].read_text()), delay=1.0) as api:
        code = main(["--stack", "dev", "--kubeconfig", str(api.kubeconfig(tmp_path)),
                     "--call-timeout", "0.3", "--deadline", "1.5"])
    assert code == 2
    err = capsys.readouterr().err
    assert ("nothing could be read" in err or "cannot check the cluster" in err) and "deadline" in err


def test_an_aks_dra_node_running_the_device_plugin_fails(capsys, tmp_path):
    snap = fixtures.snapshot("aks-dev")
    node = next(i["metadata"]["name"] for i in snap["items"] if i["kind"] == "Node"
                and i["metadata"]["labels"].get("kubernetes.azure.com/agentpool") == "a100spot")
    snap["items"].append(fixtures.plugin_pod("device-plugin", node))
    path = tmp_path / "aks.json"
    path.write_text(json.dumps(snap))
    code = main(["--stack", "aks-dev", "--json", "--no-simulate", "--snapshot", str(path)])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert any(f["node"] == node and f["pool"] == "a100spot" for f in _failures(report))


@pytest.fixture()
def quick_backoff(monkeypatch):
    monkeypatch.setattr("verify.live.CallPolicy.backoff", lambda self, retry: 0.01)


def test_live_throttled_and_unavailable_answers_are_retried(capsys, snapshots, tmp_path, quick_backoff):
    with FakeApi(json.loads(snapshots["good"].read_text()), refusals=(429, 503)) as api:
        code = main(["--stack", "dev", "--kubeconfig", str(api.kubeconfig(tmp_path)), "--json", "--no-simulate"])
        report = json.loads(capsys.readouterr().out)
    assert code == 0, _failures(report)
    assert not [f for f in report["findings"] if f["check"] == "read"]
    assert api.seen["/api/v1/nodes"] == 3  # 429, 503, then the answer


def test_live_a_kind_that_keeps_failing_is_a_partial_answer(capsys, snapshots, tmp_path, quick_backoff):
    with FakeApi(json.loads(snapshots["good"].read_text()), refusals=(503,) * 4) as api:
        code = main(["--stack", "dev", "--kubeconfig", str(api.kubeconfig(tmp_path))])
    assert code == 2  # nodes and pods are required: they are what never answered
    err = capsys.readouterr().err
    assert "server error" in err and "gave up after 4 attempts" in err and "Traceback" not in err


def test_live_a_trickling_answer_ends_at_the_deadline(capsys, snapshots, tmp_path):
    with FakeApi(json.loads(snapshots["good"].read_text()), trickle=0.05) as api:
        code = main(["--stack", "dev", "--kubeconfig", str(api.kubeconfig(tmp_path)),
                     "--call-timeout", "0.5", "--deadline", "2"])
    assert code == 2  # each byte comes well within the socket timeout: only the deadline stops it
    err = capsys.readouterr().err
    assert "deadline" in err and "Traceback" not in err


def test_the_newest_scheduler_event_counts_also_for_a_repeated_one():
    from verify.snapshot import build_view

    def event(message, **times):
        return {"kind": "Event", "metadata": {"namespace": "inference", "name": message[:8],
                                              "creationTimestamp": "2026-01-01T00:00:00Z"},
                "involvedObject": {"kind": "Pod", "name": "p"}, "reason": "FailedScheduling",
                "message": message, **times}

    old = event("old: Insufficient memory", lastTimestamp="2026-01-01T00:05:00Z")
    repeated = event("new: cannot allocate all claims", eventTime="2026-01-01T00:01:00.000000Z",
                     series={"count": 7, "lastObservedTime": "2026-01-01T00:09:00.000000Z"})
    view = build_view([old, repeated], source="test")
    assert max(view.events, key=lambda e: e.order).message.startswith("new")


def test_a_mig_node_is_checked_on_its_slices_and_their_real_memory():
    from gpu_fungibility import catalog, devices

    from verify.checks import compare_devices

    model = catalog.GPUS["nvidia-h100-80gb"]
    _, expected = devices.published("c", "n", model.type, 2, ["3g.40gb", "1g.10gb"])
    assert compare_devices(expected, expected, model) == ([], [])
    # the node cut its GPUs into 1g.10gb slices only: the 3g.40gb the claims ask for is missing
    _, other = devices.published("c", "n", model.type, 2, ["1g.10gb"])
    problems, _ = compare_devices(expected, other, model)
    assert any("no 3g.40gb slice" in p for p in problems), problems
    # a driver that reported the nominal 10 GiB would be told apart from the real 9984Mi
    nominal = [{**e, "capacity": {**e["capacity"], "memory": {"value": "10Gi"}}} for e in expected]
    _, warnings = compare_devices(expected, nominal, model)
    assert warnings and "1g.10gb: 9984Mi" in warnings[0]
    # whole GPUs where slices were expected: no slice at all
    _, whole = devices.published("c", "n", model.type, 2)
    assert compare_devices(expected, whole, model)[0]
