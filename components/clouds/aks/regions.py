"""Whether an AKS location is shaped like an Azure region's name (see :mod:`gpu_fungibility.zones` for what an
offline zone check judges).

- Azure region names are lowercase letters and digits (``westeurope``, ``eastus2``: the ``name`` column of
  ``az account list-locations``; learn.microsoft.com/azure/reliability/regions-list). No list of regions is
  recorded here, so only the name's shape is judged: ``west-europe`` or ``West Europe`` is refused with the
  name to write. Which GPU sizes a region offers is not recorded for Azure (``make preflight`` reads it).
- Azure availability zones are "1", "2" and "3" in every region that has zones
  (learn.microsoft.com/azure/reliability/availability-zones-overview); the AKS composition refuses others.
"""

import re

from ...zones import LOCATION_KEY, Findings

_AZURE_REGION = re.compile(r"[a-z][a-z0-9]*")



def azure_findings(location: str) -> Findings:
    """An Azure location not shaped like a region's name (``west-europe``, ``West Europe``): an error naming
    the name to write. Which regions exist and which GPU sizes each offers is not recorded here."""
    if _AZURE_REGION.fullmatch(location):
        return [], []
    squeezed = re.sub(r"[^a-z0-9]", "", location.lower())
    hint = f"write {squeezed!r}" if squeezed else "write a region name such as 'westeurope'"
    return [(LOCATION_KEY, f"{location!r} is not an Azure region name: region names are lowercase letters and "
                           f"digits (the name column of `az account list-locations`); {hint}")], []
