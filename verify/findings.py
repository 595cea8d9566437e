"""What a check reports: one finding per broken promise, drift or note, naming the node, pool and pods."""

from __future__ import annotations

from dataclasses import dataclass, field

FAILURE, WARNING, OK = "failure", "warning", "ok"


@dataclass(frozen=True)
class Finding:
    check: str  # isolation | devices | replicas | drift | read
    severity: str  # failure | warning | ok
    message: str
    node: str = ""
    pool: str = ""
    pods: tuple[str, ...] = field(default_factory=tuple)
