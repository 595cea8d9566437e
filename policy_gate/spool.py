"""The plan's resources, each encoded once as the Analyzer's requests, in a temporary file (see :class:`Spool`)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from policy_gate.plan import STACK_TYPE, PlanResource, iter_plan_resources


class Spool:
    """The plan's resources, each encoded once (see analyzer.encode_*), in a temporary file.

    In memory: per resource its URN, type, provider reference and where its bytes are; the providers' whole
    resources (few, needed by every request); the index of each URN's last step (a URN's last step wins).
    Resources are added as the plan is read (:meth:`read`); a request can be read back at any time.
    """

    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile(prefix="policy-gate-")
        #: (urn, type, provider ref, offset, core, extra) per step with a resource, in plan order.
        self.entries: list[tuple[str, str, str, int, int, int]] = []
        self.latest: dict[str, int] = {}
        self.providers: dict[str, PlanResource] = {}
        #: Entries whose step has outputs: the length of their AnalyzeStack fields 1-5, stored first in ``extra``.
        self.stack_cores: dict[int, int] = {}
        self._provider_bytes: dict[str, bytes] = {}
        self._written = 0
        self._flushed = 0
        #: Providers whose inputs changed after requests carrying them may have been sent (a URN seen again).
        self.changed_providers: set[str] = set()
        #: The size the stack message would have if no URN came back (an upper bound of it, grown as read).
        self.stack_bytes = 0

    @classmethod
    def of(cls, plan: Mapping[str, Any] | str | Path) -> Spool:
        """The whole plan spooled at once."""
        spool = cls()
        try:
            for _ in spool.read(plan):
                pass
        except BaseException:
            spool.close()
            raise
        return spool

    def read(self, plan: Mapping[str, Any] | str | Path) -> Iterator[int]:
        """Spool the plan's resources one step at a time, yielding each one's entry index."""
        for _, resource in iter_plan_resources(plan):
            yield self.add(resource)
        self.file.flush()
        self._flushed = self._written

    def add(self, resource: PlanResource) -> int:
        from policy_gate.analyzer import encode_core, encode_extra

        core, extra = encode_core(resource), encode_extra(resource)
        index = len(self.entries)
        if resource.outputs is not None:  # AnalyzeStack judges the outputs: their own fields 1-5, before 7-9
            stack_core = encode_core(resource, resource.outputs)
            self.stack_cores[index] = len(stack_core)
            extra = stack_core + extra
        self.file.write(core)
        self.file.write(extra)
        self.entries.append((resource.urn, resource.type, resource.provider, self._written, len(core), len(extra)))
        self._written += len(core) + len(extra)
        self.latest[resource.urn] = index
        self.stack_bytes += len(core) + len(extra) + 8
        if resource.type.startswith("pulumi:providers:"):
            if resource.urn in self.providers:
                self.changed_providers.add(resource.urn)
                for reference in [r for r in self._provider_bytes if provider_urn(r) == resource.urn]:
                    del self._provider_bytes[reference]
            self.providers[resource.urn] = resource
        return index

    @property
    def count(self) -> int:
        return len(self.latest)

    def is_latest(self, index: int) -> bool:
        return self.latest[self.entries[index][0]] == index

    def provider_read(self, index: int) -> bool:
        """Whether the entry's provider is known (none, or its step read): its request can be built."""
        reference = self.entries[index][2]
        return not reference or provider_urn(reference) in self.providers

    def request(self, index: int) -> bytes:
        """The entry's AnalyzeRequest."""
        _, _, provider, offset, core, _ = self.entries[index]
        if offset + core > self._flushed:
            self.file.flush()
            self._flushed = self._written
        return os.pread(self.file.fileno(), core, offset) + self.provider_bytes(provider)

    def stack_urn(self) -> str:
        return next((entry[0] for i, entry in enumerate(self.entries)
                     if entry[1] == STACK_TYPE and self.latest[entry[0]] == i), "")

    def provider_bytes(self, reference: str) -> bytes:
        if reference not in self._provider_bytes:
            from policy_gate.analyzer import encode_provider

            self._provider_bytes[reference] = encode_provider(reference, self.providers)
        return self._provider_bytes[reference]

    def stack_message_size(self) -> int:
        """The size of the AnalyzeStackRequest holding every resource, known before it is built."""
        total = 0
        for i, (urn, _, provider, _, core, extra) in enumerate(self.entries):
            if self.latest[urn] == i:
                size = len(self.provider_bytes(provider)) + (extra if i in self.stack_cores else core + extra)
                total += 1 + len(_varint(size)) + size
        return total

    def stack_message(self) -> bytes:
        """The AnalyzeStackRequest: every resource's AnalyzerResource, framed, in plan order."""
        from policy_gate.analyzer import frame

        return b"".join(frame(1, item) for *_, item in self)

    def __iter__(self) -> Iterator[tuple[str, str, bytes, bytes]]:
        """(urn, type, AnalyzeRequest, AnalyzerResource) of each resource, in order, a URN at its last step."""
        self.file.flush()
        self._flushed = self._written
        self.file.seek(0)
        position = 0
        for i, (urn, type_, provider, offset, core, extra) in enumerate(self.entries):
            if self.latest[urn] != i:
                continue
            if position != offset:
                self.file.seek(offset)
            data = self.file.read(core + extra)
            position = offset + core + extra
            head = data[:core] + self.provider_bytes(provider)
            if i in self.stack_cores:  # the outputs' fields 1-5, the provider, then fields 7-9
                split = core + self.stack_cores[i]
                yield urn, type_, head, data[core:split] + self.provider_bytes(provider) + data[split:]
            else:
                yield urn, type_, head, head + data[core:]

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> Spool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def provider_urn(reference: str) -> str:
    """The provider URN of a step's provider reference (``<urn>::<id>``), as analyzer.provider_message reads it."""
    return reference.rsplit("::", 1)[0] if reference.count("::") >= 4 else reference


def _varint(value: int) -> bytes:
    from policies.wire import varint

    return varint(value)
