"""GKE's name rules on a pool's arguments (see :mod:`gpu_fungibility.argument_rules` for the rules every
cloud shares)."""

import re

from ...base import Issues

#: GKE node pool names: 1-40 characters, a lowercase letter first, then lowercase letters, digits and
#: '-', not ending in '-' (the Container API refuses longer names; the Google provider's
#: google_container_node_pool ``name`` has the same 40-character limit). The name is also the value of
#: the ``cloud.google.com/gke-nodepool`` node label, which this rule keeps valid (63 at most).
NODE_POOL_NAME = re.compile(r"[a-z]([-a-z0-9]{0,38}[a-z0-9])?")


def node_pool_name_issues(name: str, key: str = "node_pool_name") -> Issues:
    if NODE_POOL_NAME.fullmatch(name):
        return []
    return [(key, f"{name!r} is not a GKE node pool name: 1-40 lowercase letters, digits and '-', starting "
                  "with a letter and not ending with '-' (it is also the cloud.google.com/gke-nodepool label)")]
