"""The instructor kit (tools/exercise_kit.py): student notebooks without answers, graded by nbval.

Generation is checked on the timing lab and on every page of the book that has exercise cells;
grading is checked on the timing lab as a student receives it (the stub fails, with a readable
reason) and on the committed sample submission (tests/kit/sample_submission/, made by the kit
from the two-exercise page tests/kit/fixture/practice.md): one answer right, one wrong.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.book import ROOT  # the repository root, computed once
HERE = Path(__file__).resolve().parent
SAMPLE = HERE / "sample_submission"
FIXTURE = HERE / "fixture" / "practice.md"

_spec = importlib.util.spec_from_file_location("exercise_kit", ROOT / "tools" / "exercise_kit.py")
kit = importlib.util.module_from_spec(_spec)
sys.modules["exercise_kit"] = kit
_spec.loader.exec_module(kit)


def src(cell) -> str:
    s = cell["source"]
    return "".join(s) if isinstance(s, list) else s


def answer_lines(source: str) -> list[str]:
    """The lines of a reference answer that a stub must not keep: code inside function bodies
    and top-level statements (not comments, imports, signatures or docstrings)."""
    stub = kit.stub_source(source)
    kept = {ln.strip() for ln in stub.splitlines()}
    return [ln.strip() for ln in source.splitlines()
            if ln.strip() and ln.strip() not in kept and not ln.strip().startswith("#")]


def pages_with_exercises() -> list[Path]:
    return kit.reference_notebooks([])


# --- stubs -------------------------------------------------------------------------------------

def test_a_function_keeps_its_signature_and_docstring_only():
    source = '''# Exercise: timer
import time


@decorate(3)
def my_timer(run,
             synchronize):
    """Seconds the device spends on run()."""
    synchronize()  # a hint that is part of the answer
    t0 = time.perf_counter()
    return t0
SECRET = 6 * 7
'''
    stub = kit.stub_source(source)
    assert stub == '''# Exercise: timer
import time


@decorate(3)
def my_timer(run,
             synchronize):
    """Seconds the device spends on run()."""
    raise NotImplementedError("your answer here")
'''
    compile(stub, "<stub>", "exec")


def test_a_one_line_function_is_rebuilt():
    stub = kit.stub_source("# Exercise: f\ndef f(x): return 2 * x\n")
    assert "2 * x" not in stub and "def f(x):" in stub and "NotImplementedError" in stub
    compile(stub, "<stub>", "exec")


def test_a_cell_without_a_function_keeps_its_comments_and_givens_only():
    source = ("# Exercise 2: a vector add.\nf, q = 1e9, 6e9\nt = f / q\nprint(t)\n"
              "# Exercise 3: int4.\nfor i in range(2):\n    # inner\n    pass\nB: tuple = (2, -128)\n")
    assert kit.stub_source(source) == ("# Exercise 2: a vector add.\nf, q = 1e9, 6e9\n\n"
                                       "# Exercise 3: int4.\n\nB: tuple = (2, -128)\n")


# --- solutions -----------------------------------------------------------------------------------

def test_solution_directives_are_removed_in_every_fence_style():
    text = ("before\n\n```{solution} ex-a\n:class: dropdown\n\nanswer a\n```\n\nmiddle\n\n"
            "````{solution} ex-b\n```python\ncode b\n```\n````\n\n"
            ":::{solution} ex-c\nanswer c\n:::\n\nafter\n")
    left, state = kit._strip(text, None)
    assert state is None
    assert left == "before\n\nmiddle\n\nafter"


def test_a_gated_solution_is_removed_across_cells():
    ref = {"metadata": {}, "nbformat": 4, "nbformat_minor": 4, "cells": [
        {"cell_type": "markdown", "metadata": {}, "source":
            "```{exercise} E\n:label: ex-e\nQuestion.\n```\n\n```{solution-start} ex-e\n:class: dropdown\n```\n\nsecret prose"},
        {"cell_type": "code", "metadata": {}, "execution_count": 1, "outputs": [],
         "source": "x = 6 * 7\nprint(x)"},
        {"cell_type": "code", "metadata": {}, "execution_count": 2, "outputs": [],
         "source": "# Exercise: predict, then run this cell.\ny = x + 1"},
        {"cell_type": "markdown", "metadata": {}, "source": "more secret\n\n```{solution-end}\n```\n\nAfter."},
    ]}
    nb, exercises = kit.student_notebook(ref)
    text = "\n".join(src(c) for c in nb["cells"])
    assert "secret" not in text and "6 * 7" not in text and "x + 1" not in text
    assert "{solution" not in text and "Question." in text and "After." in text
    assert [e["kind"] for e in exercises] == ["ungraded", "predict-then-run"]


def test_glue_roles_take_the_reference_values():
    from helpers.notebook_prose import substitute_glue

    values = {k: {"text/plain": v} for k, v in
              {"k_n": "4096", "k_x": "138.9114144653325", "k_s": "'a sentence'"}.items()}
    text = "n={glue:text}`k_n:d`, x={glue:text}`k_x:.3g`, s={glue:text}`k_s`, m={glue:text}`missing:.2f`"
    assert substitute_glue(text, values) == "n=4096, x=139, s=a sentence, m={glue:text}`missing:.2f`"


def test_a_kit_notebook_has_no_myst_placeholder_left(tmp_path):
    kit.build(tmp_path, [str(ROOT / "labs" / "timing.md")])
    nb = json.loads((tmp_path / "labs" / "timing.ipynb").read_text())
    prose = "".join(src(c) for c in nb["cells"] if c["cell_type"] == "markdown")
    for raw in ("{glue", "{term}", "{ref}", "{cite:", "{numref}"):
        assert raw not in prose, (raw, prose[prose.find(raw) - 60: prose.find(raw) + 60])


# --- generation on the book's pages -------------------------------------------------------------------

def test_the_timing_lab_kit(tmp_path):
    manifest = kit.build(tmp_path, [str(ROOT / "labs" / "timing.md")])
    ref = json.loads((ROOT / "labs" / "timing.ipynb").read_text())
    nb = json.loads((tmp_path / "labs" / "timing.ipynb").read_text())
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    assert manifest["book_commit"] == head
    entry, = manifest["notebooks"]
    assert entry["path"] == "labs/timing.ipynb"
    assert entry["book_source_sha256"] == ref["metadata"]["book_source_sha256"]
    assert [(e["name"], e["kind"]) for e in entry["exercises"]] == [("timer", "graded")]
    assert json.loads((tmp_path / "kit.json").read_text()) == manifest

    ref_code = [c for c in ref["cells"] if c["cell_type"] == "code"]
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert len(code) == len(ref_code)  # nbval's cell numbers are the reference's
    ex = entry["exercises"][0]
    stub = code[ex["cell"]]
    assert src(stub).startswith("# Exercise: timer\ndef my_timer(run, synchronize):")
    assert 'raise NotImplementedError("your answer here")' in src(stub)
    assert stub["outputs"] == [] and stub["execution_count"] is None
    answer = answer_lines(src(ref_code[ex["cell"]]))
    assert len(answer) >= 4
    left = {ln.strip() for ln in src(stub).splitlines()}
    for line in answer:
        assert line not in left and line not in json.dumps(stub), f"the answer survives: {line!r}"
    # the grading cell keeps its reference verdict, which nbval compares
    grading = code[ex["graded_by"][0]]
    assert grading == ref_code[ex["graded_by"][0]]
    assert "PASS timer" in kit.output_text(grading)
    # every other code cell is the reference's, outputs included
    for i, (c, r) in enumerate(zip(code, ref_code)):
        if i != ex["cell"]:
            assert c == r, f"code cell {i} changed"
    md = "\n".join(src(c) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "{solution" not in md and "{glue:text}" not in md
    assert "> **Exercise" in md  # the question stays, as a quoted block JupyterLab renders


@pytest.mark.parametrize("ref_path", pages_with_exercises(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_page_with_exercises_loses_its_answers(ref_path, tmp_path):
    # a stale reference is tools/nb_refs.py check's to report; here only the stripping counts
    manifest = kit.build(tmp_path, [str(ref_path)], allow_stale=True)
    entry, = manifest["notebooks"]
    ref = json.loads(ref_path.read_text())
    nb = json.loads((tmp_path / entry["path"]).read_text())
    md = "\n".join(src(c) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "{solution" not in md
    ref_code = [c for c in ref["cells"] if c["cell_type"] == "code"]
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert entry["exercises"], "a page with exercise cells lists them"
    for ex in entry["exercises"]:
        cell = code[ex["cell"]]
        assert kit.is_exercise(cell) and cell["outputs"] == [] and cell["execution_count"] is None
        if ex["kind"] == "predict-then-run":
            continue  # a measurement to run, not an answer
        for line in answer_lines(src(ref_code[ex["cell"]])):
            assert line not in src(cell), f"cell {ex['cell']} keeps {line!r}"
        compile(src(cell), "<stub>", "exec")


# --- grading ----------------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_timing_lab_as_handed_out_fails_with_a_readable_reason(tmp_path, capsys):
    kit.build(tmp_path, [str(ROOT / "labs" / "timing.md")])
    capsys.readouterr()
    status = kit.grade(tmp_path, tmp_path / "summary.txt")
    out = capsys.readouterr().out
    assert status == 1
    assert "[FAIL] timer -- FAIL timer: raised NotImplementedError: your answer here" in out
    assert "0 passed, 1 failed" in out
    assert "not an exercise" not in out  # only the exercise failed
    assert (tmp_path / "summary.txt").read_text() == out


@pytest.mark.slow
def test_the_sample_submission_is_graded_right(capsys):
    status = kit.grade(SAMPLE)
    out = capsys.readouterr().out
    assert status == 1
    assert "  [PASS] softmax\n" in out
    assert "  [FAIL] rms -- FAIL rms: wrong values on trial 1:" in out
    assert "1 passed, 1 failed" in out


def test_the_sample_submission_matches_the_kit(tmp_path):
    """The committed sample is the kit's output for the fixture page, with two answers filled in."""
    check = subprocess.run([sys.executable, str(ROOT / "tools" / "nb_refs.py"), "check", str(FIXTURE)],
                           cwd=ROOT, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    fresh = kit.build(tmp_path, [str(FIXTURE)])
    committed = json.loads((SAMPLE / "kit.json").read_text())
    assert committed["notebooks"] == fresh["notebooks"]
    nb = json.loads((SAMPLE / "practice.ipynb").read_text())
    new = json.loads((tmp_path / "practice.ipynb").read_text())
    assert len(nb["cells"]) == len(new["cells"])
    for a, b in zip(nb["cells"], new["cells"]):
        if kit.is_exercise(a):
            assert "NotImplementedError" not in src(a)  # answered
            assert src(a).splitlines()[0] == src(b).splitlines()[0]
        else:
            assert a == b


def test_a_stale_reference_stops_the_build(tmp_path):
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "practice.ipynb").write_text((FIXTURE.with_suffix(".ipynb")).read_text())
    (pages / "practice.md").write_text(FIXTURE.read_text().replace("name=\"rms\")", "name=\"RMS\")"))
    with pytest.raises(SystemExit, match="practice.ipynb is stale"):
        kit.build(tmp_path / "kit", [str(pages / "practice.md")])
    (pages / "practice.md").write_text(FIXTURE.read_text())
    kit.build(tmp_path / "kit", [str(pages / "practice.md")])  # current again: builds


def _all_cells_pass(notebook, timeout_s=0):
    """Stands in for nbval: every code cell of the notebook passed."""
    nb = json.loads(Path(notebook).read_text())
    return {i: None for i in range(sum(c["cell_type"] == "code" for c in nb["cells"]))}


def _sample_with_extra_entries(tmp_path, extra: list[dict]) -> Path:
    """A copy of the sample submission whose kit.json also lists ``extra`` notebooks (absent)."""
    sub = tmp_path / "submission"
    shutil.copytree(SAMPLE, sub)
    manifest = json.loads((sub / "kit.json").read_text())
    manifest["notebooks"] += extra
    (sub / "kit.json").write_text(json.dumps(manifest))
    return sub


GRADED = {"path": "labs/absent.ipynb",
          "exercises": [{"name": "t", "cell": 3, "graded_by": [4], "kind": "graded"}]}
UNGRADED = [
    {"path": "labs/ungraded.ipynb",
     "exercises": [{"name": "u", "cell": 1, "graded_by": [], "kind": "ungraded"},
                   {"name": "p", "cell": 2, "graded_by": [], "kind": "predict-then-run"}]},
    {"path": "labs/no-exercise.ipynb", "exercises": []},
]


def test_a_missing_notebook_fails_the_grade(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(kit, "run_nbval", _all_cells_pass)
    sub = _sample_with_extra_entries(tmp_path, [GRADED] + UNGRADED)
    assert kit.grade(sub) == 1
    out = capsys.readouterr().out
    assert "[FAIL] labs/absent.ipynb -- the notebook is missing" in out
    assert "2 passed, 1 failed" in out  # the sample's two exercises, and the absent notebook


def test_a_missing_notebook_without_a_graded_exercise_is_not_counted(tmp_path, capsys,
                                                                     monkeypatch):
    monkeypatch.setattr(kit, "run_nbval", _all_cells_pass)
    sub = _sample_with_extra_entries(tmp_path, UNGRADED)
    assert kit.grade(sub) == 0
    out = capsys.readouterr().out
    for path in ("labs/ungraded.ipynb", "labs/no-exercise.ipynb"):
        assert f"[----] {path} -- not in the submission; not counted (no graded exercise)" in out
    assert "[FAIL]" not in out and "2 passed, 0 failed" in out


def _no_nbval(notebook, timeout_s=0):
    raise AssertionError(f"nothing should be graded, but nbval ran on {notebook}")


def test_a_missing_submission_folder_exits_non_zero_with_a_message(tmp_path):
    absent = tmp_path / "no-such-submission"
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "exercise_kit.py"), "grade",
                           str(absent), "--summary", str(tmp_path / "summary.txt")],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 1
    want = f"error: the submission folder {absent} does not exist; nothing was graded"
    assert want in proc.stderr
    assert want in (tmp_path / "summary.txt").read_text()  # what a CI job shows per student


def test_a_file_as_submission_fails(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(kit, "run_nbval", _no_nbval)
    (tmp_path / "practice.ipynb").write_text("{}")
    assert kit.grade(tmp_path / "practice.ipynb") == 1
    assert "is not a folder; nothing was graded" in capsys.readouterr().err


@pytest.mark.parametrize("with_kit", [False, True])
def test_an_empty_submission_folder_fails(tmp_path, capsys, monkeypatch, with_kit):
    monkeypatch.setattr(kit, "run_nbval", _no_nbval)
    sub = tmp_path / "submission"
    sub.mkdir()
    (sub / ".ipynb_checkpoints").mkdir()  # editor debris is no submission
    (sub / ".ipynb_checkpoints" / "practice-checkpoint.ipynb").write_text("{}")
    if with_kit:
        kit.build(tmp_path / "kit", [str(FIXTURE)])
        capsys.readouterr()
    assert kit.grade(sub, kit=tmp_path / "kit" if with_kit else None) == 1
    captured = capsys.readouterr()
    why = ("holds none of the kit's notebooks (practice.ipynb)" if with_kit
           else "holds no notebook (.ipynb) to grade")
    assert f"error: the submission folder {sub} {why}; nothing was graded" in captured.err
    assert "passed" not in captured.out


def test_a_submission_with_none_of_the_kits_notebooks_fails(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(kit, "run_nbval", _no_nbval)
    kit.build(tmp_path / "kit", [str(FIXTURE)])
    sub = tmp_path / "submission"
    sub.mkdir()
    (sub / "homework.ipynb").write_text((SAMPLE / "practice.ipynb").read_text())  # misnamed
    capsys.readouterr()
    assert kit.grade(sub, kit=tmp_path / "kit") == 1
    assert "holds none of the kit's notebooks (practice.ipynb)" in capsys.readouterr().err


def test_the_reason_is_the_verdict_or_the_exception():
    assert kit._reason("Traceback\n\x1b[31mAssertionError\x1b[0m: FAIL t: it stopped early\n") == "FAIL t: it stopped early"
    assert kit._reason("Traceback ...\nNameError: name 'x' is not defined\n") == "NameError: name 'x' is not defined"


def test_merging_takes_only_the_exercise_cells_from_a_submission(tmp_path):
    kit.build(tmp_path, [str(FIXTURE)])
    kit_nb = json.loads((tmp_path / "practice.ipynb").read_text())
    submitted = json.loads((SAMPLE / "practice.ipynb").read_text())
    for cell in submitted["cells"]:
        if kit.is_grading(cell):
            cell["source"] = 'print("PASS rms: matches a float64 reference on 3 fresh random inputs")'
    merged = kit.merge_answers(kit_nb, submitted)
    for m, k, s in zip(merged["cells"], kit_nb["cells"], submitted["cells"]):
        assert m == (dict(k, source=src(s)) if kit.is_exercise(k) else k)


@pytest.mark.slow
def test_with_the_kit_an_edited_grading_cell_changes_nothing(tmp_path, capsys):
    kit.build(tmp_path / "kit", [str(FIXTURE)])
    sub = tmp_path / "submission"
    sub.mkdir()
    nb = json.loads((SAMPLE / "practice.ipynb").read_text())
    for cell in nb["cells"]:  # the student replaces the rms grader by a printed PASS
        if kit.is_grading(cell) and "my_rms" in src(cell):
            cell["source"] = 'print("PASS rms: matches a float64 reference on 3 fresh random inputs")'
    (sub / "practice.ipynb").write_text(json.dumps(nb))
    capsys.readouterr()
    assert kit.grade(sub, kit=tmp_path / "kit") == 1
    out = capsys.readouterr().out
    assert "  [PASS] softmax\n" in out and "  [FAIL] rms -- FAIL rms: wrong values" in out
    assert not list(sub.glob(".graded-*"))  # the merged copy is cleaned up
