"""Every page opens as a notebook through jupytext, with the page's code cells, no execution.

A reader who opens a page's ``.md`` in JupyterLab gets a notebook from jupytext. The oracle for
"the page's code cells" is an independent reading of the MyST source here (the ``{code-cell}``
fences, their options and bodies), not jupytext itself; the notebook jupytext makes must have
exactly those cells, in order, with their tags, and must survive a round trip back to MyST.
"""

from __future__ import annotations

import re

import pytest
import yaml

from helpers.book import toc_entries

jupytext = pytest.importorskip("jupytext")

from helpers.book import ROOT  # the repository root, computed once
PAGES = [f"{e}.md" for e in toc_entries(ROOT)]
FENCE = re.compile(r"^(`{3,}|~{3,})\{code-cell\}")


def myst_code_cells(text: str) -> list[tuple[str, list[str]]]:
    """``[(source, tags), ...]`` of the ``{code-cell}`` blocks of a MyST page, read directly."""
    lines, cells, i = text.splitlines(), [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, i = m.group(1), i + 1
        body = []
        while i < len(lines) and not (lines[i].startswith(fence[0] * len(fence))
                                      and not lines[i].strip(fence[0]).strip()):
            body.append(lines[i])
            i += 1
        i += 1
        options: dict = {}
        if body and body[0].strip() == "---":  # a YAML options block
            end = body.index("---", 1)
            options, body = yaml.safe_load("\n".join(body[1:end])) or {}, body[end + 1:]
        else:
            while body and body[0].startswith(":"):
                key, _, value = body.pop(0)[1:].partition(":")
                options[key.strip()] = yaml.safe_load(value)
            if options and body and not body[0].strip():
                body = body[1:]
        cells.append(("\n".join(body).strip("\n"), list(options.get("tags", []))))
    return cells


def test_the_reader_finds_cells_fences_tags_and_yaml_options():
    page = ("# T\n\n```{code-cell} ipython3\n:tags: [remove-cell]\n\nx = 1\n```\n\ntext\n\n"
            "````{code-cell} ipython3\n---\ntags: [hide-input]\n---\ns = '```'\n````\n")
    assert myst_code_cells(page) == [("x = 1", ["remove-cell"]), ("s = '```'", ["hide-input"])]


@pytest.mark.parametrize("page", PAGES)
def test_page_round_trips_through_jupytext_with_its_code_cells(page):
    text = (ROOT / page).read_text(encoding="utf-8")
    expected = myst_code_cells(text)
    nb = jupytext.reads(text, fmt="md:myst")
    got = [(c.source.strip("\n"), list(c.metadata.get("tags", [])))
           for c in nb.cells if c.cell_type == "code"]
    assert got == expected, f"{page}: jupytext's code cells differ from the page's"
    if expected:  # a notebook page names its kernel, so JupyterLab can run it
        assert nb.metadata.get("kernelspec", {}).get("language") == "python", page
    again = jupytext.reads(jupytext.writes(nb, fmt="md:myst"), fmt="md:myst")
    assert [(c.cell_type, c.source) for c in again.cells] == \
        [(c.cell_type, c.source) for c in nb.cells], f"{page}: the MyST round trip changed cells"


def test_jupyterlab_opens_pages_as_notebooks():
    """jupytext and JupyterLab are in the environment, Binder sets the default viewer, the
    README tells a local reader how to, and no jupytext.toml pairs pages with their reference
    notebooks (saving a page in JupyterLab must not overwrite the nbval references)."""
    pins = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    assert re.search(r"^jupytext==", pins, re.M) and re.search(r"^jupyterlab==", pins, re.M)
    command = "jupytext-config set-default-viewer"
    assert command in (ROOT / "binder" / "postBuild").read_text(encoding="utf-8")
    assert command in (ROOT / "README.md").read_text(encoding="utf-8")
    for name in ("jupytext.toml", ".jupytext.toml", ".jupytext", "jupytext.yml"):
        assert not (ROOT / name).exists(), f"{name} would pair pages with their references"


@pytest.mark.parametrize("page", PAGES)
def test_notebook_pages_have_the_notebook_launch_buttons_open(page):
    """The theme's Binder and Colab links open ``<page>.ipynb`` when it exists beside the page and
    the ``.md`` otherwise, which Colab cannot read: every page that runs code needs one."""
    text = (ROOT / page).read_text(encoding="utf-8")
    if myst_code_cells(text):
        assert (ROOT / page).with_suffix(".ipynb").is_file(), f"{page} has no reference notebook"
