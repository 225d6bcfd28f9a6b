"""The repository root and the size switch are each defined once (issue 16).

* ``helpers.book.ROOT`` is the only computation of the repository root in ``src/`` and
  ``tests/`` (a file under ``tools/`` finds the root to put ``src/`` on the path before it can
  import the package, so it may compute it);
* ``helpers.bench.sizes.SIZE_ENV`` and ``FORCE_CPU_ENV`` are the only spellings of the size
  switch's variables in Python code: no string ``"BOOK_SIZE"`` and no keyword ``BOOK_SIZE=``
  elsewhere (docstrings and comments may name them).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

from helpers.bench.sizes import FORCE_CPU_ENV, SIZE_ENV
from helpers.book import ROOT

# Files other work had open this session; tools/rename_after_merge.py fixes them and empties
# this set.
PENDING_FILES: set = set()

PARENTS = re.compile(r"Path\(__file__\)\.resolve\(\)\.parents\[(\d)\]")


def python_files():
    for top in ("src", "tests"):
        yield from sorted((ROOT / top).rglob("*.py"))
    yield ROOT / "conftest.py"


def root_computations(path: Path, text: str) -> list[int]:
    """Lines of ``text`` (the file at ``path``) that compute the repository root."""
    return [text.count("\n", 0, m.start()) + 1 for m in PARENTS.finditer(text)
            if path.resolve().parents[int(m.group(1))] == ROOT]


def spelled_switch(text: str) -> list[int]:
    """Lines of ``text`` that spell a size-switch variable: a string that is exactly its name,
    or a keyword argument of that name."""
    names = {SIZE_ENV, FORCE_CPU_ENV}
    lines = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Constant) and node.value in names:
            lines.append(node.lineno)
        elif isinstance(node, ast.keyword) and node.arg in names:
            lines.append(node.value.lineno)
    return sorted(lines)


def offenders():
    out = {}
    for path in python_files():
        rel = str(path.relative_to(ROOT))
        text = path.read_text()
        found = []
        if rel != "src/helpers/book.py":
            found += [f"{rel}:{n}: computes the root (use helpers.book.ROOT)"
                      for n in root_computations(path, text)]
        if rel != "src/helpers/bench/sizes.py":
            found += [f"{rel}:{n}: spells the size switch (use helpers.bench.sizes.SIZE_ENV)"
                      for n in spelled_switch(text)]
        if found:
            out[rel] = found
    return out


def test_root_and_size_switch_are_defined_once():
    bad = offenders()
    assert [m for rel, ms in sorted(bad.items()) if rel not in PENDING_FILES for m in ms] == []


def test_pending_files_still_need_the_fix():
    assert sorted(PENDING_FILES - set(offenders())) == []


def test_the_checks_can_fail(tmp_path):
    deep = ROOT / "tests" / "book" / "x.py"
    call = "Path(__file__)" + ".resolve().parents"   # split, so this file does not match
    assert root_computations(deep, f"ROOT = {call}[2]\n") == [1]
    assert root_computations(deep, f"HERE = {call}[0]\n") == []
    code = ('import os\nos.environ["BOOK_SIZE"] = "small"\nf(BOOK_FORCE_CPU="1")\n'
            '"""BOOK_SIZE=small in a docstring is fine"""\n')
    assert spelled_switch(code) == [2, 3]
