"""ZKC's share of the offline plan (the ``offline_plan`` part of its profile): its cluster's mock outputs."""

from offline_plan.before_deploy import Item
from offline_plan.mocks import FAKE_CA


def _cluster(name: str, inputs: dict) -> dict:
    kubeconfig = (f"apiVersion: v1\nkind: Config\nclusters:\n- name: {name}\n  cluster:\n"
                  f"    server: https://{inputs.get('name', name)}.zkc.example\n"
                  f"    certificate-authority-data: {FAKE_CA}\n")
    return {"kubeconfig": kubeconfig}


OUTPUTS_BY_TYPE = {"zkc:index/cluster:Cluster": _cluster}


def deletion(cfg: object) -> Item:
    """ZKC clusters have no deletion protection: the block says so instead of the shared default."""
    return Item("warning", "deletion protection", "ZKC has none: `pulumi destroy` deletes the cluster")
