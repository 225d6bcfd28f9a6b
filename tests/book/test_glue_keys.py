"""Each glue key is set once per page: a second glue with the same key silently replaces the
first everywhere on the page, so a number in the prose would change meaning."""

import json
from collections import Counter

import pytest

from helpers.book import is_notebook, page_sources

from helpers.book import ROOT  # the repository root, computed once
REFERENCES = [p.with_suffix(".ipynb") for p in page_sources(ROOT) if p.exists() and is_notebook(p)]


@pytest.mark.parametrize("notebook", REFERENCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_glue_key_is_set_twice(notebook):
    names = Counter()
    for cell in json.loads(notebook.read_text())["cells"]:
        for out in cell.get("outputs", []):
            scrap = out.get("metadata", {}).get("scrapbook")
            if scrap:
                names[scrap["name"]] += 1
    twice = sorted(k for k, n in names.items() if n > 1)
    assert not twice, f"{notebook.name}: glue keys set more than once: {twice}"
