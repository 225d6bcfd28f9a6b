"""Shared fixtures of the lab tests: grade a lab notebook with nbval after editing one cell."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _replace_cell(nb: dict, marker: str, source: str) -> None:
    hits = [c for c in nb["cells"] if c["cell_type"] == "code"
            and "".join(c["source"]).lstrip().startswith(marker)]
    if len(hits) != 1:
        raise ValueError(f"expected one code cell starting with {marker!r}, found {len(hits)}")
    hits[0]["source"] = source


def run_nbval_with(notebook: str | os.PathLike, replacements: dict[str, str],
                   tmp_dir: str | os.PathLike) -> tuple[bool, str]:
    """Copy ``notebook`` (a committed reference .ipynb), replace the source of the code cell
    that starts with each marker, run ``pytest --nbval`` on the copy as an instructor's CI would,
    and return ``(passed, output)``.

    The copy is written next to the original (so relative paths resolve the same way) under a
    unique name, and removed afterwards.
    """
    src = ROOT / notebook
    nb = json.loads(src.read_text())
    for marker, source in replacements.items():
        _replace_cell(nb, marker, source)
    copy = src.with_name(f".grading-{os.getpid()}-{Path(tmp_dir).name}-{src.name}")
    copy.write_text(json.dumps(nb))
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             "--nbval", "--nbval-current-env",
             "--nbval-sanitize-with", str(ROOT / "tests" / "nbval_sanitize.cfg"),
             "-o", "addopts=", "--rootdir", str(ROOT), str(copy)],
            cwd=ROOT, capture_output=True, text=True, timeout=600,
            env={**os.environ, "BOOK_SIZE": "small", "BOOK_FORCE_CPU": "1"})
    finally:
        copy.unlink(missing_ok=True)
    return proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture
def grade(tmp_path):
    """``grade(notebook, {marker: source}) -> (passed, output)``; see :func:`run_nbval_with`."""
    return lambda notebook, replacements: run_nbval_with(notebook, replacements, tmp_path)
