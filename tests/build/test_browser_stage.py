"""The browser stage cannot pass by running nothing in CI: with ``CI=true`` a missing build (or
Chromium, or Playwright) fails the tests of tests/site instead of skipping them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers.book import ROOT  # the repository root, computed once


def _site_tests(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["BOOK_SITE_DIR"] = str(tmp_path / "no-build-here")
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist",
                           "tests/site/test_page_weight.py"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_in_ci_a_missing_build_fails_the_browser_stage(tmp_path):
    r = _site_tests(tmp_path, "true")
    assert r.returncode == 1, r.stdout[-2000:]
    assert "CI=true, so the browser tests must run" in r.stdout


def test_outside_ci_a_missing_build_skips_with_the_reason(tmp_path):
    r = _site_tests(tmp_path, None)
    assert r.returncode == 0, r.stdout[-2000:]
    assert "skipped" in r.stdout and "failed" not in r.stdout and "error" not in r.stdout
