"""Shared fixtures of the lab tests: a lab's CPU run and its result file; grade a lab notebook
with nbval after editing one cell."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.bench.sizes import FORCE_CPU_ENV, SIZE_ENV

from helpers.book import ROOT  # the repository root, computed once


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
            env={**os.environ, SIZE_ENV: "small", FORCE_CPU_ENV: "1"})
    finally:
        copy.unlink(missing_ok=True)
    return proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture
def grade(tmp_path):
    """``grade(notebook, {marker: source}) -> (passed, output)``; see :func:`run_nbval_with`."""
    return lambda notebook, replacements: run_nbval_with(notebook, replacements, tmp_path)


@pytest.fixture(scope="module")
def result_file(request, tmp_path_factory) -> Path:
    """The result file of a CPU run of the test module's ``lab`` (its runner module), written
    through the command line at small sizes, once per test module.

    If the test module defines ``tiny()``, it stands in for ``lab.settings`` during the run
    (smaller settings than even the small size tier)."""
    from helpers.labs import core

    lab = request.module.lab
    out = tmp_path_factory.mktemp(str(lab.LAB))
    tiny = getattr(request.module, "tiny", None)
    mp = pytest.MonkeyPatch()
    if tiny is not None:
        mp.setattr(lab, "settings", tiny)
    try:
        return core.run_cli(lab.LAB, lab.run, ["--out", str(out), "--device", "cpu",
                                               "--size", "small"])
    finally:
        mp.undo()


@pytest.fixture(scope="module")
def cpu_result(result_file) -> dict:
    """:func:`result_file` read back."""
    from helpers.labs import core

    return core.load_result(result_file)


@pytest.fixture
def install_reference(result_file, monkeypatch, tmp_path):
    """Point the labs' reference folder at an empty directory; calling the returned function
    copies :func:`result_file` there, as if the CPU run were the H200 reference."""
    from helpers.labs import core

    monkeypatch.setattr(core, "REFERENCE_DIR", tmp_path)
    return lambda: (tmp_path / result_file.name).write_text(result_file.read_text())
