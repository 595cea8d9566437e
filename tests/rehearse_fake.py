"""A stand-in for the rehearsal harness (rehearse/control_plane.py) that needs no Go: a small API server in a dict.

It speaks the harness's Python interface (apply, settle, list, delete, reset) and does just enough of the
controllers' and scheduler's work for the rehearsal's logic to be exercised: DaemonSets get one bound pod per
node their placement admits; Deployments get their replicas; a pending pod goes to the first node (by name)
whose labels, taints, CPU/memory room and devices take it, with its claim allocated to the first
``firstAvailable`` alternative that fits there. It is not Kubernetes: the real decisions are the harness's.
"""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass
from typing import Any

from gpu_fungibility import sizing
from gpu_fungibility.dra_cel import Device, matches
from gpu_fungibility.node_selection import NodeTaint, PodPlacement, evaluate

KINDS = {"nodes": "Node", "pods": "Pod", "resourceclaims": "ResourceClaim", "resourceslices": "ResourceSlice",
         "deviceclasses": "DeviceClass", "daemonsets": "DaemonSet", "deployments": "Deployment", "events": "Event"}


@dataclass
class Result:
    ref: str
    ok: bool
    error: str | None = None


class FakeHarness:
    version = "v0.0.0-fake"
    kubeconfig = "/nonexistent/kubeconfig"

    def __init__(self, refuse: dict[str, str] | None = None, allow_privileged: bool = True):
        self.objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.refuse = refuse or {}  # kind/name -> the error the fake server answers
        self.allow_privileged = allow_privileged  # False: refuse privileged containers as kube-apiserver does
        self.counter = itertools.count(1)
        self.calls: list[str] = []

    # ---- the harness interface ----
    def apply(self, objects: list[dict[str, Any]]) -> list[Result]:
        results = []
        for obj in objects:
            meta = obj.get("metadata") or {}
            ref = "/".join(x for x in (obj["kind"], meta.get("namespace"), meta["name"]) if x)
            if f"{obj['kind']}/{meta['name']}" in self.refuse:
                results.append(Result(ref, False, self.refuse[f"{obj['kind']}/{meta['name']}"]))
                continue
            privileged = [f"spec.template.spec.{k}[{i}].securityContext.privileged: Forbidden: disallowed by cluster "
                          "policy" for k in ("initContainers", "containers")
                          for i, c in enumerate(((obj.get("spec") or {}).get("template") or {}).get("spec", {}).get(k) or [])
                          if (c.get("securityContext") or {}).get("privileged")]
            if privileged and not self.allow_privileged:
                results.append(Result(ref, False, f'{obj["kind"]}.apps "{meta["name"]}" is invalid: [{", ".join(privileged)}]'))
                continue
            key = (obj["kind"], meta.get("namespace") or "", meta["name"])
            stored = copy.deepcopy(obj)
            stored["metadata"].setdefault("creationTimestamp", f"{next(self.counter):08d}")
            self.objects[key] = stored
            results.append(Result(ref, True))
        self.calls.append("apply")
        return results

    def settle(self, timeout_s: float = 60.0, quiet_ms: int = 500) -> float:
        self._daemonsets()
        self._deployments()
        self._schedule()
        return 0.0

    def list(self, *kinds: str) -> dict[str, list[dict[str, Any]]]:
        return {k: [copy.deepcopy(o) for (kind, _, _), o in sorted(self.objects.items()) if kind == KINDS[k]]
                for k in kinds}

    def delete(self, refs: list[dict[str, Any]], with_pods_on_nodes: bool = False) -> None:
        for ref in refs:
            self.objects.pop((ref["kind"], ref.get("namespace") or "", ref["name"]), None)
            if ref["kind"] == "Pod":
                self._drop_claims(ref.get("namespace") or "", ref["name"])
            if ref["kind"] == "Node" and with_pods_on_nodes:
                for key, pod in list(self.objects.items()):
                    if key[0] == "Pod" and pod["spec"].get("nodeName") == ref["name"]:
                        del self.objects[key]
                        self._drop_claims(key[1], key[2])

    def reset(self) -> None:
        self.objects.clear()

    # ---- the controllers ----
    def _of(self, kind: str) -> list[dict[str, Any]]:
        return [o for (k, _, _), o in sorted(self.objects.items()) if k == kind]

    def _pod(self, namespace: str, name: str, template: dict[str, Any], owner: tuple[str, str]) -> dict[str, Any]:
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"namespace": namespace, "name": name, "labels": dict(template["metadata"]["labels"]),
                            "creationTimestamp": f"{next(self.counter):08d}",
                            "ownerReferences": [{"kind": owner[0], "name": owner[1], "controller": True}]},
               "spec": copy.deepcopy(template["spec"]), "status": {"phase": "Pending"}}
        self.objects[("Pod", namespace, name)] = pod
        return pod

    def _daemonsets(self) -> None:
        for ds in self._of("DaemonSet"):
            meta, spec = ds["metadata"], ds["spec"]["template"]["spec"]
            placement = PodPlacement(spec.get("nodeSelector") or {}, spec.get("affinity"), spec.get("tolerations") or [])
            for node in self._of("Node"):
                name = f"{meta['name']}-{node['metadata']['name']}"
                if ("Pod", meta["namespace"], name) in self.objects:
                    continue
                if evaluate(placement, node["metadata"].get("labels") or {}, _taints(node)).runs:
                    pod = self._pod(meta["namespace"], name, ds["spec"]["template"], ("DaemonSet", meta["name"]))
                    pod["spec"]["nodeName"] = node["metadata"]["name"]

    def _deployments(self) -> None:
        for deployment in self._of("Deployment"):
            meta = deployment["metadata"]
            rs = f"{meta['name']}-rs"
            pods = [o for (k, ns, _), o in sorted(self.objects.items(), key=lambda kv: kv[1]["metadata"].get(
                "creationTimestamp", "")) if k == "Pod" and ns == meta["namespace"]
                and o["metadata"]["ownerReferences"][0]["name"] == rs]
            want = deployment["spec"].get("replicas", 1)
            for pod in pods[want:]:
                self.delete([{"kind": "Pod", "namespace": meta["namespace"], "name": pod["metadata"]["name"]}])
            for _ in range(want - len(pods)):
                self._pod(meta["namespace"], f"{meta['name']}-{next(self.counter)}", deployment["spec"]["template"],
                          ("ReplicaSet", rs))

    def _drop_claims(self, namespace: str, pod: str) -> None:
        for key in [k for k in self.objects if k[0] == "ResourceClaim" and k[1] == namespace
                    and k[2].startswith(f"{pod}-")]:
            del self.objects[key]

    # ---- the scheduler ----
    def _schedule(self) -> None:
        for pod in self._of("Pod"):
            if pod["spec"].get("nodeName"):
                continue
            reasons = []
            for node in self._of("Node"):
                why = self._fits(pod, node)
                if why is None:
                    break
                reasons.append(why)
            else:
                counts: dict[str, int] = {}
                for r in reasons:
                    counts[r] = counts.get(r, 0) + 1
                text = ", ".join(f"{n} {r}" for r, n in sorted(counts.items()))
                pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                                "message": f"0/{len(reasons)} nodes are available: {text}."}]

    def _fits(self, pod: dict[str, Any], node: dict[str, Any]) -> str | None:
        spec = pod["spec"]
        labels = node["metadata"].get("labels") or {}
        if not evaluate(PodPlacement(spec.get("nodeSelector") or {}, spec.get("affinity"), spec.get("tolerations") or []),
                        labels, _taints(node)).runs:
            return "node(s) didn't match Pod's node affinity/selector"
        cpu, memory = _requests(pod)
        used = [_requests(p) for p in self._of("Pod") if p["spec"].get("nodeName") == node["metadata"]["name"]]
        room = node["status"]["allocatable"]
        if cpu + sum(u[0] for u in used) > sizing.parse_cpu(room["cpu"]):
            return "Insufficient cpu"
        if memory + sum(u[1] for u in used) > sizing.parse_memory(room["memory"]):
            return "Insufficient memory"
        allocation = self._allocate(pod, node)
        if allocation is None:
            return "cannot allocate all claims"
        for entry, results in allocation.items():
            name = f"{pod['metadata']['name']}-{entry}"
            self.objects[("ResourceClaim", pod["metadata"]["namespace"], name)] = {
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"namespace": pod["metadata"]["namespace"], "name": name},
                "status": {"allocation": {"devices": {"results": results}}}}
            pod["status"].setdefault("resourceClaimStatuses", []).append({"name": entry, "resourceClaimName": name})
        spec["nodeName"] = node["metadata"]["name"]
        pod["status"].pop("conditions", None)
        return None

    def _allocate(self, pod: dict[str, Any], node: dict[str, Any]) -> dict[str, list[dict[str, Any]]] | None:
        taken = {(r["pool"], r["device"]) for c in self._of("ResourceClaim")
                 for r in c["status"]["allocation"]["devices"]["results"]}
        slices = [s for s in self._of("ResourceSlice") if s["spec"].get("nodeName") == node["metadata"]["name"]]
        free = [(s["spec"]["driver"], s["spec"]["pool"]["name"], d) for s in slices for d in s["spec"]["devices"]
                if (s["spec"]["pool"]["name"], d["name"]) not in taken]
        allocation: dict[str, list[dict[str, Any]]] = {}
        for entry in pod["spec"].get("resourceClaims") or []:
            template = self.objects.get(("ResourceClaimTemplate", pod["metadata"]["namespace"],
                                         entry["resourceClaimTemplateName"]))
            if template is None:
                return None
            results: list[dict[str, Any]] = []
            for request in template["spec"]["spec"]["devices"]["requests"]:
                options = request.get("firstAvailable") or [{**request["exactly"], "name": None}]
                for option in options:
                    picked = [f for f in free if self._matches(option, f[0], f[2])]
                    count = len(picked) if option.get("allocationMode") == "All" else option.get("count", 1)
                    if picked and len(picked) >= count:
                        label = f"{request['name']}/{option['name']}" if option.get("name") else request["name"]
                        for driver, pool, device in picked[:count]:
                            results.append({"request": label, "driver": driver, "pool": pool, "device": device["name"]})
                            free.remove((driver, pool, device))
                        break
                else:
                    return None
            allocation[entry["name"]] = results
        return allocation

    def _matches(self, option: dict[str, Any], driver: str, device: dict[str, Any]) -> bool:
        cls = self.objects.get(("DeviceClass", "", option["deviceClassName"]))
        if cls is None:
            return False
        seen = Device.from_slice_device(driver, device)
        expressions = [s["cel"]["expression"] for s in (cls["spec"].get("selectors") or [])]
        expressions += [s["cel"]["expression"] for s in option.get("selectors") or []]
        return all(matches(e, seen) for e in expressions)


def _taints(node: dict[str, Any]) -> list[NodeTaint]:
    return [NodeTaint(t["key"], t.get("value", ""), t["effect"]) for t in node["spec"].get("taints") or []]


def _requests(pod: dict[str, Any]) -> tuple[int, int]:
    cpu = memory = 0
    for container in pod["spec"].get("containers") or []:
        requests = (container.get("resources") or {}).get("requests") or {}
        cpu += sizing.parse_cpu(str(requests["cpu"])) if requests.get("cpu") else 0
        memory += sizing.parse_memory(str(requests["memory"])) if requests.get("memory") else 0
    return cpu, memory
