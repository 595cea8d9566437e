"""Keep a PR-comment-ready report within what a GitHub comment can hold.

GitHub refuses a comment body over 65,536 characters (the REST and GraphQL APIs answer "Body is too
long (maximum is 65536 characters)"; docs.github.com, REST "Create an issue comment", body). A
summary.md or diff.md past that cannot be posted: it is cut at a line boundary, an open code fence
is closed, and a note says how much was left out and where the whole story is.
"""

from __future__ import annotations

#: GitHub's largest comment body, in characters.
GITHUB_COMMENT_LIMIT = 65_536
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
