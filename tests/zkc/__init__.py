"""ZKC, a fictitious fourth cloud kept outside the project: its profile, registered the way a cloud kept
elsewhere registers itself, and its own share of the policy pack (:mod:`.pack`, :mod:`.pack_rules`, named in
its profile's ``parts``). No shared file of the project knows it.

Its pools are ``zkc:index/nodePool:NodePool`` resources; its nodes are labelled ``zkc.example/pool=<name>``
and GPU nodes tainted ``nvidia.com/gpu=present:NoSchedule``; the order of a claim's alternatives is the pools'
``zkc.example/priority`` resource label, highest first.
"""

from gpu_fungibility.catalog import MachineShape, shapes
from gpu_fungibility.clouds import CloudProfile, register

POOL_LABEL = "zkc.example/pool"
PRIORITY_LABEL = "zkc.example/priority"


class Zkc(CloudProfile):
    name, title = "zkc", "ZKC"
    parts = {"policies": "tests.zkc.pack", "policies.rules": "tests.zkc.pack_rules"}
    families = ("gpu",)
    node_pool_label = POOL_LABEL
    cluster_type, pool_type = "zkc:index/cluster:Cluster", "zkc:index/nodePool:NodePool"
    machines = shapes(MachineShape("z1-gpu-1", "nvidia-l4", 1, "zkc", vcpus=8, memory_gib=32),
                      MachineShape("z1-gpu-8", "nvidia-h100-80gb", 8, "zkc", vcpus=208, memory_gib=1872))


PROFILE = register(Zkc())
