"""Reading the preflight's printed report in tests: the verdict line of each pool."""

VERDICT_WORDS = ("NOT SERVED", "SERVED", "WARN")
VERDICT_WIDTH = 12  # "NOT SERVED  " and the other words padded to it


def verdicts(out: str) -> dict[str, str]:
    """Pool -> its verdict word, from the one-line verdicts."""
    found = {}
    for line in out.splitlines():
        for word in VERDICT_WORDS:
            if line.startswith(word + " "):
                found[line[VERDICT_WIDTH:].split(":", 1)[0]] = word
                break
    return found


def line_of(out: str, pool: str) -> str:
    """The verdict line of one pool."""
    return next(line for line in out.splitlines() if line[VERDICT_WIDTH:].startswith(pool + ":"))
