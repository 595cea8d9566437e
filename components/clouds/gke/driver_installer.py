"""The NVIDIA driver installer for GKE COS nodes whose pools disable GKE's driver installation.

Seed 000 applies Google's preloaded-installer DaemonSet from a moving branch;
this is the library's own, typed equivalent with every image pinned
(:mod:`components.pins`):

- an init container runs the installer GKE preloads on each COS GPU node
  (``cos-nvidia-installer:fixed``, never pulled: it matches the node's COS
  build) and installs the driver into ``/home/kubernetes/bin/nvidia`` on the
  host, the root the NVIDIA DRA driver is pointed at;
  unless an NVIDIA kernel module is already loaded (upstream's ``lsmod`` guard);
- a second init container applies GPU partitioning (MIG) from ``/etc/nvidia``;
- a pause container keeps the pod (and so the finished installation) alive.

Images, guard and node affinity follow upstream's current file (commit cited in :mod:`components.pins`):
every pulled image is pinned by digest to a manifest containerd 2 (GKE 1.33+) pulls.

Unlike the upstream file (``tolerations: [{operator: Exists}]`` on every
``gke-accelerator`` node), the pods select exactly the node pools that need them
(``cloud.google.com/gke-nodepool In [...]``, plus ``gke-accelerator`` present
and no GKE-managed driver version label) and tolerate exactly those pools' taints.
"""

from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from ... import pins, sizing
from ...base import Issues, LibraryComponent, resolved
from ...node_selection import tolerations_for
from ...pool_args import Taint, taint_issues, taints_of
from ...wiring_keys import GKE_ACCELERATOR, GKE_NODEPOOL

NAME = "nvidia-driver-installer"
NAMESPACE = "kube-system"
GKE_DRIVER_VERSION_LABEL = "cloud.google.com/gke-gpu-driver-version"
#: Confidential GPU nodes get their driver another way; upstream's installer stays off them.
GKE_CONFIDENTIAL_NODES_LABEL = "cloud.google.com/gke-confidential-nodes-instance-type"
HOST_INSTALL_DIR = "/home/kubernetes/bin/nvidia"
CONTAINER_INSTALL_DIR = "/usr/local/nvidia"
HOST_VULKAN_DIR = f"{HOST_INSTALL_DIR}/vulkan/icd.d"
HOST_COS_TOOLS = "/var/lib/cos-tools"
LABELS = {"k8s-app": NAME}
DRIVER_VERSIONS = ("default", "latest")


class NvidiaDriverInstallerArgs(TypedDict):
    """Where the NVIDIA driver installer runs and what it runs."""

    node_pools: list[pulumi.Input[str]]
    """The GKE node pools whose driver it installs (pools with GKE's driver installation disabled)."""
    node_taints: NotRequired[pulumi.Input[list[Taint]]]
    """Every taint on those pools' nodes (their ``node_taints`` outputs): the pods tolerate each one."""
    driver_version: NotRequired[str]
    """``default`` (default) or ``latest``: the driver branch for the node's COS release."""
    installer_image: NotRequired[str]
    """The installer GKE preloads on COS GPU nodes (default ``cos-nvidia-installer:fixed``, never pulled)."""
    partition_image: NotRequired[str]
    """The GPU partitioning (MIG) image, pinned by digest by default."""
    pause_image: NotRequired[str]
    """The pause image that keeps the pod alive."""


def installer_issues(args: NvidiaDriverInstallerArgs) -> Issues:
    issues: Issues = []
    if not args.get("node_pools"):
        issues.append(("node_pools", "the driver installer needs at least one node pool to serve"))
    if args.get("driver_version", "default") not in DRIVER_VERSIONS:
        issues.append(("driver_version", f"{args.get('driver_version')!r} is not one of {', '.join(DRIVER_VERSIONS)}"))
    taints = args.get("node_taints")
    if isinstance(taints, list):
        issues += taint_issues(taints, "node_taints")
    return issues


def _host_volume(name: str, path: str) -> k8s.core.v1.VolumeArgs:
    return k8s.core.v1.VolumeArgs(name=name, host_path=k8s.core.v1.HostPathVolumeSourceArgs(path=path))


def _mount(name: str, path: str) -> k8s.core.v1.VolumeMountArgs:
    return k8s.core.v1.VolumeMountArgs(name=name, mount_path=path)


def _env(values: dict[str, str]) -> list[k8s.core.v1.EnvVarArgs]:
    return [k8s.core.v1.EnvVarArgs(name=k, value=v) for k, v in values.items()]


def node_affinity(pools: list[pulumi.Input[str]]) -> k8s.core.v1.AffinityArgs:
    return k8s.core.v1.AffinityArgs(node_affinity=k8s.core.v1.NodeAffinityArgs(
        required_during_scheduling_ignored_during_execution=k8s.core.v1.NodeSelectorArgs(node_selector_terms=[
            k8s.core.v1.NodeSelectorTermArgs(match_expressions=[
                k8s.core.v1.NodeSelectorRequirementArgs(key=GKE_ACCELERATOR, operator="Exists"),
                k8s.core.v1.NodeSelectorRequirementArgs(key=GKE_DRIVER_VERSION_LABEL, operator="DoesNotExist"),
                k8s.core.v1.NodeSelectorRequirementArgs(key=GKE_CONFIDENTIAL_NODES_LABEL, operator="DoesNotExist"),
                k8s.core.v1.NodeSelectorRequirementArgs(key=GKE_NODEPOOL, operator="In", values=list(pools)),
            ]),
        ]),
    ))


def install_script(driver_version: str) -> str:
    """The installer's command: skip when an NVIDIA kernel module is already loaded, else install.

    Upstream's file (commit f2cf4197, see :mod:`components.pins`) guards the install with ``lsmod`` since
    2023: a restarted pod (node reboot of the container, DaemonSet roll) must not reinstall over a driver
    the DRA kubelet plugin already holds open. The ``latest`` branch also opens the install root to
    non-root readers, as upstream's ``-latest`` file does.
    """
    install = "/cos-gpu-installer install" + (f" --version={driver_version}" if driver_version != "default" else "")
    steps = [
        "if lsmod | grep -q nvidia; then",
        "  echo 'NVIDIA kernel module loaded: driver already installed, skipping'",
        "  exit 0",
        "fi",
        f"{install} || exit 1",
    ]
    if driver_version == "latest":
        steps.append(f"chmod 755 /root{HOST_INSTALL_DIR}")
    return "\n".join(steps) + "\n"


def installer_pod_spec(args: "NvidiaDriverInstallerArgs") -> k8s.core.v1.PodSpecArgs:
    installer_image = args.get("installer_image", pins.COS_DRIVER_INSTALLER_IMAGE)
    driver_version = args.get("driver_version", "default")
    privileged = k8s.core.v1.SecurityContextArgs(privileged=True)
    small = k8s.core.v1.ResourceRequirementsArgs(requests={"cpu": sizing.DRIVER_INSTALLER_CPU})
    installer = k8s.core.v1.ContainerArgs(
        name="nvidia-driver-installer",
        image=installer_image,
        image_pull_policy="Never",  # preloaded by GKE on COS GPU nodes
        command=["bash", "-c", install_script(driver_version)],
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
        image=args.get("partition_image", pins.GPU_PARTITION_IMAGE),
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
        affinity=node_affinity(list(args["node_pools"])),
        tolerations=resolved(args.get("node_taints", []), lambda taints: tolerations_for(taints_of(taints))),
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
        containers=[k8s.core.v1.ContainerArgs(name="pause", image=args.get("pause_image", pins.PAUSE_IMAGE))],
    )


class NvidiaDriverInstaller(LibraryComponent):
    """The NVIDIA driver installer DaemonSet in kube-system, for GKE COS GPU pools (provider via ``opts``)."""

    LEGACY_TYPE = "gpu-fungibility:driver_installer:NvidiaDriverInstaller"

    daemon_set_name: pulumi.Output[str]
    """The DaemonSet's name."""

    @classmethod
    def issues(cls, name: str, args: Any) -> Issues:
        return installer_issues(args)

    def __init__(self, name: str, args: NvidiaDriverInstallerArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, opts)
        self.fail_on(self.check(name, args))
        daemon_set = k8s.apps.v1.DaemonSet(
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
            opts=self.child(),
        )
        self.daemon_set_name = daemon_set.metadata.name
        self.register()
