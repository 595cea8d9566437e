"""AKS's support calendar per Kubernetes minor and DRA there (cited, read on
:data:`gpu_fungibility.support_calendar.AS_OF`).
"""

import datetime as dt

from ...support_calendar import MinorSupport

AKS_CALENDAR = ("MicrosoftDocs/azure-aks-docs articles/aks/supported-kubernetes-versions.md at f988e7e8 "
                "(2026-08-05), AKS Kubernetes release calendar: end of life 1.34 Nov 2026, 1.35 Mar 2027, "
                "1.36 Jun 2027, 1.37 Oct 2027")
AKS_DRA_OFF = ("azure-aks-docs security-bulletins/overview.md AKS-2025-008 (2025-06-19): AKS does not support or "
               "enable DynamicResourceAllocation in any supported version (then 1.30-1.33)")
AKS_DRA_UNCONFIRMED = ("no AKS document found says DRA is served from 1.34 (upstream GA, on by default); "
                       "AKS-2025-008 said AKS did not enable it up to 1.33, and Azure/AgentBaker@06836ee2 carries "
                       "only a preview node option (EnableManagedGPUDRA)")

#: Standard support and DRA per Kubernetes minor (see :mod:`gpu_fungibility.support_calendar`).
CALENDAR: dict[str, MinorSupport] = {
    "1.33": MinorSupport(dt.date(2026, 7, 1), "off", AKS_CALENDAR, AKS_DRA_OFF),
    "1.34": MinorSupport(dt.date(2026, 11, 1), "unconfirmed", AKS_CALENDAR, AKS_DRA_UNCONFIRMED),
    "1.35": MinorSupport(dt.date(2027, 3, 1), "unconfirmed", AKS_CALENDAR, AKS_DRA_UNCONFIRMED),
    "1.36": MinorSupport(dt.date(2027, 6, 1), "unconfirmed", AKS_CALENDAR, AKS_DRA_UNCONFIRMED),
    "1.37": MinorSupport(dt.date(2027, 10, 1), "unconfirmed", AKS_CALENDAR, AKS_DRA_UNCONFIRMED),
}
