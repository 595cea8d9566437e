"""Images a current node can pull: every image the library pins is a digest of a proven Schema 2/OCI manifest.

GKE 1.33+ nodes run containerd 2.0, which removed Docker Schema 1 support (GKE "Migrate nodes to containerd
2"): a Schema 1 pause image never pulls, the installer DaemonSet never becomes Ready, and ``pulumi up`` waits
on it. The installer follows GoogleCloudPlatform/container-engine-accelerators
nvidia-driver-installer/cos/daemonset-preloaded.yaml at commit f2cf4197a5c3f0f20133be15d5fad8b7453beed5.

Every image the four shipped plans run, their pods' and the ones their Helm releases render, is either a
digest with a cited source in ``pins.PULLABLE_MANIFESTS`` or listed in ``images.UNPINNED_IMAGES`` with why.
"""

import functools
import json
import re
from pathlib import Path

import pytest

from components import helm_values, images, pins
from components.clouds.gke import driver_installer
from offline_plan.planjson import plan_document
from offline_plan.run import run_stack_file

DIGEST = re.compile(r"^[A-Za-z0-9._\-/:]+@(sha256:[0-9a-f]{64})$")
GKE_STACKS = ("dev", "prod")
SHIPPED_STACKS = ("dev", "eks-dev", "prod", "aks-dev")
DOCS = Path(__file__).resolve().parent.parent / "docs" / "images.md"

#: Each chart's ``image.repository`` default at its pinned tag (values.yaml): the DRA charts and the device plugin
#: default ``image.tag`` to ``v<appVersion>``, which equals the chart version at these tags; the autoscaler
#: chart's own tag default is not modelled (the library always sets the tag for the cluster's minor).
CHART_REPOSITORIES = {
    "dra-driver-nvidia-gpu": "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu",
    "dra-driver-google-tpu": "registry.k8s.io/dra-driver-google/dra-driver-google-tpu",
    "nvidia-device-plugin": "nvcr.io/nvidia/k8s-device-plugin",
    "cluster-autoscaler": "registry.k8s.io/autoscaling/cluster-autoscaler",
}


@functools.cache
def shipped_plan(stack: str) -> dict:
    return plan_document(run_stack_file(stack))


def release_images(chart: str, version: str, values: dict) -> list[str]:
    """The images a Helm release runs: its chart's ``image`` (values over the chart's defaults) and own pins."""
    name = images.chart_name(chart)
    image = values.get("image") or {}
    repository = image.get("repository") or CHART_REPOSITORIES[name]
    tag = image.get("tag") or ("" if name == "cluster-autoscaler" else f"v{version}")
    assert tag, f"{chart} {version}: the release sets no image tag"
    found = [f"{repository}:{tag}"]
    containers = (values.get("kubeletPlugin") or {}).get("containers") or {}
    for container, pinned in images.CHART_OWN_IMAGES.get((name, version), {}).items():
        own = containers.get(container) or {}
        if helm_values.truthy(own.get("enabled", True)):
            found.append(own.get("image") or pinned)
    return found


def plan_images(document: dict) -> dict[str, str]:
    """Every image a plan runs -> where (pod specs of its workloads, and the images its releases render)."""
    found: dict[str, str] = {}
    for urn, spec in pod_specs(document):
        for container in containers(spec):
            if container.get("imagePullPolicy") != "Never":
                found[container["image"]] = urn
    for step in document["steps"]:
        state = step["newState"]
        if state["type"] == "kubernetes:helm.sh/v3:Release":
            inputs = state["inputs"]
            for image in release_images(inputs["chart"], inputs["version"], inputs.get("values") or {}):
                found[image] = state["urn"]
    return found


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


@pytest.mark.parametrize("stack", SHIPPED_STACKS)
def test_every_image_a_shipped_stack_runs_is_a_proven_digest_or_listed_unpinned(stack):
    for image, urn in plan_images(shipped_plan(stack)).items():
        assert image not in pins.SCHEMA1_IMAGES, f"{urn}: {image} is a Docker Schema 1 image"
        if image in images.UNPINNED_IMAGES:
            assert "@" not in image and images.UNPINNED_IMAGES[image], image
            continue
        match = DIGEST.match(image)
        assert match, f"{urn}: {image} is neither pinned by digest nor listed in images.UNPINNED_IMAGES"
        assert match.group(1) in pins.PULLABLE_MANIFESTS, f"{urn}: {image} has no cited Schema 2/OCI source"


EXPECTED_IMAGES = {
    "dev": {pins.GPU_PARTITION_IMAGE, pins.PAUSE_IMAGE, pins.NVIDIA_DRA_IMAGE, pins.TPU_DRA_IMAGE,
            *pins.TPU_DRA_CHART_OWN_IMAGES.values(), "vllm/vllm-openai:gemma4", pins.VLLM_TPU_IMAGE},
    "prod": {pins.GPU_PARTITION_IMAGE, pins.PAUSE_IMAGE, pins.NVIDIA_DRA_IMAGE, "vllm/vllm-openai:gemma4"},
    "eks-dev": {pins.NVIDIA_DRA_IMAGE, pins.NVIDIA_DEVICE_PLUGIN_IMAGE, pins.VLLM_GPU_IMAGE,
                "registry.k8s.io/autoscaling/cluster-autoscaler:v1.35.2"},
    "aks-dev": {pins.NVIDIA_DRA_IMAGE, pins.NVIDIA_DEVICE_PLUGIN_IMAGE, pins.VLLM_GPU_IMAGE},
}


@pytest.mark.parametrize("stack", SHIPPED_STACKS)
def test_the_images_each_shipped_stack_runs(stack):
    assert set(plan_images(shipped_plan(stack))) == EXPECTED_IMAGES[stack]


def test_the_default_images_are_digests_of_proven_manifests():
    for image in (pins.VLLM_GPU_IMAGE, pins.NVIDIA_DRA_IMAGE, pins.TPU_DRA_IMAGE, pins.NVIDIA_DEVICE_PLUGIN_IMAGE,
                  *pins.TPU_DRA_CHART_OWN_IMAGES.values()):
        match = DIGEST.match(image)
        assert match and match.group(1) in pins.PULLABLE_MANIFESTS, image


def test_every_cited_manifest_is_a_pinned_image():
    pinned = [value for name, value in vars(pins).items() if name.endswith("_IMAGE") and isinstance(value, str)]
    pinned += list(pins.TPU_DRA_CHART_OWN_IMAGES.values())
    digests = {image.partition("@")[2] for image in pinned if "@" in image}
    assert digests == set(pins.PULLABLE_MANIFESTS), "a cited manifest no pin uses, or a pin with no citation"


@pytest.mark.parametrize("key,image", sorted(images.CHART_IMAGES.items()))
def test_a_chart_image_matches_its_chart_version(key, image):
    chart, version = key
    repository, tag = images.split_reference(image)
    assert repository == CHART_REPOSITORIES[chart]
    assert tag.startswith(f"v{version}@sha256:"), f"{chart} {version} runs v{version}: move the image with the chart"


def test_the_chart_values_render_the_tag_at_the_digest():
    values = images.chart_image_values(pins.NVIDIA_DRA_CHART, pins.NVIDIA_DRA_VERSION)
    assert values == {"image": {
        "repository": "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu",
        "tag": "v0.4.1@sha256:eefe67396dedea4df74f68a94d5883f33204888b83979babd42b91501a2de1d8"}}
    assert release_images(pins.NVIDIA_DRA_CHART, pins.NVIDIA_DRA_VERSION, values) == [pins.NVIDIA_DRA_IMAGE]
    assert images.chart_image_values(pins.NVIDIA_DRA_CHART, "0.5.0") == {}, "another version runs its own image"
    assert images.chart_image_values("oci://example.org/other-chart", pins.NVIDIA_DRA_VERSION) == {}


def test_a_callers_image_values_win():
    ours = images.chart_image_values(pins.NVIDIA_DEVICE_PLUGIN_CHART, pins.NVIDIA_DEVICE_PLUGIN_VERSION)
    merged = helm_values.merge(ours, {"image": {"repository": "mirror.example.org/k8s-device-plugin"}})
    assert merged["image"] == {"repository": "mirror.example.org/k8s-device-plugin",
                               "tag": ours["image"]["tag"]}


@pytest.mark.parametrize("stack", SHIPPED_STACKS)
def test_no_schema1_image_is_named_in_a_shipped_plan(stack):
    text = json.dumps(shipped_plan(stack))
    for name in pins.SCHEMA1_IMAGES:
        assert name not in text, f"{stack}: {name} is a Docker Schema 1 image"


def test_the_docs_list_every_image_and_say_which_are_unpinned():
    text = DOCS.read_text()
    everything = set().union(*EXPECTED_IMAGES.values()) | set(images.UNPINNED_IMAGES)
    for image in everything:
        assert f"`{image}`" in text, f"docs/images.md does not list {image}"
    section = text[text.index("## Not pinned by digest"):]
    for image in images.UNPINNED_IMAGES:
        assert f"`{image}`" in section, f"docs/images.md does not say {image} is unpinned"


@pytest.mark.parametrize("path", sorted((DOCS.parent.parent / "examples" / "stacks").glob("Pulumi.*.yaml")),
                         ids=lambda p: p.name)
def test_the_example_stacks_name_images_by_proven_digest(path):
    named = re.findall(r"^\s+image: (\S+)$", path.read_text(), re.MULTILINE)
    assert named, f"{path.name} names no serving image"
    for image in named:
        match = DIGEST.match(image)
        assert match and match.group(1) in pins.PULLABLE_MANIFESTS, f"{path.name}: {image}"
