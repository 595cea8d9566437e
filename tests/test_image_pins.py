"""Images a current node can pull: every image the library pins is a digest of a proven Schema 2/OCI manifest.

GKE 1.33+ nodes run containerd 2.0, which removed Docker Schema 1 support (GKE "Migrate nodes to containerd
2"): a Schema 1 pause image never pulls, the installer DaemonSet never becomes Ready, and ``pulumi up`` waits
on it. The installer follows GoogleCloudPlatform/container-engine-accelerators
nvidia-driver-installer/cos/daemonset-preloaded.yaml at commit f2cf4197a5c3f0f20133be15d5fad8b7453beed5.
"""

import re

import pytest

from components import driver_installer, pins
from offline_plan.planjson import plan_document
from offline_plan.run import run_stack_file

DIGEST = re.compile(r"^[a-z0-9.\-/:]+@(sha256:[0-9a-f]{64})$")
GKE_STACKS = ("dev", "prod")


def pod_specs(document: dict) -> list[tuple[str, dict]]:
    specs = []
    for step in document["steps"]:
        state = step["newState"]
        spec = ((state.get("inputs") or {}).get("spec") or {}).get("template", {}).get("spec")
        if state["type"].startswith("kubernetes:apps/v1:") and spec:
            specs.append((state["urn"], spec))
    return specs


def containers(spec: dict) -> list[dict]:
    return list(spec.get("initContainers") or []) + list(spec.get("containers") or [])


@pytest.fixture(scope="module", params=GKE_STACKS)
def installer(request) -> tuple[str, dict]:
    document = plan_document(run_stack_file(request.param))
    found = [(urn, spec) for urn, spec in pod_specs(document) if urn.endswith("::nvidia-driver-installer-daemonset")]
    assert len(found) == 1, f"{request.param}: one driver installer DaemonSet"
    return found[0]


def test_every_pulled_installer_image_is_a_digest_of_a_proven_manifest(installer):
    urn, spec = installer
    for container in containers(spec):
        image = container["image"]
        if container.get("imagePullPolicy") == "Never":
            assert image == pins.COS_DRIVER_INSTALLER_IMAGE, f"{urn}: only GKE's preloaded installer is never pulled"
            continue
        match = DIGEST.match(image)
        assert match, f"{urn}: {container['name']} image {image} is not pinned by digest"
        assert match.group(1) in pins.PULLABLE_MANIFESTS, f"{urn}: {image} has no cited Schema 2/OCI source"
        assert image not in pins.SCHEMA1_IMAGES


def test_the_installer_images_are_upstreams_current_ones(installer):
    _, spec = installer
    images = {c["name"]: c["image"] for c in containers(spec)}
    assert images == {
        "nvidia-driver-installer": "cos-nvidia-installer:fixed",
        "partition-gpus": "gcr.io/gke-release/nvidia-partition-gpu@sha256:"
                          "de12f85ebfb4fb6c1893cd30c23aab662a72fa0448f97ef74fccb82d7522ef17",
        "pause": "gke.gcr.io/pause:3.8@sha256:880e63f94b145e46f1b1082bb71b85e21f16b99b180b9996407d61240ceb9830",
    }


def test_the_installer_skips_a_node_whose_driver_is_loaded(installer):
    urn, spec = installer
    install = next(c for c in spec["initContainers"] if c["name"] == "nvidia-driver-installer")
    assert install["command"][:2] == ["bash", "-c"], urn
    script = install["command"][2]
    guard, run = script.index("lsmod | grep -q nvidia"), script.index("/cos-gpu-installer install")
    assert guard < run and "exit 0" in script[guard:run], f"{urn}: the lsmod guard comes before the install"


def test_the_installer_stays_off_confidential_nodes(installer):
    urn, spec = installer
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert {"key": "cloud.google.com/gke-confidential-nodes-instance-type", "operator": "DoesNotExist"} \
        in terms[0]["matchExpressions"], urn


@pytest.mark.parametrize("version,installs", [
    ("default", "/cos-gpu-installer install || exit 1"),
    ("latest", "/cos-gpu-installer install --version=latest || exit 1"),
])
def test_the_driver_branch_reaches_the_installer(version, installs):
    script = driver_installer.install_script(version)
    assert installs in script
    assert ("chmod 755 /root/home/kubernetes/bin/nvidia" in script) is (version == "latest")


def test_a_schema1_pause_image_is_known_and_never_the_default():
    assert "gcr.io/google-containers/pause:2.0" in pins.SCHEMA1_IMAGES
    assert pins.PAUSE_IMAGE not in pins.SCHEMA1_IMAGES
    for image in (pins.PAUSE_IMAGE, pins.GPU_PARTITION_IMAGE):
        assert DIGEST.match(image) and DIGEST.match(image).group(1) in pins.PULLABLE_MANIFESTS
