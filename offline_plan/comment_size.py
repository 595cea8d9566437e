"""Keep a PR-comment-ready report within what a GitHub comment can hold.

GitHub refuses a comment body over 65,536 characters (the REST and GraphQL APIs answer "Body is too
long (maximum is 65536 characters)"; docs.github.com, REST "Create an issue comment", body). A
summary.md or diff.md past that cannot be posted: it is cut at a line boundary, an open code fence
is closed, and a note says how much was left out and where the whole story is.
"""

from __future__ import annotations

#: GitHub's largest comment body, in characters.
GITHUB_COMMENT_LIMIT = 65_536
#: GitHub's largest job (step) summary, in bytes: a step's ``$GITHUB_STEP_SUMMARY`` over 1 MiB is not shown
#: ("$GITHUB_STEP_SUMMARY upload aborted, supports content up to a size of 1024k"; docs.github.com, Actions
#: workflow commands, "Adding a job summary": "maximum of 1MiB" per step).
GITHUB_STEP_SUMMARY_LIMIT = 1024 * 1024
_FENCE = "```"


CUT_MARK = "> **Cut:**"


def was_cut(text: str) -> bool:
    return CUT_MARK in text[-600:]


def fit_comment(text: str, where: str, limit: int = GITHUB_COMMENT_LIMIT) -> str:
    """``text`` unchanged when it fits ``limit``; else its head, cut at a line, with a note naming ``where``."""
    if len(text) <= limit:
        return text
    note = (f"\n\n{CUT_MARK} this report has {len(text):,} characters and a GitHub comment holds at most "
            f"{limit:,}; the last {{left:,}} characters are left out. {where}\n")
    room = limit - len(note) - len(_FENCE) - 32
    head = text[:room]
    head = head[:head.rfind("\n") + 1] if "\n" in head else head
    if head.count(_FENCE) % 2:
        head += _FENCE + "\n"
    return head.rstrip("\n") + note.format(left=len(text) - len(head))


def fit_step_summary(text: str, where: str, limit: int = GITHUB_STEP_SUMMARY_LIMIT) -> str:
    """``text`` unchanged when its UTF-8 encoding fits ``limit`` bytes; else its head, cut at a line, with a
    note naming ``where`` (the whole report), so the CI job can append it to ``$GITHUB_STEP_SUMMARY``."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    note = (f"\n\n{CUT_MARK} this report has {len(data):,} bytes and a GitHub job summary holds at most "
            f"{limit:,}; the last {{left:,}} bytes are left out. {where}\n")
    room = limit - len(note.encode("utf-8")) - len(_FENCE) - 64
    head = data[:room].decode("utf-8", errors="ignore")
    head = head[:head.rfind("\n") + 1] if "\n" in head else head
    if head.count(_FENCE) % 2:
        head += _FENCE + "\n"
    return head.rstrip("\n") + note.format(left=len(data) - len(head.encode("utf-8")))
