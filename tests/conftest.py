"""Fixtures shared by the test modules, and the date every policy pack a test starts judges support on.

The support rules (policies/rules/support.py) judge a cluster's minor against a date: without one fixed here, a
shipped stack would be refused the day its minor leaves standard support and ``make test`` would go red with
no change to the code. Every pack a test starts (a subprocess) inherits this environment.
"""

import os

from gpu_fungibility.support_calendar import AS_OF

from tests.own_processes import started_policy_packs  # noqa: F401 - a fixture, registered by import

os.environ["GPU_FUNGIBILITY_JUDGE_DATE"] = AS_OF.isoformat()
