"""What every accelerator pool component shares, whatever the cloud: checks, DRA wiring and outputs.

A pool component (a GKE node pool, an EKS node group, an AKS agent pool, or a pool of a cloud registered
later) is built in one order by :class:`AcceleratorPool`: every argument checked at once (types, the
accelerator against the catalog and the cloud's machines, autoscaling, labels, taints, disk, spot, the
cloud's own rules), the pool described as the DRA wiring sees it (:class:`~.wiring_keys.PoolSpec`), the
cloud's resources built, and the labels and taints every node ends up with as outputs. The labels and taints
come from the cloud's profile (``clouds.profile(CLOUD)``) through :mod:`.dra_wiring`, never from the
component.

A cloud's pool component supplies only what differs:

- ``CLOUD``: the registered cloud's name; ``FAMILY``: ``"gpu"`` (default) or ``"tpu"``;
- ``NAME_ARGUMENT``: the argument that names the pool in the cloud (default: the component's name);
- :meth:`~AcceleratorPool.machine_types`: the machine argument(s) as a list, the first giving the default
  accelerator count from the cloud's machine shapes; :meth:`~AcceleratorPool.spec_machine`: the machine the
  wiring records (None where the pool has several);
- :meth:`~AcceleratorPool.cloud_issues`: the cloud's own argument rules, as ``(argument, message)``;
- :meth:`~AcceleratorPool.build`: the cloud's resources, parented with ``self.child(...)``, labelled and
  tainted with :meth:`~AcceleratorPool.stack_labels` and :meth:`~AcceleratorPool.stack_taints`;
- an Args TypedDict built on :class:`~.pool_args.AcceleratorPoolArgs` with the cloud's own fields (the
  cluster, the machine, the pool's name, tags), an ``__init__(self, name, args: ThatArgs, opts=None)`` that
  calls this one, and any outputs of its own annotated on the class (``node_labels`` and ``node_taints`` are
  declared here).
"""

from typing import Any

import pulumi

from . import clouds, dra_wiring
from .base import Issues, LibraryComponent
from .node_selection import NodeTaint
from .pool_args import AcceleratorPoolArgs, Taint, accelerator_issues, common_pool_issues, pool_spec, taint_dicts
from .wiring_keys import PoolSpec


class AcceleratorPool(LibraryComponent):
    """Base of the accelerator pool components (see the module's docstring for what a cloud supplies)."""

    CLOUD = ""
    FAMILY = "gpu"
    NAME_ARGUMENT = ""

    node_labels: pulumi.Output[dict[str, str]]
    """Every label the pool's nodes carry: the cloud's, the DRA wiring's and the extra ones."""
    node_taints: pulumi.Output[list[Taint]]
    """Every taint the pool's nodes carry: what the DRA driver and the workloads must tolerate."""

    def __init__(self, name: str, args: AcceleratorPoolArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(name, opts, args)
        spec = self.spec(name, args)
        self.build(name, args, spec)
        self.node_labels = pulumi.Output.from_input(dra_wiring.node_labels(self.CLOUD, spec))
        self.node_taints = pulumi.Output.from_input(taint_dicts(dra_wiring.node_taints(self.CLOUD, spec)))
        self.register()

    # ---- what a cloud supplies ----------------------------------------------------------------------

    @classmethod
    def machine_types(cls, args: Any) -> list[str]:
        """The pool's machine(s), from the cloud's machine argument."""
        raise NotImplementedError

    @classmethod
    def spec_machine(cls, args: Any) -> str | None:
        """The machine the DRA wiring records for the pool (default: the first one)."""
        machines = cls.machine_types(args)
        return machines[0] if machines else None

    @classmethod
    def cloud_issues(cls, name: str, args: Any) -> Issues:
        """Problems with the cloud's own arguments, in argument names (none by default)."""
        return []

    def build(self, name: str, args: Any, spec: PoolSpec) -> None:
        """Create the cloud's resources for the pool."""
        raise NotImplementedError

    # ---- shared steps ---------------------------------------------------------------------------------

    @classmethod
    def default_count(cls, args: Any) -> int:
        """Accelerators per node when the arguments do not say: what the first machine carries, else 1."""
        machines = cls.machine_types(args)
        shape = clouds.profile(cls.CLOUD).machine_shape(machines[0]) if machines else None
        return shape.count if shape else 1

    @classmethod
    def pool_name(cls, name: str, args: Any) -> str:
        """The pool's name in the cloud: its name argument, else the component's name."""
        return (args.get(cls.NAME_ARGUMENT) if cls.NAME_ARGUMENT else None) or name

    @classmethod
    def spec(cls, name: str, args: Any) -> PoolSpec:
        """The pool as the DRA wiring sees it."""
        return pool_spec(cls.pool_name(name, args), cls.FAMILY, args, cls.spec_machine(args),
                         cls.default_count(args))

    @classmethod
    def issues(cls, name: str, args: Any) -> Issues:
        """Problems with the arguments, in argument names: the accelerator and machine first, then the cloud's
        own rules, then the rules of the family and those every pool shares."""
        issues = accelerator_issues(cls.CLOUD, cls.FAMILY, args, cls.machine_types(args), cls.default_count(args))
        return issues + cls.cloud_issues(name, args) + cls.family_issues(args) + common_pool_issues(args)

    @classmethod
    def family_issues(cls, args: Any) -> Issues:
        """What only TPU pools may have (a slice topology) and must be (DRA pools)."""
        if cls.FAMILY == "tpu":
            return [("dra", "TPU pools are always DRA pools")] if args.get("dra") is False else []
        return [("topology", "only TPU pools have a topology")] if args.get("topology") else []

    def stack_labels(self, spec: PoolSpec) -> dict[str, str]:
        """The labels the pool asks the cloud for (the cloud adds its own)."""
        return dra_wiring.stack_labels(self.CLOUD, spec)

    def stack_taints(self, spec: PoolSpec) -> list[NodeTaint]:
        """The taints the pool asks the cloud for (the cloud adds its own)."""
        return dra_wiring.stack_taints(self.CLOUD, spec)
