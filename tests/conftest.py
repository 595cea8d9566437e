"""Fixtures shared by the test modules (see each module's docstring)."""

from tests.own_processes import started_policy_packs  # noqa: F401 - a fixture, registered by import
