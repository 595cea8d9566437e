"""The README is the user's entry point: it must match the code."""

from __future__ import annotations

from pathlib import Path

from stacks.reference import markdown

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_readme_starts_with_the_two_commands():
    blocks = README.split("```sh\n")
    first_block = blocks[1].split("```")[0].splitlines()
    assert first_block[0].startswith("make plan STACK=dev")
    assert first_block[1].startswith("make test")


def test_config_reference_matches_the_models():
    start = "<!-- config-reference:start -->\n"
    embedded = README[README.index(start) + len(start):README.index("<!-- config-reference:end -->")]
    assert embedded == markdown(), "README config reference is stale: run python -m stacks.reference"


def test_ci_calls_make_test():
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_linked_docs_exist():
    import re

    for target in re.findall(r"\]\(((?:docs/)?[\w./-]+\.md)\)", README):
        assert (ROOT / target).is_file(), f"README links to missing {target}"


def test_the_rule_counts_in_the_docs_match_the_pack():
    from policies.rules import POLICIES

    words = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
             "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]
    assert f"CrossGuard pack with {words[len(POLICIES)]} rules" in README
    assert f"{words[len(POLICIES) - 1]} more rules" in (ROOT / "docs" / "policies.md").read_text()
