"""Shared code asks the cloud registry and never names a cloud (tools/cloud_seams.py).

A branch on a cloud's name outside that cloud's folders or modules is a parallel structure every new cloud must
find and extend; these tests fail on a new one, and say where it is.
"""

import textwrap
from pathlib import Path

from tools import cloud_seams

#: Shared files whose code may name every cloud: the registry's one line of shipped clouds, the label keys each
#: cloud puts on nodes (a vocabulary, not a branch), and the configuration reference's per-cloud examples.
MAY_NAME_EVERY_CLOUD = {
    "components/clouds/__init__.py",
    "components/wiring_keys.py",
    "stacks/reference.py",
}
#: The ceilings the architecture promises (docs/architecture.md, "Where a change goes").
MAX_BRANCH_SITES = 10
MAX_FILES_NAMING_EVERY_CLOUD = 8


def test_shared_code_has_no_branch_on_a_cloud_name():
    sites, _ = cloud_seams.scan()
    assert len(sites) <= MAX_BRANCH_SITES
    assert not sites, ("shared code branches on a cloud's name; move the per-cloud part into the cloud's folder "
                       "and ask the registry (clouds.profile / clouds.part):\n" + "\n".join(map(str, sites)))


def test_only_the_known_shared_files_name_every_cloud():
    _, every = cloud_seams.scan()
    assert len(MAY_NAME_EVERY_CLOUD) <= MAX_FILES_NAMING_EVERY_CLOUD
    assert set(every) <= MAY_NAME_EVERY_CLOUD, sorted(set(every) - MAY_NAME_EVERY_CLOUD)


def test_the_scan_finds_each_kind_of_branch(tmp_path: Path):
    shared = tmp_path / "shared.py"
    shared.write_text(textwrap.dedent('''
        """A docstring naming gke, eks and aks is not code."""
        LIMIT: int = 1
        """Nor is a field's docstring naming gke."""
        def gke_only(cloud):
            if cloud == "gke":
                return {"eks": 1}["eks"]
            return TABLE.get("aks") if cloud in ("eks", "aks") else None
    '''))
    whats = [site.what for site in cloud_seams.branch_sites(shared, tmp_path)]
    assert sorted(whats) == sorted(["defines gke_only", "compares with gke", "table keyed by eks", "looks up eks",
                                    "compares with eks, aks", ".get('aks')"])
    assert cloud_seams.clouds_named(shared) == {"gke", "eks", "aks"}


def test_per_cloud_folders_and_modules_are_exempt():
    assert cloud_seams.is_per_cloud(Path("components/clouds/gke/machines.py"))
    assert cloud_seams.is_per_cloud(Path("stacks/arguments/aks.py"))
    assert cloud_seams.is_per_cloud(Path("policies/rules/gke_compute_class.py"))
    assert not cloud_seams.is_per_cloud(Path("components/catalog.py"))
