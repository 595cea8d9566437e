"""A pod's requests as kube-scheduler computes them (gpu_fungibility.pod_requests), in the simulator and in verify.

The recorded answers of kube-scheduler v1.35.4 for the same pods are replayed in
tests/test_differential_reduced.py (fixtures reduced-limits, reduced-init-container, reduced-sidecar,
reduced-byte-quantities).
"""

import pytest
from gpu_fungibility.pod_requests import Requests, pod_requests

from simulator.workloads import pod_spec
from verify.snapshot import pod_requests as verify_pod_requests

GI = 2 ** 30


def container(name="main", requests=None, limits=None, **extra):
    resources = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    return {"name": name, "image": "x", "resources": resources, **extra}


@pytest.mark.parametrize("pod, expected", [
    # a missing request defaults from the limit, per resource
    ({"containers": [container(limits={"cpu": "1500m", "memory": "256Mi"})]}, Requests(1500, 256 * 2 ** 20)),
    ({"containers": [container(requests={"cpu": "1"}, limits={"memory": "1Gi", "cpu": "2"})]}, Requests(1000, GI)),
    # the containers add up; the largest init container wins where it is larger
    ({"containers": [container(requests={"cpu": "1"}), container("b", requests={"cpu": "1"})],
      "initContainers": [container("init", requests={"cpu": "3", "memory": "1Gi"})]}, Requests(3000, GI)),
    # a sidecar runs beside the containers and beside every init container after it
    ({"containers": [container(requests={"cpu": "1"})],
      "initContainers": [container("side", requests={"cpu": "1"}, restartPolicy="Always"),
                         container("init", requests={"cpu": "500m"})]}, Requests(2000, 0)),
    ({"containers": [container(requests={"cpu": "1"})],
      "initContainers": [container("side", requests={"cpu": "1"}, restartPolicy="Always"),
                         container("init", requests={"cpu": "2500m"})]}, Requests(3500, 0)),
    # exact bytes; CPU "0" is a request of nothing, not an error
    ({"containers": [container(requests={"memory": "536870913", "cpu": "0"})]}, Requests(0, 536870913)),
    ({"containers": [container(requests={"cpu": "1"})], "overhead": {"cpu": "250m"}}, Requests(1250, 0)),
])
def test_requests_as_the_scheduler_computes_them(pod, expected):
    assert pod_requests(pod) == expected


def test_scoring_counts_a_missing_request_as_100m_and_200mi():
    pod = {"containers": [container(), container("b", requests={"cpu": "2"})]}
    assert pod_requests(pod) == Requests(2000, 0)
    assert pod_requests(pod, non_zero=True) == Requests(2100, 2 * 200 * 2 ** 20)


def test_two_pods_of_512mi_and_a_byte_are_more_than_a_gibibyte():
    spec = pod_spec("g", "ns", 2, {"containers": [container(requests={"memory": "536870913"})]}, {}, {})
    assert spec.problem is None
    assert 2 * spec.memory_bytes > GI  # the simulator compares bytes, not MiB rounded down
    assert spec.memory_mib == 512


def test_a_negative_request_is_refused():
    spec = pod_spec("g", "ns", 1, {"containers": [container(requests={"cpu": "-1"})]}, {}, {})
    assert spec.problem and "must not be negative" in spec.problem


def test_verify_reads_a_live_pod_the_same_way():
    pod = {"containers": [container(requests={"cpu": "1", "memory": "1Gi"})],
           "initContainers": [container("side", requests={"cpu": "1", "memory": "1Gi"}, restartPolicy="Always"),
                              container("init", requests={"cpu": "500m", "memory": "3Gi"})]}
    assert verify_pod_requests(pod) == (2000, 4 * 1024)  # the init step: 3Gi beside the 1Gi sidecar
