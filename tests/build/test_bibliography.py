"""The bibliography's labels read like the text's author-year citations (_ext/bibliography.py)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from helpers.book import ROOT  # the repository root, computed once
pybtex_db = pytest.importorskip("pybtex.database")


def _ext():
    spec = importlib.util.spec_from_file_location("bibliography", ROOT / "_ext" / "bibliography.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _entry(bib: str):
    return next(iter(pybtex_db.parse_string(bib, "bibtex").entries.values()))


def test_labels_name_one_two_or_many_authors_and_an_organization():
    ext = _ext()
    one = _entry("@misc{a, author={Ada Lovelace}, year={1843}, title={Notes}}")
    two = _entry("@misc{b, author={J. Dean and S. Ghemawat}, year={2004}, title={MapReduce}}")
    many = _entry("@misc{c, author={T. Dao and D. Fu and S. Ermon}, year={2022}, title={FA}}")
    org = _entry("@misc{d, author={{Python Software Foundation}}, year={2025}, title={os}}")
    none = _entry("@misc{e, organization={{NVIDIA}}, year={2024}, title={H200}}")
    assert [ext.author_year_label(e) for e in (one, two, many, org, none)] == [
        "Lovelace 1843", "Dean and Ghemawat 2004", "Dao et al. 2022",
        "Python Software Foundation 2025", "NVIDIA 2024"]


def test_the_books_labels_are_unique_and_free_of_markup():
    ext = _ext()
    db = pybtex_db.parse_file(str(ROOT / "references.bib"))
    entries = list(db.entries.values())
    labels = list(ext.AuthorYearLabels().format_labels(entries))
    assert len(set(labels)) == len(labels) == len(entries)
    assert not [lab for lab in labels if re.search(r"[{}\\]", lab)]
    assert all(re.search(r"(\d{4}|n\.d\.)[a-z]?$", lab) for lab in labels), labels


def test_no_raw_latex_reaches_the_rendered_bibliography():
    """pybtex prints ``\\texttt`` literally; the book's entries use plain text instead."""
    assert "\\texttt" not in (ROOT / "references.bib").read_text(encoding="utf-8")
