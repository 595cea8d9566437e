"""EKS's support calendar per Kubernetes minor and DRA there (cited, read on
:data:`gpu_fungibility.support_calendar.AS_OF`).
"""

import datetime as dt

from ...support_calendar import MinorSupport

EKS_CALENDAR = ("EKS user guide, Kubernetes version lifecycle (kubernetes-versions), release calendar as recorded by "
                "endoflife.date/amazon-eks: end of standard support 1.34 2026-12-02, 1.35 2027-03-27; the "
                "calendar read 2026-11: 1.36 2027-08-02")
EKS_DRA = ("EKS user guide 'Manage hardware devices on Amazon EKS' (device-management, read 2026-11): DRA drivers "
           "recommended on Kubernetes 1.34 and later with managed node groups, Karpenter or self-managed nodes; "
           "EKS Auto Mode ships the NVIDIA DRA driver in its node runtime from Kubernetes 1.36 (this project "
           "builds managed node groups and installs the driver itself)")

#: Standard support and DRA per Kubernetes minor (see :mod:`gpu_fungibility.support_calendar`).
CALENDAR: dict[str, MinorSupport] = {
    "1.34": MinorSupport(dt.date(2026, 12, 2), "on", EKS_CALENDAR, EKS_DRA),
    "1.35": MinorSupport(dt.date(2027, 3, 27), "on", EKS_CALENDAR, EKS_DRA),
    "1.36": MinorSupport(dt.date(2027, 8, 2), "on", EKS_CALENDAR, EKS_DRA),
}
