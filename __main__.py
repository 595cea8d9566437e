"""gpu-fungibility: load the stack config, pick the cloud, compose."""

from stacks import compose
from stacks.loader import load_stack

compose(load_stack())
