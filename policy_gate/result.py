"""What a gate run found: the violations, the pack and its policies' levels; the error when it could not run."""

from __future__ import annotations

from dataclasses import dataclass, field

#: The URN of a stack policy's violation that names no resource, when the plan has no stack resource.
STACK_PLACEHOLDER = "(stack)"


class GateError(ValueError):
    """The gate could not run: bad plan, bad policy config, or the pack failed to start."""


@dataclass(frozen=True)
class Violation:
    level: str  # "mandatory" | "advisory"
    policy: str
    urn: str
    message: str

    def line(self) -> str:
        return f"[{self.level}] {self.policy}  {self.urn}: {self.message}"


@dataclass
class GateResult:
    violations: list[Violation]
    pack_name: str
    pack_version: str
    policies: list[tuple[str, str]]  # (name, effective level)
    resources_checked: int
    notes: list[str] = field(default_factory=list)
    #: Seconds: "read" (until the plan is read and encoded; resource policies run meanwhile), "analyze" (until
    #: the last resource policy answered, from the start), "stack" (the stack policies, from when they were sent).
    timings: dict[str, float] = field(default_factory=dict)
    #: Pack processes the run used.
    processes: int = 1

    @property
    def mandatory(self) -> list[Violation]:
        return [v for v in self.violations if v.level == "mandatory"]

    @property
    def advisory(self) -> list[Violation]:
        return [v for v in self.violations if v.level != "mandatory"]

    @property
    def exit_code(self) -> int:
        return 1 if self.mandatory else 0

    def of_policy(self, name: str) -> list[Violation]:
        return [v for v in self.violations if v.policy == name]
