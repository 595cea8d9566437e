"""The library facts the pack reads: label and taint keys.

With :mod:`charts` (the drivers' DeviceClass names, from the catalog), the
place the pack reads the component library's facts
(:mod:`gpu_fungibility.wiring_keys`), so the keys the pools are built with and
the keys the policies check can never differ. A cloud's own facts (its machine
shapes, its resource types) are read from its profile and its folder of the
library by the cloud's module of the pack (:mod:`~policies.cloud_parts`). The
pack depends on the library as a package (see requirements.txt), never on
files outside its folder.
"""

from __future__ import annotations

from gpu_fungibility import wiring_keys
from gpu_fungibility.wiring_keys import *  # noqa: F403  (every label and taint key, by the library's __all__)
from gpu_fungibility.wiring_keys import ON_DEMAND_FALLBACK as ON_DEMAND_FALLBACK_LABEL

#: The name part of the node label marking a deliberate on-demand pool (any prefix is accepted),
#: and the GKE resource label / EKS tag key that marks it too.
ON_DEMAND_FALLBACK = ON_DEMAND_FALLBACK_LABEL.rsplit("/", 1)[-1]

__all__ = [*(k for k in wiring_keys.__all__ if k != "ON_DEMAND_FALLBACK"), "ON_DEMAND_FALLBACK",
           "ON_DEMAND_FALLBACK_LABEL"]
