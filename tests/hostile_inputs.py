"""Tables of hostile inputs and the commands they are tried on, shared by the hostile-input tests.

A new command joins by adding one row to :data:`STACK_COMMANDS` (how to call it on a stack name and a
folder of stack files): every name in :data:`HOSTILE_STACK_NAMES` and every file in
:data:`HOSTILE_STACK_FILES` is then tried on it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from offline_plan.__main__ import main as plan_main
from plan_diff.__main__ import main as diff_main
from preflight.__main__ import main as preflight_main
from simulator.__main__ import main as simulator_main

#: (command, call(stack, stack_dir, project_root) -> exit code)
STACK_COMMANDS: dict[str, Callable[[str, Path, Path], int]] = {
    "plan": lambda stack, stack_dir, root: plan_main(
        ["--stack", stack, "--out", str(root / "build"), "--stack-dir", str(stack_dir), "--no-policy",
         "--no-simulate"]),
    "diff": lambda stack, stack_dir, root: diff_main(
        ["--stack", stack, "--project", str(stack_dir), "--out", str(root / "build")]),
    "simulate": lambda stack, stack_dir, root: simulator_main(["--stack", stack, "--stack-dir", str(stack_dir)]),
    "preflight": lambda stack, stack_dir, root: preflight_main(["--stack", stack, "--stack-dir", str(stack_dir)]),
    "verify": lambda stack, stack_dir, root: _verify_main(
        ["--stack", stack, "--stack-dir", str(stack_dir), "--out", str(root / "build"), "--snapshot",
         str(stack_dir / "no-such-snapshot.json"), "--no-simulate"]),
}

#: Stack names that are paths, or that Pulumi refuses: (id, name).
HOSTILE_STACK_NAMES: dict[str, str] = {
    "parent-package": "../stacks",
    "empty": "",
    "parent-file": "../README.md",
    "two-up": "../../x",
    "absolute": "/tmp/gpu-fungibility-outside",
    "dot": ".",
    "dot-dot": "..",
    "slash": "a/b",
    "backslash": "a\\b",
    "newline": "dev\n",
    "space": "my stack",
    "too-long": "s" * 101,
    "nul": "dev\0x",
}

_LABELS_873K = "".join(f"        k{i}: v\n" for i in range(873_000))


def _alias_bomb(key: str) -> str:
    lines = ["    a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"    a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    return f"config:\n  {key}:\n" + "\n".join(lines) + "\n"


#: Stack files no command may choke on: (id, (bytes, words the error must contain)).
HOSTILE_STACK_FILES: dict[str, tuple[bytes, str]] = {
    "deep-flow-sequence": (("config:\n  gpu-fungibility:cluster: " + "[" * 100_000 + "]" * 100_000 + "\n").encode(),
                           "nested too deep"),
    "deep-block-mapping": (("config:\n  gpu-fungibility:cluster:\n" + "".join(
        "  " * (i + 2) + f"k{i}:\n" for i in range(200))).encode(), "nested too deep"),
    "binary": (bytes(range(256)) * 64, "binary file"),
    "latin-1": ("config:\n  gpu-fungibility:cluster:\n    name: caf\xe9\n".encode("latin-1"), "not UTF-8"),
    "alias-bomb-in-namespace": (_alias_bomb("gpu-fungibility:cluster").encode(), "aliases"),
    "alias-bomb-other-key": (_alias_bomb("aws:anything").encode(), "aliases"),
    "alias-cycle": (b"config:\n  aws:x: &a [*a]\n", "a cycle"),
    "873k-labels": (("config:\n  gpu-fungibility:nodePools:\n    p:\n      labels:\n" + _LABELS_873K).encode(),
                    "at most 1 MiB"),
    "python-tag": (b"config:\n  aws:x: !!python/object/apply:os.system ['true']\n", "not valid YAML"),
    "duplicate-key": (b"config:\n  gpu-fungibility:cluster:\n    name: a\n    name: b\n", "lines 3 and 4"),
    "duplicate-namespace-key": (b"config:\n  aws:region: us-east-1\n  aws:region: us-west-2\n", "written twice"),
    "utf-16-powershell": ("\ufeffconfig:\n  gpu-fungibility:cluster:\n    name: a\n".encode("utf-16-le"),
                          "UTF-16LE text"),
    "utf-16-no-bom": ("config:\n  aws:region: x\n".encode("utf-16-be"), "UTF-16BE"),
}


# ---- output paths -----------------------------------------------------------------------------------------


def _verify_main(argv: list[str]) -> int:
    from verify.__main__ import main

    return main(argv)


@dataclass(frozen=True)
class OutputCommand:
    """A command that writes ``<out>/<stack>/<files>``: ``run(out, snapshot)`` -> exit code (stack ``dev``)."""

    run: Callable[[Path, Path], int]
    files: tuple[str, ...]


#: Every command that writes files (a new one adds a row and inherits every case below).
OUTPUT_COMMANDS: dict[str, OutputCommand] = {
    "plan": OutputCommand(lambda out, snapshot: plan_main(
        ["--stack", "dev", "--out", str(out), "--no-policy", "--no-simulate"]), ("plan.json", "summary.md")),
    "diff": OutputCommand(lambda out, snapshot: diff_main(["--stack", "dev", "--out", str(out)]),
                          ("diff.json", "diff.md")),
    "verify": OutputCommand(lambda out, snapshot: _verify_main(
        ["--stack", "dev", "--snapshot", str(snapshot), "--no-simulate", "--json", "--out", str(out)]),
        ("verify.md",)),
}


def _link(path: Path, target: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)
    return target


#: Output folders a careless or hostile user leaves behind: (id, set up (out, outside, files) -> link target).
#: No case may make a command write into ``outside``; each ends in exit 2 naming the path.
HOSTILE_OUTPUT_PATHS: dict[str, Callable[[Path, Path, tuple[str, ...]], Path]] = {
    "stack-folder-is-a-link": lambda out, outside, files: _link(out / "dev", outside),
    "report-is-a-link": lambda out, outside, files: (
        (out / "dev").mkdir(parents=True), _link(out / "dev" / files[-1], outside / "victim"))[1],
    "failed-folder-is-a-link": lambda out, outside, files: _link(out / "dev.failed", outside),
    "out-is-a-file": lambda out, outside, files: (out.write_text("a file"), outside)[1],
    "stack-folder-is-a-file": lambda out, outside, files: (
        out.mkdir(), (out / "dev").write_text("a file"), outside)[2],
}



# ---- numeric flags ------------------------------------------------------------------------------------------

#: Values no numeric flag may take as a number: (id, value).
HOSTILE_NUMBERS: dict[str, str] = {
    "nan": "nan", "inf": "inf", "minus-inf": "-inf", "zero": "0", "negative": "-1", "overflow": "1e309",
    "empty": "", "word": "soon", "hex": "0x10", "huge": "100000000",
}

#: (command, flag) -> call(value) -> exit code; each refuses every value of HOSTILE_NUMBERS with exit 2
#: (argparse's usage error counts) and a message naming the flag.
NUMERIC_FLAGS: dict[str, Callable[[str], int]] = {
    "simulate --replicas": lambda value: simulator_main(["--stack", "dev", "--replicas", value]),
    "preflight --deadline": lambda value: preflight_main(["--stack", "dev", "--deadline", value]),
    "preflight --call-timeout": lambda value: preflight_main(["--stack", "dev", "--call-timeout", value]),
    "verify --deadline": lambda value: _verify_main(["--stack", "dev", "--deadline", value]),
    "verify --call-timeout": lambda value: _verify_main(["--stack", "dev", "--call-timeout", value]),
}
#: Values a flag takes although they are in HOSTILE_NUMBERS: (command and flag, value id).
NUMBERS_ACCEPTED = {("simulate --replicas", "zero")}

#: Cluster minors newer than the bundled kubernetes-validate schemas (clusters offer them before the package
#: ships their schemas): a plan validates against the newest schemas it has and says so, never a traceback.
#: The next minor after the support calendar's newest (1.37) plans with a warning; further ones (1.99, 1.100)
#: are refused as offered by no cloud (tests/test_newcomer_mistakes.py).
NEWER_KUBERNETES_MINORS = ("1.38",)


# ---- cluster snapshots (make verify --snapshot; the live reads end in the same reader) ---------------------


def _first(snap: dict, kind: str) -> dict:
    return next(i for i in snap["items"] if i["kind"] == kind)


def _set(path: str, value: object, kind: str) -> Callable[[dict], None]:
    """Set ``path`` (dotted) of the first object of ``kind`` to ``value``."""
    def mutate(snap: dict) -> None:
        obj = _first(snap, kind)
        *parents, last = path.split(".")
        for key in parents:
            obj = obj.setdefault(key, {})
        obj[last] = value
    return mutate


def _event_yesterday(snap: dict) -> None:
    pending = next(i for i in snap["items"] if i["kind"] == "Pod" and i["status"]["phase"] == "Pending")
    snap["items"].append({"apiVersion": "v1", "kind": "Event", "reason": "TriggeredScaleUp", "message": "scale-up",
                          "lastTimestamp": "yesterday", "metadata": {"name": "e2", "namespace": "inference"},
                          "involvedObject": {"kind": "Pod", "name": pending["metadata"]["name"]}})


def _slice_of(devices: int) -> Callable[[dict], None]:
    def mutate(snap: dict) -> None:
        spec = _first(snap, "ResourceSlice")["spec"]
        spec["devices"] = [dict(spec["devices"][0], name=f"gpu-{i}") for i in range(devices)]
    return mutate


@dataclass(frozen=True)
class HostileSnapshot:
    """A change to a fixture snapshot (tests/verify_fixtures.VARIANTS[base]) and how verify must end."""

    mutate: Callable[[dict], None]
    code: int  # 2: refused naming the object and field; 0 or 1: read, and the verdict of the base
    words: tuple[str, ...] = ()  # the error (or report) names these
    base: str = "good"


#: Snapshots no reader of cluster data may choke on, accept silently or take minutes over.
HOSTILE_SNAPSHOTS: dict[str, HostileSnapshot] = {
    "slice-100000-devices": HostileSnapshot(_slice_of(100_000), 2, ("ResourceSlice", "spec.devices", "at most 128")),
    "slice-129-devices": HostileSnapshot(_slice_of(129), 2, ("spec.devices", "at most 128")),
    "deployment-10m-replicas": HostileSnapshot(_set("spec.replicas", 10_000_000, "Deployment"), 0,
                                               ("not simulated (10,000,000 replicas",)),
    "replicas-past-int32": HostileSnapshot(_set("spec.replicas", 2**31, "Deployment"), 2, ("spec.replicas", "int32")),
    "replicas-a-string": HostileSnapshot(_set("spec.replicas", "3", "Deployment"), 2, ("Deployment", "spec.replicas")),
    "replicas-negative": HostileSnapshot(_set("spec.replicas", -1, "Deployment"), 2, ("spec.replicas",)),
    "node-listed-twice": HostileSnapshot(lambda snap: snap["items"].append(_first(snap, "Node")), 2,
                                         ("Node", "listed twice")),
    "label-value-with-space": HostileSnapshot(_set("metadata.labels.team", "a b", "Node"), 2,
                                              ("metadata.labels['team']", "not a label value")),
    "label-value-64-chars": HostileSnapshot(_set("metadata.labels.team", "a" * 64, "Node"), 2,
                                            ("not a label value",)),
    "label-value-a-number": HostileSnapshot(_set("metadata.labels.team", 5, "Node"), 2, ("not a string",)),
    "label-key-bad": HostileSnapshot(_set("metadata.labels.a/b/c", "x", "Node"), 2, ("not a label key",)),
    "cpu-a-word": HostileSnapshot(_set("status.allocatable.cpu", "lots", "Node"), 2,
                                  ("status.allocatable.cpu", "not a Kubernetes quantity")),
    "memory-negative": HostileSnapshot(_set("status.allocatable.memory", "-1Gi", "Node"), 2, ("negative",)),
    "memory-1e400": HostileSnapshot(_set("status.allocatable.memory", "1e400", "Node"), 2, ("status.allocatable",)),
    "cpu-a-list": HostileSnapshot(_set("status.allocatable.cpu", [8], "Node"), 2, ("status.allocatable.cpu",)),
    "pod-requests-cpu-zero": HostileSnapshot(
        lambda snap: _first(snap, "Pod")["spec"]["containers"][0]["resources"]["requests"].update(cpu="0"), 0),
    "event-time-yesterday": HostileSnapshot(_event_yesterday, 2, ("Event", "lastTimestamp", "RFC 3339"),
                                            base="pending_memory"),
    "event-time-a-number": HostileSnapshot(_set("lastTimestamp", 1764000000, "Event"), 2, ("lastTimestamp",),
                                           base="pending_memory"),
    "metadata-a-list": HostileSnapshot(_set("metadata", ["x"], "Pod"), 2, ("Pod", "metadata", "not an object")),
    "spec-a-string": HostileSnapshot(_set("spec", "x", "Pod"), 2, ("spec: is a str",)),
    "containers-an-object": HostileSnapshot(_set("spec.containers", {"name": "x"}, "Pod"), 2,
                                            ("spec.containers", "not a list")),
    "no-name": HostileSnapshot(_set("metadata.name", "", "Node"), 2, ("metadata.name", "missing")),
    "name-a-number": HostileSnapshot(_set("metadata.name", 7, "Node"), 2, ("metadata.name",)),
    "claim-results-a-string": HostileSnapshot(
        lambda snap: snap["items"].append({"kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "n"},
                                           "status": {"allocation": {"devices": {"results": "x"}}}}), 2,
        ("ResourceClaim n/c", "results")),
    "item-a-string": HostileSnapshot(lambda snap: snap["items"].append("x"), 2, ("is not an object",)),
    "device-attribute-a-string": HostileSnapshot(
        lambda snap: _first(snap, "ResourceSlice")["spec"]["devices"][0].update(attributes={"type": "gpu"}), 2,
        ("spec.devices[0].attributes['type']", "not an object")),
    "claim-template-devices-a-list": HostileSnapshot(_set("spec.spec.devices", ["x"], "ResourceClaimTemplate"), 2,
                                                     ("ResourceClaimTemplate", "spec.spec.devices")),
    "claim-template-count-a-word": HostileSnapshot(
        lambda snap: _first(snap, "ResourceClaimTemplate")["spec"]["spec"]["devices"]["requests"][0].update(
            count="two"), 2, ("count", "not a device count")),
    "deployment-claims-an-object": HostileSnapshot(_set("spec.template.spec.resourceClaims", {"a": 1}, "Deployment"),
                                                   2, ("spec.template.spec.resourceClaims", "not a list")),
}

#: Snapshot files whose bytes are the problem: (id, (bytes, words the error must contain)).
HOSTILE_SNAPSHOT_FILES: dict[str, tuple[bytes, str]] = {
    "utf-16-powershell": ('\ufeff{"items": []}'.encode("utf-16-le"), "UTF-16LE text"),
    "not-a-list": (b'{"kind": "List"}', "expected the JSON List"),
    "binary": (bytes(range(256)), "binary file"),
}


# ---- AKS values past AKS's documented limits (components/argument_rules.py cites them) ---------------------

#: (id, (text in Pulumi.aks-dev.yaml, its hostile replacement, key path and words the error names)).
HOSTILE_AKS_VALUES: dict[str, tuple[str, str, str]] = {
    "pool-max-100000": ("autoscaling: {min: 1, max: 1}\n      diskSizeGb: 300",
                        "autoscaling: {min: 1, max: 100000}\n      diskSizeGb: 300",
                        "nodePools.a100spot.autoscaling.max: 100000 is more than 1,000"),
    "pool-disk-99999": ("autoscaling: {min: 1, max: 1}\n      diskSizeGb: 300",
                        "autoscaling: {min: 1, max: 1}\n      diskSizeGb: 99999",
                        "nodePools.a100spot.diskSizeGb: 99999 is more than 2,048 GB"),
    "system-max-5000": ("vmSize: Standard_D4ds_v5\n      min: 2\n      max: 3",
                        "vmSize: Standard_D4ds_v5\n      min: 2\n      max: 5000", "cluster.systemPool.max"),
    "system-disk-4096": ("vmSize: Standard_D4ds_v5\n", "vmSize: Standard_D4ds_v5\n      diskSizeGb: 4096\n",
                         "cluster.systemPool.diskSizeGb: 4096"),
    "system-vm-size-unknown": ("vmSize: Standard_D4ds_v5", "vmSize: d4ds", "cluster.systemPool.vmSize: 'd4ds'"),
    "gpu-vm-size-unknown": ("vmSize: Standard_NC8as_T4_v3", "vmSize: Standard_NC8as_T4_v9",
                            "nodePools.t4spot.vmSize"),
    "resource-group-slash": ("    location: eastus2\n    zones", "    location: eastus2\n    resourceGroup: a/b\n    zones",
                             "cluster.resourceGroup: 'a/b' is not a resource group name"),
    "resource-group-trailing-dot": ("    location: eastus2\n    zones",
                                    "    location: eastus2\n    resourceGroup: team.\n    zones",
                                    "cluster.resourceGroup: 'team.'"),
    "resource-group-91-chars": ("    location: eastus2\n    zones",
                                f"    location: eastus2\n    resourceGroup: {'r' * 91}\n    zones",
                                "cluster.resourceGroup"),
}
