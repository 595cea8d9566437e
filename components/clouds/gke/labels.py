"""GCP resource labels (on clusters and node pools): what GCP accepts.

Keys are lowercase letters, digits, ``_`` and ``-``, start with a letter, at
most 63 characters; values the same without the first-letter rule (or empty);
at most 64 labels on a resource.
"""

import re

from ...base import Issues

GCP_LABEL_KEY = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")
GCP_LABEL_VALUE = re.compile(r"^[a-z0-9_-]{0,63}$")
MAX_GCP_LABELS = 64


def gcp_label_issues(labels: dict[str, str], field: str = "labels") -> Issues:
    """Labels GCP would refuse as resource labels, in argument names."""
    issues: Issues = []
    if len(labels) > MAX_GCP_LABELS:
        issues.append((field, f"{len(labels)} labels; GCP allows at most {MAX_GCP_LABELS}"))
    for key, value in labels.items():
        if not GCP_LABEL_KEY.match(key):
            issues.append((f"{field}.{key}", "a GCP label key is lowercase letters, digits, '_' and '-', "
                                             "starts with a letter, at most 63 characters"))
        if not GCP_LABEL_VALUE.match(value):
            issues.append((f"{field}.{key}", f"{value!r}: a GCP label value is lowercase letters, digits, "
                                             "'_' and '-', at most 63 characters"))
    return issues
