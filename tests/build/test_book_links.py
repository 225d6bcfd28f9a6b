"""Launch buttons and notebook downloads, on a tiny book built with the book's own configuration.

The tiny book (two pages: an executed notebook page in a subfolder, with its reference notebook
beside it as ``tools/nb_refs.py`` writes it, and a plain markdown page) is built twice with
``jupyter-book build`` and the real ``_config.yml`` and ``_ext/``: with ``BOOK_REPOSITORY_URL``
set, the notebook page's Binder and Colab links open ``chapters/demo.ipynb`` on the right
repository and branch; without it, no launch or repository link exists at all. Both builds
offer the executed notebook, with its outputs, in the download menu: the first executes the
page, the second takes its outputs from the first one's execution cache.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from helpers.notebook_prose import resolve_markdown

from helpers.book import ROOT  # the repository root, computed once
JB = Path(sys.executable).with_name("jupyter-book")

NOTEBOOK_PAGE = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

(sec-demo)=
# Demo notebook

```{code-cell} ipython3
from myst_nb import glue
print(6 * 7)
glue("demo_answer", 6 * 7 / 10, display=False)
```

The answer is {glue:text}`demo_answer:.2f`, a {term}`demo` number {cite:p}`demo`.
"""

TOC = """format: jb-book
root: intro
chapters:
  - file: chapters/demo
"""


def _spec():
    spec = importlib.util.spec_from_file_location("book_links", ROOT / "_ext" / "book_links.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Anchors(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.hrefs.append(href)


def _hrefs(html: Path) -> list[str]:
    parser = _Anchors()
    parser.feed(html.read_text(encoding="utf-8"))
    return parser.hrefs


def _tiny_book(where: Path) -> Path:
    book = where / "book"
    (book / "chapters").mkdir(parents=True)
    shutil.copy(ROOT / "_config.yml", book)
    shutil.copytree(ROOT / "_ext", book / "_ext", ignore=shutil.ignore_patterns("__pycache__"))
    (book / "_vendor_static").mkdir()  # offline_assets serves it; the tiny book needs no assets
    (book / "references.bib").write_text(
        "@misc{demo, title={Demo}, author={A. Author}, year={2026}}\n", encoding="utf-8")
    (book / "_toc.yml").write_text(TOC, encoding="utf-8")
    (book / "intro.md").write_text("# Tiny book\n\nA page with no code.\n\n```{glossary}\n"
                                   "demo\n  A word for the test.\n```\n\n```{bibliography}\n```\n",
                                   encoding="utf-8")
    (book / "chapters" / "demo.md").write_text(NOTEBOOK_PAGE, encoding="utf-8")
    # The committed reference notebook beside the page (tools/nb_refs.py writes these).
    jupytext = pytest.importorskip("jupytext")
    jupytext.write(jupytext.reads(NOTEBOOK_PAGE, fmt="md:myst"), book / "chapters" / "demo.ipynb")
    return book


def _build(book: Path, out: Path, **env_extra) -> Path:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOOK_REPOSITORY")}
    env.update(env_extra)
    proc = subprocess.run([str(JB), "build", "-W", "-n", "--keep-going", "--path-output", str(out), str(book)], env=env,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out / "_build" / "html"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    if not JB.exists():
        pytest.skip("jupyter-book is not installed in this environment")
    tmp = tmp_path_factory.mktemp("tiny")
    book = _tiny_book(tmp)
    published = _build(book, tmp / "published",
                       BOOK_REPOSITORY_URL="https://github.com/example-org/ai-perf-book",
                       BOOK_REPOSITORY_BRANCH="release")
    # The second build takes every output from the first one's execution cache, as the book's
    # own builds mostly do (myst-nb then writes jupyter_execute/ without outputs).
    shutil.copytree(tmp / "published" / "_build" / ".jupyter_cache",
                    tmp / "local" / "_build" / ".jupyter_cache")
    local = _build(book, tmp / "local")
    return published, local


def test_launch_buttons_open_the_pages_reference_notebook(built):
    published, _ = built
    hrefs = _hrefs(published / "chapters" / "demo.html")
    binder = [h for h in hrefs if h.startswith("https://mybinder.org/")]
    colab = [h for h in hrefs if h.startswith("https://colab.research.google.com/")]
    assert binder == ["https://mybinder.org/v2/gh/example-org/ai-perf-book/release"
                      "?urlpath=lab/tree/chapters/demo.ipynb"], hrefs
    assert colab == ["https://colab.research.google.com/github/example-org/ai-perf-book/blob/"
                     "release/chapters/demo.ipynb"], hrefs
    assert "https://github.com/example-org/ai-perf-book" in hrefs  # the repository button
    # A page with no code has nothing to launch.
    assert not any("mybinder" in h or "colab" in h for h in _hrefs(published / "intro.html"))


def test_without_a_repository_url_there_are_no_launch_or_repository_links(built):
    _, local = built
    for page in ("chapters/demo.html", "intro.html"):
        html = (local / page).read_text(encoding="utf-8")
        assert "mybinder" not in html and "colab" not in html, page
        assert "launch-buttons" not in html and "source-repository-button" not in html, page
        assert not any(h.startswith(("https://github.com", "https://gitlab.com"))
                       for h in _hrefs(local / page)), page


@pytest.mark.parametrize("which", [0, 1])
def test_download_menu_offers_the_executed_notebook_with_outputs(built, which):
    html = built[which]
    hrefs = _hrefs(html / "chapters" / "demo.html")
    assert "../_sources/chapters/demo.ipynb" in hrefs, hrefs
    nb = json.loads((html / "_sources" / "chapters" / "demo.ipynb").read_text(encoding="utf-8"))
    outputs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    assert any("42" in "".join(o.get("text", "")) for o in outputs), outputs
    # ... and its prose reads as the page does: the glued number, no MyST placeholders.
    prose = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "The answer is 4.20, a demo number [demo]." in prose, prose
    assert "{glue" not in prose and "(sec-demo)=" not in prose
    # The bibliography labels its entry as the text cites it (_ext/bibliography.py).
    intro = (html / "intro.html").read_text(encoding="utf-8")
    assert "Author 2026" in intro and "[Aut26]" not in intro
    # The plain page offers its source only.
    assert not any(h.endswith(".ipynb") for h in _hrefs(html / "intro.html"))
    # _ext/offline_assets drops the theme's unused icon script from every written page.
    assert not [p for p in html.rglob("*.html") if "fontawesome.js" in p.read_text(encoding="utf-8")]


@pytest.mark.parametrize("which", [0, 1])
def test_every_page_is_exported_as_plain_markdown_and_indexed_in_llms_txt(built, which):
    """For readers who study with an assistant: each page as markdown beside its HTML, numbers
    resolved, code and outputs fenced; llms.txt lists the pages in order with their links."""
    html = built[which]
    demo = (html / "chapters" / "demo.md").read_text(encoding="utf-8")
    assert "The answer is 4.20, a demo number [demo]." in demo, demo
    assert "```python\nfrom myst_nb import glue\nprint(6 * 7)" in demo, demo
    assert "```text\n42\n```" in demo, demo
    assert "{glue" not in demo and "(sec-demo)=" not in demo and "---\njupytext" not in demo
    intro = (html / "intro.md").read_text(encoding="utf-8")
    assert intro.startswith("# Tiny book\n\nA page with no code."), intro
    index = (html / "llms.txt").read_text(encoding="utf-8")
    lines = index.splitlines()
    assert lines[0] == "# AI Systems Performance Engineering", index
    assert "> A page with no code." in lines, index
    links = re.findall(r"^- \[([^\]]+)\]\(([^)]+)\)(: .*)?$", index, re.M)
    assert [(t, u) for t, u, _ in links] == [("Tiny book", "intro.md"),
                                             ("Demo notebook", "chapters/demo.md")], index
    assert all((html / u).is_file() for _, u, _ in links)
    full = (html / "llms-full.txt").read_text(encoding="utf-8")
    assert full.index("# Tiny book") < full.index("# Demo notebook")


def test_repository_options_validate_and_pick_providers():
    links = _spec()
    assert links.repository_options({}) == {}
    assert links.repository_options({"BOOK_REPOSITORY_URL": "  "}) == {}
    gh = links.repository_options({"BOOK_REPOSITORY_URL": "https://github.com/o/r/"})
    assert gh["repository_url"] == "https://github.com/o/r" and gh["repository_branch"] == "main"
    assert set(gh["launch_buttons"]) == {"binderhub_url", "colab_url", "notebook_interface"}
    # Colab opens notebooks from GitHub only; elsewhere Binder alone (a Colab link would be dead).
    gl = links.repository_options({"BOOK_REPOSITORY_URL": "https://gitlab.com/o/r"})
    assert "colab_url" not in gl["launch_buttons"] and gl["launch_buttons"]["binderhub_url"]
    for bad in ("github.com/o/r", "https://github.com/o", "https://github.com/o/r/tree/main"):
        with pytest.raises(ValueError, match="BOOK_REPOSITORY_URL"):
            links.repository_options({"BOOK_REPOSITORY_URL": bad})


def test_resolve_markdown_leaves_no_placeholder_in_a_real_page():
    """The book's own reference notebook of lesson 1 (282 placeholders on the site's source)."""
    nb = json.loads((ROOT / "chapters" / "performance-models.ipynb").read_text(encoding="utf-8"))
    before = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert before.count("{glue:text}") > 100
    resolved = resolve_markdown(nb)
    prose = "".join("".join(c["source"]) for c in resolved["cells"] if c["cell_type"] == "markdown")
    for raw in ("{glue", "{term}", "{cite:", "{ref}", "{numref}", "{eq}"):
        assert raw not in prose, (raw, prose[prose.find(raw) - 80: prose.find(raw) + 80])
    assert not re.search(r"^\(sec-[\w-]+\)=", prose, re.M)
    # the glued figure is attached as an image or written as its HTML
    assert "attachment:pm_fig_roofline.png" in prose or "<svg" in prose or "<img" in prose


def test_resolve_markdown_formats_like_myst_nb_and_keeps_unknown_keys_visible():
    rec = "application/papermill.record/"
    nb = {"cells": [
        {"cell_type": "code", "source": "", "outputs": [
            {"output_type": "display_data", "data": {rec + "text/plain": v},
             "metadata": {"scrapbook": {"name": k, "mime_prefix": rec}}}
            for k, v in (("f", "0.12345"), ("s", "'1.2 ms'"), ("i", "7"))]},
        {"cell_type": "markdown", "source": "{glue:text}`f:.1%` {glue:text}`s` {glue:text}`i:d` "
                                             "{glue:text}`gone` {ref}`the model <sec-x>` {eq}`eq-a`"}]}
    out = resolve_markdown(nb)["cells"][1]["source"]
    # a key the page never glued stays as written: visible, rather than guessed
    assert out == "12.3% 1.2 ms 7 {glue:text}`gone` the model equation (eq-a)"
