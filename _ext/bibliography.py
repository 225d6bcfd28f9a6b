"""The bibliography's labels in the same author-year form as the citations in the text.

The text cites author-year (``bibtex_reference_style: author_year``: "Dao et al. (2022)"), but
sphinxcontrib-bibtex's default bibliography style labels entries the alpha way
(``[PythonSFoundation25a]``), so a reader cannot match a citation to its entry. This registers a
pybtex formatting style, ``book_author_year`` (``bibtex_default_style`` in ``_config.yml``),
whose labels are the citation's words: one author's last name, two joined by "and", three or
more as the first "et al.", then the year, with a, b, ... where two entries would read the same.
Braces and LaTeX markup in names are dropped (``{Python Software Foundation}`` reads as written).
"""

from __future__ import annotations

import re
from collections import Counter

from pybtex.plugin import register_plugin
from pybtex.richtext import Text
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle


def _plain(latex: str) -> str:
    try:
        text = Text.from_latex(latex).render_as("text")
    except Exception:  # malformed markup: keep the letters
        text = latex
    return re.sub(r"[{}]", "", text).strip()


def _last(person) -> str:
    return _plain(" ".join(person.prelast_names + person.last_names))


def author_year_label(entry) -> str:
    """``Name Year``, ``A and B Year`` or ``A et al. Year`` for a pybtex entry."""
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    if not people:
        who = _plain(entry.fields.get("organization") or entry.fields.get("publisher")
                     or entry.fields.get("title") or entry.key)
    elif len(people) == 1:
        who = _last(people[0])
    elif len(people) == 2:
        who = f"{_last(people[0])} and {_last(people[1])}"
    else:
        who = f"{_last(people[0])} et al."
    year = _plain(entry.fields.get("year", ""))
    return f"{who} {year}".strip()


class AuthorYearLabels(BaseLabelStyle):
    """pybtex labels that read like the text's author-year citations."""

    def format_labels(self, sorted_entries):
        labels = [author_year_label(e) for e in sorted_entries]
        count, seen = Counter(labels), Counter()
        for label in labels:
            if count[label] == 1:
                yield label
            else:
                yield label + chr(ord("a") + seen[label])
                seen[label] += 1


class AuthorYearStyle(UnsrtStyle):
    """unsrt's entry formatting, author-year labels, sorted by author, year and title."""

    default_label_style = AuthorYearLabels
    default_sorting_style = "author_year_title"


def setup(app):
    register_plugin("pybtex.style.labels", "book_author_year", AuthorYearLabels)
    register_plugin("pybtex.style.formatting", "book_author_year", AuthorYearStyle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
