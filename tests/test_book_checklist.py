"""Tests of helpers.book_checklist: every item is well formed and links a page of the map."""

from __future__ import annotations

import re

import pytest
import yaml

from helpers import book_checklist, book_map


def test_every_item_links_pages_that_the_map_knows():
    items = book_checklist.load_checklist()
    labels = book_map.load_map()["pages"]
    assert set(items) <= set(book_map.LAYERS) and len(items) >= 5
    for layer_items in items.values():
        for item in layer_items:
            assert item["q"].endswith("?") and item["do"]
            assert all(p in labels for p in item["pages"])


def test_markdown_links_written_pages_and_marks_the_others():
    text = str(book_checklist.checklist_markdown())
    toc = book_map.built_pages()
    data = book_map.load_map()
    for label in re.findall(r"<(sec-[\w-]+)>`", text):
        assert book_map.is_written(label, data, toc)
    # Layers appear from the top of the stack down.
    heads = re.findall(r"^## (L\d)", text, re.M)
    assert heads == sorted(heads, reverse=True)
    n_items = sum(len(v) for v in book_checklist.load_checklist().values())
    assert text.count("\n- **") + text.startswith("- **") == n_items


@pytest.mark.parametrize("bad, match", [
    ({"L9": []}, "unknown layer"),
    ({"L1": [{"q": "x?", "do": "y"}]}, "needs q, do and pages"),
    ({"L1": [{"q": "x?", "do": "y", "pages": ["sec-nowhere"]}]}, "not on the map"),
])
def test_bad_checklists_are_rejected(tmp_path, bad, match):
    path = tmp_path / "c.yml"
    path.write_text(yaml.safe_dump(bad))
    with pytest.raises(ValueError, match=match):
        book_checklist.load_checklist(path)
