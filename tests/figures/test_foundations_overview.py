"""Tests of helpers.figures.foundations_overview, and of the index page's list of written pages."""

import re

import pytest

from helpers.figures import foundations_overview as fo

from helpers.book import ROOT  # the repository root, computed once


def test_thread_diagram_marks_written_pages_and_rejects_unknown():
    none, one = fo.thread_diagram([]), fo.thread_diagram(["memory-hierarchy"])
    assert none.svg.count('stroke-dasharray="5 4"') == len(fo.PAGES)
    assert one.svg.count('stroke-dasharray="5 4"') == len(fo.PAGES) - 1
    assert len(fo.PAGES) == 13 and len({p.slug for p in fo.PAGES}) == 13
    with pytest.raises(ValueError, match="unknown"):
        fo.thread_diagram(["no-such-page"])


def test_the_index_page_lists_exactly_the_written_pages():
    text = (ROOT / "foundations" / "overview.md").read_text()
    listed = set(re.findall(r'"([a-z-]+)"', re.search(r"WRITTEN = \[([^\]]*)\]", text).group(1)))
    on_disk = {p.slug for p in fo.PAGES if (ROOT / "foundations" / f"{p.slug}.md").exists()}
    assert listed == on_disk, "update WRITTEN in foundations/overview.md"
