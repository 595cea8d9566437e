"""GKE's support calendar per Kubernetes minor, DRA there, and each release channel's default minor (cited,
read on :data:`gpu_fungibility.support_calendar.AS_OF`).
"""

import datetime as dt

from ...support_calendar import MinorSupport

GKE_SCHEDULE = ("GKE release schedule, https://cloud.google.com/kubernetes-engine/docs/release-schedule, as "
                "recorded by endoflife.date/api/v1/products/google-kubernetes-engine (generated 2026-04-10): "
                "1.34 end of life 2026-10-01, 1.35 end of life 2027-04-11; the schedule read 2026-11: "
                "1.36 end of standard support 2027-08-09")
GKE_DRA = ("GKE 'Prepare GKE infrastructure for DRA workloads' (how-to/set-up-dra): GKE Standard 1.34 or later; "
           "no node auto-provisioning, no automatic GPU driver installation, no time-sharing, MIG or MPS")

#: Standard support and DRA per Kubernetes minor (see :mod:`gpu_fungibility.support_calendar`).
CALENDAR: dict[str, MinorSupport] = {
    "1.34": MinorSupport(dt.date(2026, 10, 1), "on", GKE_SCHEDULE, GKE_DRA),
    "1.35": MinorSupport(dt.date(2027, 4, 11), "on", GKE_SCHEDULE, GKE_DRA),
    "1.36": MinorSupport(dt.date(2027, 8, 9), "on", GKE_SCHEDULE, GKE_DRA),
}

#: The minor a new GKE cluster in each release channel gets by default (GKE release notes, per channel):
#: Regular 1.35.8-gke.1036000 (2026-09-17), Extended 1.35.8-gke.1225000 (2026-09-23); Stable defaulted to
#: 1.34.6-gke.1307000 on 2026-05-27 and, with 1.34 at end of life on 2026-10-01, cannot default below 1.35.
#: Rapid is left out: its default is not recorded here, so a Rapid cluster is modelled at its floor.
CHANNEL_DEFAULT_MINOR: dict[str, str] = {"REGULAR": "1.35", "STABLE": "1.35", "EXTENDED": "1.35"}
GKE_CHANNEL_SOURCE = ("GKE release notes per channel (gke-regular-channel-release-notes 2026-09-17, "
                      "gke-extended-channel-release-notes 2026-09-23, gke-stable-channel-release-notes 2026-05-27)")
