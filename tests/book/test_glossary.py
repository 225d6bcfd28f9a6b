"""The glossary: one sorted block, every term once, every definition under its term."""

import re

from helpers.book import ROOT  # the repository root, computed once


def glossary_entries():
    text = (ROOT / "appendix" / "glossary.md").read_text()
    blocks = re.findall(r"```\{glossary\}\n(.*?)\n```", text, re.S)
    assert len(blocks) == 1, "the glossary must be one {glossary} block"
    body = "\n".join(l for l in blocks[0].split("\n") if not l.startswith(":"))
    return [c.strip("\n") for c in re.split(r"\n\s*\n", body) if c.strip()]


def test_every_paragraph_starts_with_its_term():
    orphans = [c.split("\n")[0] for c in glossary_entries() if c.startswith(" ")]
    assert not orphans, f"definitions with no term above them: {orphans}"


def test_terms_are_unique_and_sorted():
    terms = [c.split("\n")[0] for c in glossary_entries()]
    dupes = sorted({t for t in terms if terms.count(t) > 1})
    assert not dupes, f"terms defined twice: {dupes}"
    assert terms == sorted(terms, key=str.lower), "glossary terms must be in alphabetical order"
