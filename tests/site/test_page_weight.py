"""Page weight and notebook downloads on the built site, offline, in Chromium.

Every page of the table of contents weighs under ``LESSON_LIMIT_BYTES`` with its assets as a
server that gzips text sends them (``helpers.book_weight``; on disk, before compression, the
vendored MathJax and widget manager alone exceed the limit, so it cannot apply to raw bytes).
The static estimate is checked against what Chromium actually fetches for a lesson page.
"""

from __future__ import annotations

import json

import pytest

from helpers import book_weight as bw
from helpers.book import toc_entries

from helpers.book import ROOT  # the repository root, computed once
PAGES = [f"{e}.html" for e in toc_entries(ROOT)]
HEAVY = "chapters/performance-models.html"  # widgets, MathJax, animations and figures


@pytest.fixture(scope="module")
def weights(html_root):
    return {w.page: w for w in bw.site_weights(html_root, PAGES, ROOT)}


@pytest.mark.parametrize("path", PAGES)
def test_page_weighs_under_the_limit(weights, path):
    w = weights[path]
    assert not w.missing and not w.external, (w.missing, w.external)
    assert w.transfer_bytes < bw.LESSON_LIMIT_BYTES, (
        f"{path} weighs {w.transfer_bytes / 1e6:.2f} MB gzipped ({w.total_bytes / 1e6:.2f} MB "
        f"on disk); heaviest: {w.components()[:3]}")


def test_no_page_loads_the_themes_fontawesome_script(weights):
    assert not [p for p, w in weights.items() if "_static/scripts/fontawesome.js" in w.assets]


def _visit(browser, base_url, path):
    """Chromium's view of a first visit: {site path: body bytes} of every response."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    fetched: dict[str, int] = {}

    def route(r):
        (r.continue_ if r.request.url.startswith(base_url) else r.abort)()

    def finished(request):
        fetched[request.url[len(base_url) + 1:].split("?")[0]] = request.sizes()["responseBodySize"]

    page.route("**/*", route)
    page.on("requestfinished", finished)
    page.goto(f"{base_url}/{path}", wait_until="load")
    page.wait_for_timeout(3000)
    return page, fetched


def test_estimate_matches_what_the_browser_fetches(browser, base_url, weights):
    page, fetched = _visit(browser, base_url, HEAVY)
    page.close()
    w = weights[HEAVY]
    browser_bytes = sum(fetched.values())
    # Within 10 %: scripts fetch a few files the HTML does not name (the widget manager's font),
    # and the estimate counts icon fonts the page may not draw.
    assert abs(w.total_bytes - browser_bytes) <= 0.10 * browser_bytes, (w.total_bytes, browser_bytes)
    # Everything the HTML names is fetched (a style sheet's fonts and images only if used).
    unfetched = [a for a in w.assets if a not in fetched and a not in w.from_css]
    assert not unfetched, unfetched


def test_download_menu_offers_the_notebook_with_outputs(browser, base_url):
    page, _ = _visit(browser, base_url, HEAVY)
    link = page.locator("a.btn-download-notebook-button")
    assert link.count() == 1
    href = link.get_attribute("href")
    assert href.endswith("_sources/chapters/performance-models.ipynb"), href
    text = page.evaluate("(u) => fetch(u).then(r => r.ok ? r.text() : 'HTTP ' + r.status)", href)
    page.close()
    nb = json.loads(text)
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and sum(bool(c["outputs"]) for c in code) >= 3
    assert nb["metadata"].get("widgets"), "the explorers' saved state is in the download"
    kinds = {k for c in code for o in c["outputs"] for k in o.get("data", {})}
    assert "application/vnd.jupyter.widget-view+json" in kinds


def test_pages_without_code_offer_no_notebook(html_root):
    for path in ("appendix/glossary.html", "appendix/references.html"):
        assert "download-notebook-button" not in (html_root / path).read_text(encoding="utf-8")
