"""Each cloud's share of the pack, found through the cloud registry.

The pack's shared modules never name a cloud: they ask the registry
(:mod:`gpu_fungibility.clouds`) which resource types are a cloud's clusters
and pools (``CloudProfile.cluster_type``, ``pool_type``) and hand the cloud's
own questions to its modules:

- ``<pack>.<cloud>`` (``policies/gke.py``): how the cloud's resources read, with
  ``pool(res, nfd_labels_gpus) -> Pool``, ``SPOT_FIELDS`` (the paths saying spot or
  not), ``CLUSTER_VERSION`` / ``POOL_VERSION`` (the field holding the version, None
  where not checked) and ``RELEASE_CHANNEL`` (the path of a release channel, or None);
- ``<pack>.rules.<cloud>`` (``policies/rules/gke.py``): the cloud's rules, with
  ``POLICIES`` (the pack's policies that only this cloud has), ``autoscaler_order_checks``
  (the cloud's half of ``claim-follows-compute-class``), ``SCALING_GROUP_NAME`` (the
  pattern of a pool's autoscaling group, ``{pool}`` in it, for the priority expander;
  None where the cloud orders pools otherwise), ``dra_pool_problems(pool)``,
  ``cluster_advisories(args, props)``, and the ``control-plane-reachable`` verdict
  (``ENDPOINT_SETTINGS``, ``reach_inputs``, ``unknown_reach_inputs``, ``unreachable``,
  ``ENDPOINT_FIX``).

A cloud kept outside the project names its modules in its profile's ``parts``
under ``"policies"`` and ``"policies.rules"``, and they import the pack's
shared modules as ``policies.<module>``. The pack is loaded under a name of
its own when the engine runs it (``policies/__main__.py``), so the shipped
clouds' modules are found relative to this package, whatever it is called, and
before an outside module is imported the pack's loaded modules are also
entered under ``policies``: the outside module then shares the pack's classes
and state instead of loading a second copy of the pack.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

from gpu_fungibility import clouds

#: The package the pack is loaded as (``policies`` in the tests, a private name when the engine runs it).
PACK = __name__.rpartition(".")[0]
#: The name modules outside the pack import it by.
PUBLIC_NAME = "policies"
#: The area names a profile's ``parts`` gives the pack's modules under, by the pack's own area.
AREAS = {"": PUBLIC_NAME, "rules": f"{PUBLIC_NAME}.rules"}


def part(cloud: str, area: str = "") -> ModuleType:
    """The module holding ``cloud``'s share of the pack (``area`` ``""``: how its resources read; ``"rules"``:
    its rules), as its profile's ``parts`` names it, else ``<pack>[.<area>].<cloud>``."""
    found = clouds.profile(cloud)
    named = found.parts.get(AREAS[area])
    if named:
        _enter_under_public_name()
        return importlib.import_module(named)
    return importlib.import_module(".".join(p for p in (PACK, area, found.name) if p))


def cloud_of_cluster(resource_type: str) -> str | None:
    """The registered cloud whose clusters have this resource type, or None."""
    return next((n for n in clouds.names() if clouds.profile(n).cluster_type == resource_type), None)


def cloud_of_pool(resource_type: str) -> str | None:
    """The registered cloud whose node pools have this resource type, or None."""
    return next((n for n in clouds.names() if clouds.profile(n).pool_type == resource_type), None)


def cluster_types() -> tuple[str, ...]:
    """The resource types of the registered clouds' clusters."""
    return tuple(clouds.profile(n).cluster_type for n in clouds.names())


def pool_types() -> tuple[str, ...]:
    """The resource types of the registered clouds' node pools."""
    return tuple(clouds.profile(n).pool_type for n in clouds.names())


def _enter_under_public_name() -> None:
    """Make ``policies.<module>`` the pack's own loaded modules, when the pack runs under another name."""
    if PACK == PUBLIC_NAME or PUBLIC_NAME in sys.modules:
        return
    for name, module in list(sys.modules.items()):
        if name == PACK or name.startswith(f"{PACK}."):
            sys.modules[PUBLIC_NAME + name[len(PACK):]] = module
