"""Page weight of the built site (helpers.book_weight), on a small synthetic site.

Oracles: sizes are compared with the files written here (``os.path.getsize``), the transfer
size with zlib's own gzip stream (a different code path from ``gzip.compress``); the browser's
view of a real built page is compared in ``tests/site/test_page_weight.py``.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from helpers import book_weight as bw


def _write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    path.write_bytes(data)
    return path


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "html"
    _write(root / "index.html", "<p>home</p>")
    _write(root / "_static/theme.css",
           "@import url('extra.css');\n"
           "@font-face{font-family:x;src:url(../fonts/a.woff2) format('woff2'),url(../fonts/a.ttf)}\n"
           ".b{background:url(\"img/bg.png\")} .c{background:url(data:image/png;base64,AAAA)}")
    _write(root / "_static/extra.css", ".d{color:red}")
    _write(root / "fonts/a.woff2", b"w" * 1000)
    _write(root / "fonts/a.ttf", b"t" * 5000)            # a fallback the browser never fetches
    _write(root / "_static/img/bg.png", b"p" * 300)
    _write(root / "_static/app.js", "var x = 1;\n" * 2000)
    _write(root / "_images/fig.png", b"f" * 700)
    state = '<script type="application/vnd.jupyter.widget-state+json">{"a": 1}</script>'
    _write(root / "chapters/one.html",
           '<link rel="stylesheet" href="../_static/theme.css?digest=1">'
           '<link rel="preload" as="script" href="../_static/app.js">'
           '<script defer src="../_static/app.js?v=2"></script>'  # the same file twice: once
           '<img src="../_images/fig.png"><img src="data:image/png;base64,QUJD">'
           '<svg viewBox="0 0 1 1"><rect/></svg>' + state +
           '<a href="https://example.org/">out</a><img src="https://cdn.example.org/x.png">'
           '<div style="background:url(../_images/fig.png)"></div>'
           '<img src="../_images/gone.png">')
    _write(root / "chapters/two.html", '<script src="../_static/app.js"></script>')
    return root


def test_counts_each_fetched_file_once_with_css_dependencies(site):
    w = bw.page_weight(site / "chapters/one.html", site)
    size = lambda p: (site / p).stat().st_size  # noqa: E731
    expected = {p: size(p) for p in ["_static/theme.css", "_static/extra.css", "fonts/a.woff2",
                                     "_static/img/bg.png", "_static/app.js", "_images/fig.png"]}
    assert w.assets == expected
    assert w.total_bytes == size("chapters/one.html") + sum(expected.values())
    assert w.from_css == {"_static/extra.css", "fonts/a.woff2", "_static/img/bg.png"}
    assert w.missing == ["../_images/gone.png"]
    assert w.external == ["https://cdn.example.org/x.png"]  # a link is not a fetch


def test_names_the_parts_inside_the_html(site):
    w = bw.page_weight(site / "chapters/one.html", site)
    assert w.parts["embedded images"] == len("data:image/png;base64,QUJD")
    assert w.parts["inline SVG"] == len('<svg viewBox="0 0 1 1"><rect/></svg>')
    assert w.parts["widget state"] > len('{"a": 1}')
    components = w.components()
    assert sum(s for _, s in components) == w.total_bytes
    assert components == sorted(components, key=lambda r: -r[1])
    assert w.heaviest() == ("_static/app.js", (site / "_static/app.js").stat().st_size)


def test_transfer_size_is_the_gzip_stream_for_text_and_the_file_for_the_rest(site):
    def zlib_gzip(data: bytes) -> int:
        c = zlib.compressobj(6, zlib.DEFLATED, 31)  # wbits 31: a gzip container
        return len(c.compress(data) + c.flush())

    js = site / "_static/app.js"
    assert bw.transfer_size(js) == zlib_gzip(js.read_bytes()) < js.stat().st_size / 10
    png = site / "_images/fig.png"
    assert bw.transfer_size(png) == png.stat().st_size
    w = bw.page_weight(site / "chapters/one.html", site)
    assert set(w.transfer) == set(w.assets) | {"chapters/one.html"}
    assert w.transfer_bytes < w.total_bytes


def test_site_weights_sorts_heaviest_first_and_reports(site):
    weights = bw.site_weights(site, pages=["chapters/two.html", "chapters/one.html"])
    assert [w.page for w in weights] == ["chapters/one.html", "chapters/two.html"]
    text = bw.report_markdown(weights, top=1)
    assert "| chapters/one.html |" in text and "| chapters/two.html |" not in text
    assert "2 pages" in text and "the same 1 theme and vendored files" in text  # app.js


def test_command_line_prints_the_report(site, capsys):
    book = site.parent
    _write(book / "_toc.yml", "format: jb-book\nroot: chapters/one\nchapters:\n  - file: chapters/two\n")
    assert bw.main([str(site), "--top", "1", "--book", str(book)]) == 0
    out = capsys.readouterr().out
    assert "| chapters/one.html |" in out and "2 pages" in out


def test_value_errors(site, tmp_path):
    with pytest.raises(ValueError, match="no built page"):
        bw.page_weight(site / "nope.html", site)
    with pytest.raises(ValueError, match="no built site"):
        bw.site_weights(tmp_path / "empty")
    with pytest.raises(ValueError, match="top"):
        bw.report_markdown(bw.site_weights(site, pages=["index.html"]), top=0)
