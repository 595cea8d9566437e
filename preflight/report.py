"""Plain-text tables and one-line verdicts shared by the GKE and EKS preflights."""

from __future__ import annotations

from collections.abc import Sequence

#: verdict -> the word that starts its line (exit 1 only for "fail").
VERDICT_WORDS = {"served": "SERVED", "warn": "WARN", "fail": "NOT SERVED"}


def verdict_of(failures: Sequence[str], warnings: Sequence[str]) -> str:
    return "fail" if failures else "warn" if warnings else "served"


def verdict_line(verdict: str, pool: str, text: str) -> str:
    return f"{VERDICT_WORDS[verdict]:<12}{pool}: {text}"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Left-aligned columns, a dashed rule under the header, trailing spaces removed."""
    all_rows = [tuple(header), *(tuple(r) for r in rows)]
    widths = [max(len(r[i]) for r in all_rows) for i in range(len(header))]
    lines = []
    for i, row in enumerate(all_rows):
        lines.append("  ".join(cell.ljust(widths[j]) for j, cell in enumerate(row)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def number(value: float | None) -> str:
    """Quota figures arrive as JSON floats; show 16.0 as 16 and None as '-'."""
    if value is None:
        return "-"
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
