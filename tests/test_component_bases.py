"""The component bases are usable from outside the library, and what they declare reaches the schema.

Every cloud's pool, cluster and network, and every DRA driver, is built on a base that declares the fields
and outputs they share once (node_pool_base, cluster_base, network_base, driver_release). Pulumi's
analyzer reads a field's docstring from the class it analyses only; schema_docs lets it find the docstring
on the base. A component written elsewhere (a cloud kept in a test folder or a fork) gets the same.
"""

import json
import typing
from typing import Any, NotRequired

import pulumi
import pytest
from gpu_fungibility import schema_docs
from gpu_fungibility.clouds.aks.cluster import AksClusterArgs
from gpu_fungibility.clouds.aks.network import AksNetworkArgs
from gpu_fungibility.clouds.aks.node_pools import AksGpuNodePool, AksGpuNodePoolArgs
from gpu_fungibility.clouds.eks.cluster import EksClusterArgs
from gpu_fungibility.clouds.eks.network import EksNetworkArgs
from gpu_fungibility.clouds.eks.node_groups import EksGpuNodeGroup, EksGpuNodeGroupArgs
from gpu_fungibility.clouds.gke.cluster import GkeClusterArgs
from gpu_fungibility.clouds.gke.network import GkeNetworkArgs
from gpu_fungibility.clouds.gke.pools import GkeGpuNodePool, GkeNodePoolArgs, GkeTpuNodePool
from gpu_fungibility.cluster_base import ClusterArgs
from gpu_fungibility.driver_release import DriverRelease, DriverReleaseArgs
from gpu_fungibility.network_base import NetworkArgs
from gpu_fungibility.node_pool_base import AcceleratorPool
from gpu_fungibility.nvidia_dra import NvidiaDraDriverArgs
from gpu_fungibility.pool_args import AcceleratorPoolArgs
from gpu_fungibility.releases import ChartArgs
from gpu_fungibility.tpu_dra import TpuDraDriverArgs
from pulumi.provider.experimental.component import ComponentProvider


class OutsideDriverArgs(DriverReleaseArgs):
    """A driver kept outside the library."""

    flavour: NotRequired[str]
    """The flavour of the outside driver."""


class OutsideDriver(DriverRelease):
    """A DRA driver built on the library's base from another module."""

    RELEASE_NAME, CHART, VERSION, NAMESPACE = "outside", "oci://example.test/charts/outside", "1.0.0", "outside"

    def __init__(self, name: str, args: OutsideDriverArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, args, opts)

    def chart_values(self, args: Any, taints: Any, extra: dict[str, Any]) -> dict[str, Any]:
        return extra


@pytest.mark.parametrize("base, derived", [
    (AcceleratorPoolArgs, (GkeNodePoolArgs, EksGpuNodeGroupArgs, AksGpuNodePoolArgs)),
    (ClusterArgs, (GkeClusterArgs, EksClusterArgs, AksClusterArgs)),
    (NetworkArgs, (GkeNetworkArgs, EksNetworkArgs, AksNetworkArgs)),
    (DriverReleaseArgs, (NvidiaDraDriverArgs, TpuDraDriverArgs, OutsideDriverArgs)),
    (ChartArgs, (NvidiaDraDriverArgs, TpuDraDriverArgs, OutsideDriverArgs)),
], ids=lambda v: getattr(v, "__name__", "derived"))
def test_each_args_type_holds_its_bases_fields_and_names_its_base(base, derived):
    for args_type in derived:
        assert base.__annotations__.keys() <= args_type.__annotations__.keys(), args_type.__name__
        assert base.__required_keys__ <= args_type.__required_keys__, args_type.__name__
        assert base in schema_docs.field_bases(args_type), args_type.__name__


def test_an_outside_component_on_a_base_is_documented_in_its_schema():
    schema = json.loads(ComponentProvider([OutsideDriver], "outside").schema)
    resource = schema["resources"]["outside:index:OutsideDriver"]
    inputs, outputs = resource["inputProperties"], resource["properties"]
    assert set(inputs) == {"nodeTaints", "chart", "version", "repository", "namespace", "values", "flavour"}
    assert set(outputs) == {"namespace", "releaseName", "values"}
    for kind, props in (("input", inputs), ("output", outputs)):
        for name, prop in props.items():
            assert prop.get("description", "").strip(), f"{kind} {name} has no description"
    assert inputs["flavour"]["description"] == "The flavour of the outside driver."
    assert inputs["version"]["description"] == "The exact chart version (default: the pinned one)."


def test_the_analyzer_is_taught_once():
    from pulumi.provider.experimental.analyzer import Analyzer

    method = Analyzer.get_docstring
    schema_docs.teach_analyzer()
    assert Analyzer.get_docstring is method


@pytest.mark.parametrize("component", [GkeGpuNodePool, GkeTpuNodePool, EksGpuNodeGroup, AksGpuNodePool],
                         ids=lambda c: c.__name__)
def test_every_pool_component_says_its_cloud_and_naming_argument(component):
    assert issubclass(component, AcceleratorPool)
    args_type = component.args_type()
    assert component.CLOUD and component.NAME_ARGUMENT in args_type.__annotations__
    assert component.FAMILY in ("gpu", "tpu")
    assert typing.is_typeddict(args_type) and AcceleratorPoolArgs in schema_docs.field_bases(args_type)
    assert {"node_labels", "node_taints"} <= set(component.output_names())
