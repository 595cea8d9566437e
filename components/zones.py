"""What an offline zone check judges, and the shapes every cloud's check shares.

Which zones each cloud region has, and where an accelerator is offered, as far as recorded, is each cloud's
(``clouds/<cloud>/regions.py``, with its sources), and its profile's ``zone_findings`` judges a stack's location
and zones against it. Offline checks only: the live offering of a project, account or subscription is the
preflight's job (``make preflight``). Everything errs on the side that still deploys: a region or accelerator
not recorded is not judged, and a zone missing from a recorded list is a warning, never an error (the clouds
add zones; these lists are dated).
"""

import difflib

#: ``(key path, zone)`` pairs to judge, and per pool ``(pool name, accelerator type, its zones, own zones?,
#: its machine types)``.
Zoned = list[tuple[str, str]]
PoolZones = list[tuple[str, str, list[str], bool, list[str]]]
Findings = tuple[list[tuple[str, str]], list[str]]

LOCATION_KEY = "cluster.location"


def nearest(name: str, known: frozenset[str]) -> list[str]:
    """Up to three recorded names close to ``name`` (a suggestion for a typo)."""
    return difflib.get_close_matches(name.lower(), sorted(known), n=3, cutoff=0.6)
