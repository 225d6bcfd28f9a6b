"""tools/build-book fails loudly, and its execution-cache key covers what changes a page's outputs.

The script runs here in a scratch copy of the repository's layout whose ``.venv`` holds a stub
``jupyter-book`` (exiting with the status a test asks for), a stub ``tools/setup`` and a ``python``
that hands over to this interpreter, so the real script is exercised in seconds.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.bench.sizes import FORCE_CPU_ENV, SIZE_ENV

from helpers.book import ROOT  # the repository root, computed once


def _executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "tools").mkdir()
    for name in ("build-book", "book-cache-key"):
        shutil.copy2(ROOT / "tools" / name, tmp_path / "tools" / name)
    _executable(tmp_path / "tools" / "setup", "#!/usr/bin/env bash\nexit 0\n")
    venv_bin = tmp_path / ".venv" / "bin"
    _executable(venv_bin / "python", f'#!/usr/bin/env bash\nexec "{sys.executable}" "$@"\n')
    _executable(venv_bin / "jupyter-book",
                '#!/usr/bin/env bash\n[[ -n "${STUB_SAY:-}" ]] && echo "$STUB_SAY"\n'
                'exit "${STUB_STATUS:-0}"\n')
    (venv_bin / "activate").write_text(f'export PATH="{venv_bin}:$PATH"\n')
    for d in ("src/helpers", "labs/reference"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "src/helpers/x.py").write_text("X = 1\n")
    for f in ("requirements.txt", "constraints.txt", "pyproject.toml", "_config.yml", "_toc.yml"):
        (tmp_path / f).write_text(f"# {f}\n")
    return tmp_path


def _run(repo: Path, script: str, **env: str) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k not in (SIZE_ENV, FORCE_CPU_ENV)}
    full.update(env)
    return subprocess.run(["bash", str(repo / "tools" / script)], cwd=repo, env=full,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("status", [1, 2])
def test_build_book_returns_jupyter_books_failure(repo, status):
    r = _run(repo, "build-book", STUB_STATUS=str(status))
    assert r.returncode == status, r.stdout + r.stderr
    assert "The book is built" not in r.stdout
    assert f"jupyter-book exited with status {status}" in r.stderr


def test_build_book_fails_on_a_warning_even_when_jupyter_book_exits_0(repo):
    r = _run(repo, "build-book", STUB_STATUS="0", STUB_SAY="page.md:3: WARNING: undefined label")
    assert r.returncode == 1 and "The book is built" not in r.stdout


def test_build_book_succeeds_on_a_clean_build_with_no_output(repo):
    # No output at all leaves grep with no line to print: that is not a failure.
    r = _run(repo, "build-book", STUB_STATUS="0")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "The book is built" in r.stdout


def _key(repo: Path, **env: str) -> str:
    r = _run(repo, "book-cache-key", **env)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_cache_key_changes_with_the_size_switch_the_tier_and_the_pins(repo):
    base = _key(repo, **{SIZE_ENV: "small"})
    assert _key(repo, **{SIZE_ENV: "small"}) == base  # stable
    assert _key(repo, **{SIZE_ENV: "full"}) != base
    assert _key(repo, **{SIZE_ENV: "small", FORCE_CPU_ENV: "1"}) != base
    (repo / "constraints.txt").write_text("numpy==9\n")
    assert _key(repo, **{SIZE_ENV: "small"}) != base


def test_a_changed_key_clears_the_execution_cache(repo):
    cache = repo / "_build" / ".jupyter_cache"
    assert _run(repo, "build-book", **{SIZE_ENV: "small"}).returncode == 0
    cache.mkdir(parents=True)
    assert _run(repo, "build-book", **{SIZE_ENV: "small"}).returncode == 0
    assert cache.is_dir()  # same key: the cache is kept
    assert _run(repo, "build-book", **{SIZE_ENV: "full"}).returncode == 0
    assert not cache.exists()  # the size switch changed: the cache is cleared
