"""The built book in a real browser (Debian Chromium via Playwright), offline.

Every page of the table of contents loads with no console error and no request leaving the
machine; its figures decode, its animations play, its widgets render from their saved state and
its equations typeset. Links between pages resolve, and search finds a term from a lesson.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin

import pytest

from helpers.book import toc_entries

from helpers.book import ROOT  # the repository root, computed once
PAGES = [str(Path(e).with_suffix(".html")) for e in toc_entries(ROOT)]


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_offline_without_errors(open_page, html_root, path):
    source = (html_root / path).read_text()
    page, report = open_page(path)
    assert not report["external"], f"{path} requested outside resources: {report['external']}"
    assert not report["errors"], f"{path} console errors: {report['errors']}"
    assert not report["http"], f"{path} failed requests: {report['http']}"

    # Every image decodes (matplotlib figures are inline PNGs).
    broken = page.evaluate("""[...document.querySelectorAll('article img')]
        .filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src.slice(0, 80))""")
    assert not broken, f"{path}: images that did not load: {broken}"

    # SVG figures from the helper package are present, and animations are playing.
    n_svg = source.count('class="book-svg')
    assert page.locator("figure.book-svg svg").count() == n_svg
    if 'class="book-svg book-anim"' in source:
        times = page.evaluate("""[...document.querySelectorAll('figure.book-anim svg')]
            .map(s => [s.getCurrentTime(), s.animationsPaused()])""")
        assert times and all(t > 0 and not paused for t, paused in times), times

    # Widgets render from their saved state: as many views as the page saved.
    n_views = source.count('application/vnd.jupyter.widget-view+json')
    if n_views:
        page.wait_for_selector(".jupyter-widgets", timeout=10_000)
        assert page.locator(".widget-slider, .widget-hslider").count() >= 1

    # Equations typeset with the vendored MathJax, with no errors.
    if "math notranslate" in source:
        page.wait_for_selector("mjx-container", timeout=10_000)
        assert page.locator("mjx-merror").count() == 0


def test_lesson_one_shows_animation_diagram_figures_and_a_working_widget(open_page):
    page, report = open_page("chapters/performance-models.html", wait_ms=2500)
    assert not report["errors"] and not report["external"]
    assert page.locator("figure.book-anim svg").count() >= 1
    assert page.locator("figure.book-diagram svg").count() >= 1
    assert page.locator("article img").count() >= 3
    # The explorer's saved state holds its initial figure: an image inside the output widget.
    assert page.locator(".jupyter-widgets img").count() >= 1
    assert page.locator(".widget-slider, .widget-hslider").count() >= 2
    # Glossary terms show their definition on hover (a title on the link).
    titles = page.evaluate("""[...document.querySelectorAll('article a:has(.std-term)')]
        .map(a => a.title)""")
    assert titles and all(len(t) > 20 and "sec-" not in t for t in titles), titles[:3]


_SIDEBAR = """(() => { const s = document.querySelector('#pst-primary-sidebar');
    const d = document.querySelector('#pst-primary-sidebar-modal');
    const c = document.querySelector('#pst-secondary-sidebar-modal');
    return {left: s.getBoundingClientRect().left, hidden: s.classList.contains('pst-sidebar-hidden'),
            drawer: !!(d && d.open), drawer_width: d ? d.getBoundingClientRect().width : 0,
            contents: !!(c && c.open)}; })()"""


def test_phone_navigation_opens_and_closes(open_page):
    """At 390 px the visible hamburger opens the contents drawer, Escape closes it, and the
    contents icon opens the page's outline (the themes bind only a hidden button: _ext/static/book.js)."""
    page, report = open_page("chapters/performance-models.html", width=390)
    assert not report["errors"]
    before = page.evaluate(_SIDEBAR)
    assert before["left"] < 0 and not before["drawer"]  # off screen until asked for
    page.locator("button.primary-toggle:visible").first.click()
    page.wait_for_timeout(300)
    opened = page.evaluate(_SIDEBAR)
    assert opened["drawer"] and opened["drawer_width"] > 200, opened
    assert page.locator("#pst-primary-sidebar-modal a.reference:visible").count() > 10
    page.keyboard.press("Escape")
    page.wait_for_timeout(300)
    assert not page.evaluate(_SIDEBAR)["drawer"]
    page.locator("button.secondary-toggle:visible").first.click()
    page.wait_for_timeout(300)
    assert page.evaluate(_SIDEBAR)["contents"]


@pytest.mark.parametrize("reduce", [False, True], ids=["motion", "reduced-motion"])
def test_animations_start_paused_when_the_reader_asks_for_less_motion(open_page, reduce):
    page, _ = open_page("chapters/performance-models.html", reduced_motion=reduce)
    paused = page.evaluate("""[...document.querySelectorAll('figure.book-anim svg')]
        .map(s => s.animationsPaused())""")
    assert paused and all(p == reduce for p in paused), paused


def test_a_tap_on_a_glossary_term_shows_its_definition(browser, base_url):
    """Touch screens never show a title tooltip: a tap opens the definition under the term, a
    second tap follows the link to the glossary."""
    context = browser.new_context(viewport={"width": 390, "height": 800}, has_touch=True,
                                  is_mobile=True)
    page = context.new_page()
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(base_url) else r.abort())
    page.goto(f"{base_url}/chapters/performance-models.html", wait_until="load")
    page.wait_for_timeout(800)
    term = page.locator("article a:has(.std-term)[title]").first
    definition = term.get_attribute("title")
    term.scroll_into_view_if_needed()
    term.tap()
    page.wait_for_timeout(300)
    box = page.locator(".book-term-box")
    assert box.count() == 1 and definition in box.inner_text()
    assert "performance-models" in page.url  # the first tap did not navigate
    term.tap()
    page.wait_for_url("**/glossary.html*", timeout=5000)
    context.close()


@pytest.mark.parametrize("width", [390, 1280])
def test_one_search_box_and_the_query_clear_of_its_icon(open_page, width):
    page, _ = open_page("intro.html", width=width)
    fields = page.locator(".search-button-field:visible, .search-button:visible")
    assert fields.count() == 1, f"{fields.count()} search boxes at {width} px"
    fields.first.click()
    page.wait_for_timeout(300)
    page.keyboard.type("roofline")
    clear = page.evaluate("""(() => {
        const i = document.querySelector('#pst-search-dialog input[name=q]');
        const icon = document.querySelector('#pst-search-dialog form i, #pst-search-dialog form svg');
        const r = i.getBoundingClientRect(), q = icon.getBoundingClientRect();
        return [r.x + parseFloat(getComputedStyle(i).paddingLeft), q.x + q.width]; })()""")
    assert clear[0] >= clear[1], f"the query starts at x={clear[0]}, under the icon ending at {clear[1]}"


def test_desktop_hamburger_collapses_and_restores_the_sidebar(open_page):
    page, _ = open_page("chapters/performance-models.html", width=1280)
    assert page.evaluate(_SIDEBAR)["left"] >= 0
    toggle = page.locator("button.primary-toggle:visible").first
    toggle.click()
    page.wait_for_timeout(400)
    collapsed = page.evaluate(_SIDEBAR)
    assert collapsed["hidden"] and collapsed["left"] < 0, collapsed
    toggle.click()
    page.wait_for_timeout(400)
    restored = page.evaluate(_SIDEBAR)
    assert not restored["hidden"] and restored["left"] >= 0, restored


_CONTRAST = r"""(() => {
  function rgb(s) { const m = s.match(/[\d.]+/g).map(Number); return {r: m[0], g: m[1], b: m[2], a: m.length > 3 ? m[3] : 1}; }
  function lum(c) { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
                    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); }
  function background(el) { for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor);
                              if (c.a > 0.5) return c; } return {r: 255, g: 255, b: 255, a: 1}; }
  const out = [];
  for (const el of document.querySelectorAll('table.lab-table caption, table.lab-table td, table.lab-table th')) {
    const fg = rgb(getComputedStyle(el).color), bg = background(el);
    const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    out.push({tag: el.tagName, text: el.textContent.slice(0, 30), ratio: (hi + 0.05) / (lo + 0.05),
              fg: getComputedStyle(el).color, bg: `rgb(${bg.r},${bg.g},${bg.b})`});
  }
  return out;
})()"""


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_lab_tables_read_at_4_5_to_1_in_both_themes(open_page, dark):
    """WCAG AA for text: every caption and cell of a lab table against what is behind it."""
    page, _ = open_page("labs/timing.html", dark=dark)
    cells = page.evaluate(_CONTRAST)
    assert cells, "no lab table on the timing lab's page"
    low = [c for c in cells if c["ratio"] < 4.5]
    assert not low, f"{len(low)} of {len(cells)} table texts below 4.5:1, e.g. {low[:2]}"


def test_dark_mode_switches_and_figures_stay_visible(open_page):
    page, _ = open_page("chapters/performance-models.html", dark=True)
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    # SVG text takes the theme's text colour, so it is light on the dark background.
    fill = page.evaluate("""(() => { const t = document.querySelector('figure.book-svg svg text');
        return t ? getComputedStyle(t).fill : null; })()""")
    assert fill is not None
    r, g, b = [int(v) for v in re.findall(r"\d+", fill)[:3]]
    assert r + g + b > 3 * 150, f"SVG text is too dark for the dark theme: {fill}"
    # ... and the figure sits on the dark page, not on the light card the theme gives outputs.
    bg = page.evaluate("""(() => { const f = document.querySelector('figure.book-svg');
        return getComputedStyle(f.closest('.text_html')).backgroundColor; })()""")
    assert bg in ("rgba(0, 0, 0, 0)", "transparent"), f"SVG figure on a light card: {bg}"


def test_search_finds_a_lesson_term(open_page):
    page, report = open_page("search.html?q=roofline", wait_ms=3000)
    assert not report["errors"]
    page.wait_for_selector("#search-results li", timeout=10_000)
    assert "performance-models" in page.inner_html("#search-results")


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])


def _parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text())
    return parser


def test_internal_links_and_anchors_resolve(html_root):
    parsed: dict[Path, _Links] = {}
    problems = []
    for page in PAGES:
        src = html_root / page
        links = parsed.setdefault(src, _parse(src))
        for href in links.hrefs:
            if re.match(r"^[a-z]+:", href) and not href.startswith("file:"):
                continue  # external (http, mailto): not followed offline
            url, anchor = urldefrag(urljoin(f"/{page}", href))
            target = html_root / unquote(url).lstrip("/") if url else src
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                problems.append(f"{page}: {href} -> missing {target.relative_to(html_root)}")
                continue
            if anchor and target.suffix == ".html":
                ids = parsed.setdefault(target, _parse(target)).ids
                if anchor not in ids:
                    problems.append(f"{page}: {href} -> no #{anchor}")
    assert not problems, "\n".join(problems)
