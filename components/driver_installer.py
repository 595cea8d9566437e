"""The NVIDIA driver installer for GKE COS nodes whose pools disable GKE's driver installation.

Seed 000 applies Google's preloaded-installer DaemonSet from a moving branch;
this is the project's own, typed equivalent with every image fixed in config
(``drivers.nvidiaDriverInstaller``):

- an init container runs the installer GKE preloads on each COS GPU node
  (``cos-nvidia-installer:fixed``, never pulled: it matches the node's COS
  build) and installs the driver into ``/home/kubernetes/bin/nvidia`` on the
  host, the root the NVIDIA DRA driver is pointed at;
- a second init container applies GPU partitioning (MIG) from ``/etc/nvidia``;
- a pause container keeps the pod (and so the finished installation) alive.

Unlike the upstream file (``tolerations: [{operator: Exists}]`` on every
``gke-accelerator`` node), the pods select exactly the pools that need them
(``cloud.google.com/gke-nodepool In [...]``, plus ``gke-accelerator`` present
and no GKE-managed driver version label) and tolerate exactly those pools' taints.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from components import dra_wiring
from components.dra_wiring import GKE_ACCELERATOR, GKE_NODEPOOL, NodeTaint
from components.nvidia_dra import tolerations_for
from stacks.config import DriverInstaller, StackConfig

NAME = "nvidia-driver-installer"
NAMESPACE = "kube-system"
GKE_DRIVER_VERSION_LABEL = "cloud.google.com/gke-gpu-driver-version"
HOST_INSTALL_DIR = "/home/kubernetes/bin/nvidia"
CONTAINER_INSTALL_DIR = "/usr/local/nvidia"
HOST_VULKAN_DIR = f"{HOST_INSTALL_DIR}/vulkan/icd.d"
HOST_COS_TOOLS = "/var/lib/cos-tools"
LABELS = {"k8s-app": NAME}


@dataclass(frozen=True)
class NvidiaDriverInstallerArgs:
    """``pools``: GKE node pool names whose driver the stack installs; ``taints``: taints on their nodes."""

    images: DriverInstaller
    pools: tuple[str, ...]
    taints: tuple[NodeTaint, ...] = field(default_factory=tuple)

    @classmethod
    def for_pools(cls, cfg: StackConfig, pools: list[str]) -> NvidiaDriverInstallerArgs:
        taints: list[NodeTaint] = []
        for pool_name in pools:
            taints += [t for t in dra_wiring.node_taints(cfg, pool_name) if t not in taints]
        return cls(images=cfg.drivers.nvidia_driver_installer, pools=tuple(pools), taints=tuple(taints))


def _host_volume(name: str, path: str) -> k8s.core.v1.VolumeArgs:
    return k8s.core.v1.VolumeArgs(name=name, host_path=k8s.core.v1.HostPathVolumeSourceArgs(path=path))


def _mount(name: str, path: str) -> k8s.core.v1.VolumeMountArgs:
    return k8s.core.v1.VolumeMountArgs(name=name, mount_path=path)


def _env(values: dict[str, str]) -> list[k8s.core.v1.EnvVarArgs]:
    return [k8s.core.v1.EnvVarArgs(name=k, value=v) for k, v in values.items()]


def node_affinity(pools: tuple[str, ...]) -> k8s.core.v1.AffinityArgs:
    return k8s.core.v1.AffinityArgs(node_affinity=k8s.core.v1.NodeAffinityArgs(
        required_during_scheduling_ignored_during_execution=k8s.core.v1.NodeSelectorArgs(node_selector_terms=[
            k8s.core.v1.NodeSelectorTermArgs(match_expressions=[
                k8s.core.v1.NodeSelectorRequirementArgs(key=GKE_ACCELERATOR, operator="Exists"),
                k8s.core.v1.NodeSelectorRequirementArgs(key=GKE_DRIVER_VERSION_LABEL, operator="DoesNotExist"),
                k8s.core.v1.NodeSelectorRequirementArgs(key=GKE_NODEPOOL, operator="In", values=list(pools)),
            ]),
        ]),
    ))


def installer_pod_spec(args: NvidiaDriverInstallerArgs) -> k8s.core.v1.PodSpecArgs:
    images = args.images
    privileged = k8s.core.v1.SecurityContextArgs(privileged=True)
    small = k8s.core.v1.ResourceRequirementsArgs(requests={"cpu": "150m"})
    installer = k8s.core.v1.ContainerArgs(
        name="nvidia-driver-installer",
        image=images.installer_image,
        image_pull_policy="Never",  # preloaded by GKE on COS GPU nodes
        command=(["/cos-gpu-installer", "install", f"--version={images.driver_version}"]
                 if images.driver_version != "default" else None),
        security_context=privileged,
        resources=small,
        env=_env({
            "NVIDIA_INSTALL_DIR_HOST": HOST_INSTALL_DIR,
            "NVIDIA_INSTALL_DIR_CONTAINER": CONTAINER_INSTALL_DIR,
            "VULKAN_ICD_DIR_HOST": HOST_VULKAN_DIR,
            "VULKAN_ICD_DIR_CONTAINER": "/etc/vulkan/icd.d",
            "ROOT_MOUNT_DIR": "/root",
            "COS_TOOLS_DIR_HOST": HOST_COS_TOOLS,
            "COS_TOOLS_DIR_CONTAINER": "/build/cos-tools",
        }),
        volume_mounts=[
            _mount("driver-install-dir", CONTAINER_INSTALL_DIR),
            _mount("vulkan-icd", "/etc/vulkan/icd.d"),
            _mount("host-dev", "/dev"),
            _mount("host-root", "/root"),
            _mount("cos-tools", "/build/cos-tools"),
        ],
    )
    partition = k8s.core.v1.ContainerArgs(
        name="partition-gpus",
        image=images.partition_image,
        security_context=privileged,
        resources=small,
        env=_env({"LD_LIBRARY_PATH": f"{CONTAINER_INSTALL_DIR}/lib64"}),
        volume_mounts=[
            _mount("driver-install-dir", CONTAINER_INSTALL_DIR),
            _mount("host-dev", "/dev"),
            _mount("gpu-config", "/etc/nvidia"),
        ],
    )
    return k8s.core.v1.PodSpecArgs(
        priority_class_name="system-node-critical",
        affinity=node_affinity(args.pools),
        tolerations=[k8s.core.v1.TolerationArgs(**t) for t in tolerations_for(list(args.taints))],
        host_network=True,
        host_pid=True,
        volumes=[
            _host_volume("host-dev", "/dev"),
            _host_volume("vulkan-icd", HOST_VULKAN_DIR),
            _host_volume("driver-install-dir", HOST_INSTALL_DIR),
            _host_volume("host-root", "/"),
            _host_volume("cos-tools", HOST_COS_TOOLS),
            _host_volume("gpu-config", "/etc/nvidia"),
        ],
        init_containers=[installer, partition],
        containers=[k8s.core.v1.ContainerArgs(name="pause", image=images.pause_image)],
    )


class NvidiaDriverInstaller(pulumi.ComponentResource):
    """The installer DaemonSet in kube-system (provider via ``opts``)."""

    daemon_set: k8s.apps.v1.DaemonSet

    def __init__(self, name: str, args: NvidiaDriverInstallerArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-fungibility:driver_installer:NvidiaDriverInstaller", name, None, opts)
        if not args.pools:
            from stacks.loader import ConfigError

            raise ConfigError([("nodePools", "the driver installer needs at least one pool to serve")])
        self.daemon_set = k8s.apps.v1.DaemonSet(
            f"{name}-daemonset",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=NAME, namespace=NAMESPACE, labels=LABELS),
            spec=k8s.apps.v1.DaemonSetSpecArgs(
                selector=k8s.meta.v1.LabelSelectorArgs(match_labels=LABELS),
                update_strategy=k8s.apps.v1.DaemonSetUpdateStrategyArgs(type="RollingUpdate"),
                template=k8s.core.v1.PodTemplateSpecArgs(
                    metadata=k8s.meta.v1.ObjectMetaArgs(labels={**LABELS, "name": NAME}),
                    spec=installer_pod_spec(args),
                ),
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"daemonSet": self.daemon_set.metadata.name})
