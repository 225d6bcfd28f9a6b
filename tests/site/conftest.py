"""Fixtures for testing the built site: a local HTTP server over _build/html, and Debian's
Chromium driven by Playwright with every request that leaves the machine blocked.

The book must be built first (tools/build-book); tools/test builds it before this stage.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest


from helpers.book import ROOT  # the repository root, computed once
HTML = Path(os.environ.get("BOOK_SITE_DIR") or ROOT / "_build" / "html")  # the built site
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-quic"]
# Console messages of the JB1 stack that are not faults of the book (warnings only).
KNOWN_NOISE = ("allowUnionTypes",)


def unavailable(reason: str):
    """Skip a browser test whose prerequisite is missing, except in CI (``CI=true``), where a
    browser stage that ran no test must fail instead of passing."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true, so the browser tests must run, but {reason}", pytrace=False)
    pytest.skip(reason)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def html_root() -> Path:
    if not (HTML / "index.html").exists():
        unavailable("the book is not built: run tools/build-book first")
    return HTML


@pytest.fixture(scope="session")
def base_url(html_root):
    handler = functools.partial(_Quiet, directory=str(html_root))
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        unavailable(f"no Chromium at {CHROMIUM}: install Debian's chromium (tools/setup --browser)")
    try:
        from playwright import sync_api
    except ImportError:
        unavailable("playwright is not installed (tools/setup installs it)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def open_page(browser, base_url):
    """open_page(path, dark=False, width=1280, reduced_motion=False) -> (page, report) with
    external requests and errors recorded (``width`` in CSS pixels: 390 is a phone)."""
    opened = []

    def _open(path: str, *, dark: bool = False, wait_ms: int = 1500, width: int = 1280,
              reduced_motion: bool = False):
        page = browser.new_page(viewport={"width": width, "height": 900},
                                reduced_motion="reduce" if reduced_motion else "no-preference",
                                color_scheme="dark" if dark else "light")
        report = {"external": [], "errors": [], "http": []}

        def route(r):
            if r.request.url.startswith(base_url) or r.request.url.startswith("data:"):
                r.continue_()
            else:
                report["external"].append(r.request.url)
                r.abort()

        page.route("**/*", route)
        page.on("pageerror", lambda e: report["errors"].append(f"pageerror: {e}"))
        page.on("console", lambda m: report["errors"].append(f"console.{m.type}: {m.text}")
                if m.type == "error" and not any(k in m.text for k in KNOWN_NOISE) else None)
        page.on("response", lambda r: report["http"].append(f"HTTP {r.status} {r.url}")
                if r.status >= 400 else None)
        page.goto(f"{base_url}/{path}", wait_until="load")
        page.wait_for_timeout(wait_ms)
        opened.append(page)
        return page, report

    yield _open
    for page in opened:
        page.close()
