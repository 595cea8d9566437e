"""ZKC's share of the offline plan (the ``offline_plan`` part of its profile): its cluster's mock outputs."""

from offline_plan.mocks import FAKE_CA


def _cluster(name: str, inputs: dict) -> dict:
    kubeconfig = (f"apiVersion: v1\nkind: Config\nclusters:\n- name: {name}\n  cluster:\n"
                  f"    server: https://{inputs.get('name', name)}.zkc.example\n"
                  f"    certificate-authority-data: {FAKE_CA}\n")
    return {"kubeconfig": kubeconfig}


OUTPUTS_BY_TYPE = {"zkc:index/cluster:Cluster": _cluster}
