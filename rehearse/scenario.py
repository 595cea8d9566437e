"""A stack's rehearsal scenario: its plan, its pools, its plugins, and the simulator's predictions.

:func:`load` plans the stack in-process (the objects ``make plan`` writes to ``build/<stack>/manifests/``) and
derives everything the rehearsal applies besides the plan's own objects (:mod:`rehearse.cluster`). Tests
change a loaded scenario (a plugin's placement, a claim's selector, a pod's requests) to seed a broken stack.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rehearse import cluster

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Manifest:
    """One object of the plan, under the file name ``make plan`` gives it."""

    filename: str
    obj: dict[str, Any]

    @property
    def ref(self) -> str:
        meta = self.obj.get("metadata") or {}
        where = f"{meta['namespace']}/" if meta.get("namespace") else ""
        return f"{self.obj.get('kind')}/{where}{meta.get('name')}"


@dataclass
class Scenario:
    stack: str
    cfg: Any  # stacks.config.StackConfig
    manifests: list[Manifest]
    releases: list[Any]  # policies.charts.DriverRelease, effective values
    plugins: list[cluster.Plugin]
    nfd_labels_gpus: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def cloud(self) -> str:
        return self.cfg.cluster.cloud

    @property
    def minor(self) -> str:
        return self.cfg.cluster.minor_version

    def objects(self) -> list[dict[str, Any]]:
        """The plan's Kubernetes objects, as the simulator reads them."""
        return [m.obj for m in self.manifests]

    def nodes(self) -> cluster.NodeFactory:
        return cluster.NodeFactory(self.cfg, self.nfd_labels_gpus)

    def workloads(self) -> list[Any]:
        """The simulator's pod specs, one per Deployment with claims, in the plan's order."""
        from simulator.workloads import pod_specs

        return pod_specs(self.cfg, self.objects())

    def deployment(self, workload: str) -> Manifest:
        from simulator.workloads import INSTANCE_LABEL

        for m in self.manifests:
            labels = (m.obj.get("metadata") or {}).get("labels") or {}
            if m.obj.get("kind") == "Deployment" and (labels.get(INSTANCE_LABEL) or m.obj["metadata"]["name"]) == workload:
                return m
        raise KeyError(workload)

    def plugin(self, kind: str) -> cluster.Plugin:
        return next(p for p in self.plugins if p.kind == kind)


def load(stack: str, stack_dir: Path = ROOT) -> Scenario:
    """Plan the stack in-process and build its scenario; raises FileNotFoundError / ConfigError like the planner."""
    from offline_plan import manifests as manifest_mod
    from offline_plan.model import driver_releases
    from offline_plan.run import run_stack_file

    with contextlib.redirect_stdout(io.StringIO()):
        run = run_stack_file(stack, stack_dir)
    found = [Manifest(m.filename, m.obj) for m in manifest_mod.manifests(run)]
    releases = driver_releases(run)
    nfd = any(r.labels_gpu_nodes_with_nfd() for r in releases)
    return Scenario(stack, run.config, found, releases,
                    cluster.plugin_daemonsets(run.config.cluster.cloud, releases), nfd)
