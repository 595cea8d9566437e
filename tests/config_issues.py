"""Helpers for tests that feed a stack config to the loader and read what it refuses."""

import copy

import pytest

from stacks.loader import ConfigError, parse_stack_config


def with_cluster(base: dict, **cluster) -> dict:
    """A deep copy of ``base`` with ``cluster`` keys replaced."""
    raw = copy.deepcopy(base)
    raw["cluster"].update(cluster)
    return raw


def config_issues(raw: dict) -> dict[str, str]:
    """The loader's refusal of ``raw``, as {key path: message}; fails the test when the config is accepted."""
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(raw)
    return dict(caught.value.issues)
