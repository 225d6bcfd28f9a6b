"""Every module of ``src/helpers/`` (the lab runners aside) names the pages that use it, and
the names are right (tools/backrefs.py writes them; see its docstring)."""
from __future__ import annotations

import importlib.util

import pytest

from helpers.book import ROOT

_spec = importlib.util.spec_from_file_location("backrefs", ROOT / "tools" / "backrefs.py")
backrefs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(backrefs)

# Modules other work had open this session; `python tools/backrefs.py --write` (run by
# tools/rename_after_merge.py) writes their paragraph, and the script empties this set.
PENDING_MODULES: set = set()

USERS = backrefs.users()
MODULES = backrefs.modules()


def test_every_module_names_its_pages_or_says_library_only():
    missing = [m for m in MODULES if m not in PENDING_MODULES
               and backrefs.stated(backrefs.module_path(m)) is None]
    assert missing == [], "run: python tools/backrefs.py --write"


def test_every_paragraph_matches_the_pages_imports():
    wrong = {m: (backrefs.stated(backrefs.module_path(m)), backrefs.paragraph(USERS.get(m, [])))
             for m in MODULES if m not in PENDING_MODULES}
    wrong = {m: v for m, v in wrong.items() if v[0] != v[1]}
    assert wrong == {}, "run: python tools/backrefs.py --write"


def test_pending_modules_are_still_pending():
    done = [m for m in PENDING_MODULES
            if backrefs.stated(backrefs.module_path(m)) == backrefs.paragraph(USERS.get(m, []))]
    assert done == []


def test_named_pages_exist_and_import_the_module():
    for m in MODULES:
        text = backrefs.stated(backrefs.module_path(m)) or ""
        for page in backrefs.stated_pages(text):
            assert (ROOT / page).exists(), (m, page)
            assert page in USERS.get(m, []), (m, page)


def test_the_finder_sees_imports_of_every_kind():
    code = ("import helpers.models.roofline as rl\n"
            "from helpers import units\n"
            "from helpers.bench import pick\n"
            "def f():\n    from helpers.models import transformer as tm\n")
    got = backrefs.imported_modules(code)
    assert {"helpers.models.roofline", "helpers.units", "helpers.bench", "helpers.bench.sizes",
            "helpers.models.transformer"} <= got
    assert backrefs.imported_modules(":tags: [remove-cell]\n%matplotlib inline\nimport os\n") \
        == set()


@pytest.mark.parametrize("doc, expect", [
    ('"""A module.\n\nIt does x.\n"""\n', None),
    ('"""A module.\n\nUsed by: chapters/roofline.md.\n"""\n', "Used by: chapters/roofline.md."),
    ('"""A module.\n\nLibrary only: no page imports it.\n"""\n',
     "Library only: no page imports it."),
    ("X = 1\n", None),
])
def test_a_module_without_the_paragraph_is_caught(tmp_path, doc, expect):
    p = tmp_path / "m.py"
    p.write_text(doc)
    assert backrefs.stated(p) == expect


def test_rewrite_replaces_the_paragraph_and_keeps_the_rest(tmp_path):
    p = tmp_path / "m.py"
    p.write_text('"""A module.\n\n>>> 1 + 1\n2\n\nUsed by: a.md.\n"""\nX = 1\n')
    assert backrefs.rewrite(p, "Library only: no page imports it.")
    assert p.read_text() == ('"""A module.\n\n>>> 1 + 1\n2\n\n'
                             'Library only: no page imports it.\n"""\nX = 1\n')
    assert not backrefs.rewrite(p, "Library only: no page imports it.")
