#!/usr/bin/env python
"""The instructor kit: student notebooks made from the book's reference notebooks, graded by nbval.

    python tools/exercise_kit.py build --out DIR [PAGE ...]   # write the student notebooks
    python tools/exercise_kit.py grade SUBMISSION_DIR [--kit KIT_DIR] [--summary FILE]

``build`` reads each page's committed reference notebook (``labs/timing.ipynb`` beside
``labs/timing.md``; a page may be named by either file; with no pages, every page of the book
that has an exercise cell) and writes a student copy under DIR at the same relative path:

* the ``{solution}`` dropdowns and ``{solution-start}`` ... ``{solution-end}`` blocks are removed
  from the markdown (with any cells between a start and its end);
* every code cell whose first line is ``# Exercise...`` keeps that line, its imports, decorators,
  ``def`` signatures and docstrings, and gets the body ``raise NotImplementedError("your answer
  here")``; a cell without a function keeps its comment lines only (either kind also keeps
  assignments of literal constants, the question's givens). Its outputs are cleared
  and its execution count removed, so nbval runs it but does not compare what it prints. A cell
  whose first line asks the reader to predict and then run it is a measurement, not an answer:
  it is kept, with its outputs cleared;
* everything else is kept as the reference run left it, including the grading cells' verdicts
  (``PASS ...``), which nbval compares with what the student's answer earns;
* the markdown reads as the book does (:func:`helpers.notebook_prose.resolve_markdown`): the
  ``{glue:text}`` roles become the values the reference run glued, glued figures images, and
  terms, references, citations and labels plain text.

A reference notebook older than its page (``tools/nb_refs.py check`` would fail) stops the
build, unless ``--allow-stale``. A ``kit.json`` manifest lists the notebooks, their exercises and grading cells (numbered as
nbval numbers code cells), each reference's source hash and the book's commit.

``grade`` runs ``pytest --nbval`` on every notebook of a submission (a filled-in copy of a kit)
and prints one line per exercise: PASS, or FAIL with the reason (the grader's ``FAIL ...``
verdict line, or the exception a cell raised). It exits with 1 if any exercise or any other
compared cell failed, so a CI job fails with it, and with 1 and an ``error:`` line when there is
nothing to grade (the folder is missing or empty, or holds none of the kit's notebooks). A
kit notebook missing from the submission fails, unless it has no graded exercise. With
``--kit``, only the submission's exercise cells are graded, inside the kit's own notebooks, so a
student who edits a grading cell or its expected verdict changes nothing.
"""

from __future__ import annotations

import argparse
import ast
import copy
import datetime as _dt
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
from helpers import notebook_prose  # noqa: E402  (the kit runs from a checkout, helpers beside it)
SANITIZE = ROOT / "tests" / "nbval_sanitize.cfg"
MANIFEST = "kit.json"
PAGE_DIRS = ("chapters", "foundations", "labs", "appendix")
STUB = 'raise NotImplementedError("your answer here")'

EXERCISE_RE = re.compile(r"^#\s*Exercise\b")
PREDICT_RE = re.compile(r"\bthen run\b", re.IGNORECASE)
VERDICT_RE = re.compile(r"^(PASS|FAIL|INCONCLUSIVE) [^:\n]+:", re.MULTILINE)
FENCE_RE = re.compile(r"^(\s*)(`{3,}|:{3,})\s*\{([a-z-]+)\}")
ANSI_RE = re.compile(r"(?:\x1b|#x1B)\[[0-9;]*[A-Za-z]")  # junit XML writes ESC as "#x1B"


# --- reading cells ------------------------------------------------------------------------

def _src(cell: dict) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def _first_line(cell: dict) -> str:
    lines = [ln for ln in _src(cell).splitlines() if ln.strip()]
    return lines[0].strip() if lines else ""


def is_exercise(cell: dict) -> bool:
    """A code cell whose first non-empty line is ``# Exercise...``."""
    return cell.get("cell_type") == "code" and bool(EXERCISE_RE.match(_first_line(cell)))


def is_predict_then_run(cell: dict) -> bool:
    """An exercise cell that is a measurement to run after predicting, not an answer to write."""
    return is_exercise(cell) and bool(PREDICT_RE.search(_first_line(cell)))


def output_text(cell: dict) -> str:
    """The text a code cell printed or displayed (streams, text/plain, errors)."""
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append("".join(out.get("text", "")))
        elif out.get("output_type") == "error":
            parts.append(f"{out.get('ename')}: {out.get('evalue')}")
        else:
            t = out.get("data", {}).get("text/plain")
            if t is not None:
                parts.append("".join(t))
    return "".join(parts)


def is_grading(cell: dict) -> bool:
    """A code cell that grades: it prints a verdict in the reference, or it calls ``.require()``."""
    return cell.get("cell_type") == "code" and not is_exercise(cell) and (
        bool(VERDICT_RE.search(output_text(cell))) or ".require()" in _src(cell))


# --- removing solutions ---------------------------------------------------------------------

def _strip(text: str, state: str | None) -> tuple[str, str | None]:
    """Remove the ``{solution}`` directives of a markdown text, and everything from a
    ``{solution-start}`` to its ``{solution-end}``. ``state`` is ``"gated"`` while a
    ``{solution-start}`` of an earlier cell is open; returns the text left and the state after it.
    """
    out: list[str] = []
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        line = lines[i]
        m = FENCE_RE.match(line)
        name = m.group(3) if m else None
        if m and (name == "solution" or (state is None and name == "solution-start")
                  or (state == "gated" and name == "solution-end")):
            fence = m.group(2)
            # skip the directive through its closing fence (same character, at least as long)
            j = i + 1
            while j < len(lines):
                s = lines[j].strip()
                if s and set(s) == {fence[0]} and len(s) >= len(fence):
                    break
                j += 1
            i = j + 1
            if name == "solution-start":
                state = "gated"
            elif name == "solution-end":
                state = None
            continue
        if state != "gated":
            out.append(line)
        i += 1
    left = re.sub(r"\n{3,}", "\n\n", "".join(out)).strip("\n")
    return left, state


# --- stubbing exercise cells ------------------------------------------------------------------

def _stub_function(f: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> str:
    """A function's decorators, signature and docstring, with the body replaced by the stub."""
    body0 = f.body[0]
    has_doc = (isinstance(body0, ast.Expr) and isinstance(body0.value, ast.Constant)
               and isinstance(body0.value.value, str))
    start = min([d.lineno for d in f.decorator_list] + [f.lineno]) - 1
    if body0.lineno > f.lineno:  # the body starts on its own line: keep the header as written
        head = [ln.rstrip() for ln in lines[start:body0.lineno - 1] if not ln.strip().startswith("#")]
        doc = lines[body0.lineno - 1:body0.end_lineno] if has_doc else []
        return "\n".join(head + [ln.rstrip() for ln in doc] + [" " * body0.col_offset + STUB])
    g = copy.deepcopy(f)  # a one-line function: rebuild it
    g.body = ([body0] if has_doc else []) + ast.parse(STUB).body
    return ast.unparse(g)


def _is_given(node: ast.stmt) -> bool:
    """An assignment of literal values to names (``N = 4096``, ``B = (2, 128)``)."""
    if isinstance(node, ast.Assign):
        value, targets = node.value, node.targets
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        value, targets = node.value, [node.target]
    else:
        return False
    names = all(isinstance(t, ast.Name) or (isinstance(t, ast.Tuple)
                and all(isinstance(e, ast.Name) for e in t.elts)) for t in targets)
    try:
        ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return names


def stub_source(source: str) -> str:
    """The stub that replaces an exercise cell's answer.

    Keeps the first line, top-level comment lines and imports, and for every top-level function
    its decorators, signature and docstring with the body ``raise NotImplementedError(...)``.
    A cell without a function keeps its top-level comment lines only. Either kind also keeps
    top-level assignments of literal constants (``EX_BATCHES = (2, 128)``): they are the
    question's givens, which later cells may use, not its answer.
    """
    lines = source.splitlines()
    try:
        tree = ast.parse(source)
    except SyntaxError:
        tree = None
    nodes = tree.body if tree else []
    has_func = any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in nodes)
    pieces: list[tuple[int, int, str, bool]] = []  # (first line, last line, text, is a function)
    taken: set[int] = set()
    for node in nodes:
        first = min([d.lineno for d in getattr(node, "decorator_list", [])] + [node.lineno]) - 1
        span = range(first, node.end_lineno)
        taken.update(span)
        if _is_given(node):  # a constant of the question (sizes, batches), not an answer
            pieces.append((first, node.end_lineno - 1, "\n".join(lines[first:node.end_lineno]), False))
        elif not has_func:
            continue
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            pieces.append((first, node.end_lineno - 1, _stub_function(node, lines), True))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            pieces.append((first, node.end_lineno - 1, "\n".join(lines[first:node.end_lineno]), False))
    for k, ln in enumerate(lines):
        if k not in taken and ln.startswith("#"):
            pieces.append((k, k, ln.rstrip(), False))
    pieces.sort()
    out = ""
    for n, (first, _last, text, is_func) in enumerate(pieces):
        if n:
            prev_last, prev_func = pieces[n - 1][1], pieces[n - 1][3]
            out += ("\n" if first == prev_last + 1 else "\n\n\n" if (is_func or prev_func) else "\n\n")
        out += text
    return out + "\n"


# --- building the student notebook ---------------------------------------------------------------

def student_notebook(ref: dict) -> tuple[dict, list[dict]]:
    """The student copy of a reference notebook, and its exercises (see the module docstring).

    Each exercise is ``{"name", "cell", "graded_by", "kind"}``, cells numbered as nbval numbers
    them (code cells only, from 0); ``kind`` is ``"graded"``, ``"ungraded"`` or
    ``"predict-then-run"``.
    """
    nb = copy.deepcopy(ref)
    values = notebook_prose.glued_values(ref)
    cells: list[dict] = []
    in_solution: set[int] = set()
    state = None
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            text, state_after = _strip(_src(cell), state)
            state = state_after
            if text.strip():
                cell["source"] = text
                cells.append(cell)
            continue
        if state == "gated" and cell["cell_type"] == "code":
            # code inside a solution block is solution: it is stubbed like an exercise's answer
            if not is_exercise(cell):
                cell["source"] = "# Exercise (part of a solution)\n" + _src(cell)
            in_solution.add(id(cell))
        cells.append(cell)
    nb["cells"] = cells
    # the prose as the book shows it: glued values, terms and references as text
    notebook_prose.resolve_markdown(nb, values)

    for cell in cells:
        if is_exercise(cell):
            if id(cell) in in_solution or not is_predict_then_run(cell):
                cell["source"] = stub_source(_src(cell))
            cell["outputs"] = []
            cell["execution_count"] = None
    exercises = exercises_of(nb)
    nb["metadata"]["exercise_kit"] = {"exercises": exercises}
    return nb, exercises


def exercises_of(nb: dict) -> list[dict]:
    """The exercises of a notebook: ``{"name", "cell", "graded_by", "kind"}`` each, with cells
    numbered as nbval numbers them (code cells only, from 0). A grading cell belongs to the
    exercise cell before it."""
    exercises: list[dict] = []
    code_index = -1
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        code_index += 1
        if is_exercise(cell):
            kind = "predict-then-run" if is_predict_then_run(cell) else "ungraded"
            name = re.sub(r"^#\s*Exercise\s*[:.]?\s*", "", _first_line(cell)).strip() or "exercise"
            exercises.append({"name": name, "cell": code_index, "graded_by": [], "kind": kind})
        elif is_grading(cell) and exercises:
            exercises[-1]["graded_by"].append(code_index)
            exercises[-1]["kind"] = "graded"
    return exercises


def reference_notebooks(pages: list[str]) -> list[Path]:
    if pages:
        return [(Path(p) if Path(p).is_absolute() else Path.cwd() / p).with_suffix(".ipynb").resolve()
                for p in pages]
    sys.path.insert(0, str(ROOT / "src"))
    from helpers.book import notebook_pages

    refs = [p.with_suffix(".ipynb") for p in notebook_pages(ROOT)]
    return [r for r in refs if r.exists()
            and any(is_exercise(c) for c in json.loads(r.read_text())["cells"])]


STUDENT_README = """\
# Exercises

Notebooks of the book *AI Systems Performance Engineering* (commit {commit}) with the answers
taken out. Open each one in JupyterLab with the book's environment, replace every
`raise NotImplementedError("your answer here")` with your answer, keeping the whole answer inside
its `# Exercise` cell, and run the notebook top to bottom: the cell under each exercise prints
`PASS ...` or `FAIL ...` with the reason. Do not edit the other cells; they are graded as they are.
To grade the whole folder as your instructor will: `python tools/exercise_kit.py grade <this folder>`.
"""


def book_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def stale_reason(ref_path: Path, ref: dict) -> str | None:
    """Why the reference notebook no longer matches its page (``None`` if it does), by the same
    code signature as ``tools/nb_refs.py``."""
    md = ref_path.with_suffix(".md")
    if not md.exists():
        return None
    import jupytext

    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from nb_refs import SIGNATURE_KEY, code_signature
    finally:
        sys.path.pop(0)
    if ref.get("metadata", {}).get(SIGNATURE_KEY) != code_signature(jupytext.read(md)):
        return (f"{ref_path.name} is stale: its page's code changed since it was made; "
                f"run: python tools/nb_refs.py update {md}")
    return None


def build(out: Path, pages: list[str], allow_stale: bool = False) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    manifest = {"book_commit": book_commit(),
                "built": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "grade_with": "python tools/exercise_kit.py grade <this folder>",
                "notebooks": []}
    for ref_path in reference_notebooks(pages):
        if not ref_path.exists():
            raise SystemExit(f"error: no reference notebook {ref_path}; run tools/nb_refs.py update")
        ref = json.loads(ref_path.read_text())
        stale = stale_reason(ref_path, ref)
        if stale and not allow_stale:
            raise SystemExit(f"error: {stale}")
        nb, exercises = student_notebook(ref)
        rel = ref_path.relative_to(ROOT) if ref_path.is_relative_to(ROOT) else Path(ref_path.name)
        if rel.parts[0] not in PAGE_DIRS:  # not a book page (a test's fixture): no folders
            rel = Path(rel.name)
        dest = out / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
        manifest["notebooks"].append({
            "path": str(rel), "source": str(rel.with_suffix(".md")),
            "book_source_sha256": ref.get("metadata", {}).get("book_source_sha256"),
            "exercises": exercises})
        print(f"wrote {dest} ({len(exercises)} exercises, "
              f"{sum(e['kind'] == 'graded' for e in exercises)} graded)")
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    (out / "README.md").write_text(STUDENT_README.format(commit=manifest["book_commit"][:12]))
    return manifest


# --- grading --------------------------------------------------------------------------------

def _reason(text: str) -> str:
    """The one line that says why a cell failed: the grader's FAIL verdict, else the exception,
    else the output that differs from the reference."""
    text = ANSI_RE.sub("", text)
    tb = text.split("Traceback:", 1)[-1]  # after nbval's echo of the cell's input
    m = re.search(r"(FAIL [^:\n]+:[^\n]*)", tb)
    if m:
        return m.group(1).strip()
    errs = re.findall(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)):[ \t]*(.*)$",
                      tb, re.MULTILINE)
    if errs:
        name, msg = errs[-1]
        return f"{name}: {msg}".strip()
    if "outputs differ" in text or "mismatch" in tb:
        what = re.search(r"mismatch '([^']+)'", tb)
        return "its output differs from the reference" + (f" ({what.group(1)})" if what else "")
    lines = [ln.strip() for ln in tb.splitlines() if ln.strip()]
    return lines[0] if lines else "failed"


def _grading_env() -> dict:
    env = dict(os.environ)
    env.update(PYTHONHASHSEED="0", OMP_NUM_THREADS="1")
    from helpers.bench.sizes import SIZE_ENV

    env.setdefault(SIZE_ENV, "small")
    env.pop("MPLBACKEND", None)
    src = str(ROOT / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_nbval(notebook: Path, timeout_s: int = 1800) -> dict[int, str | None]:
    """Run ``pytest --nbval`` on one notebook. Returns ``{code cell: None if passed, else the
    failure text}`` for every cell nbval ran (skipped cells are left out)."""
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "junit.xml"
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
               "--rootdir", str(ROOT), "--nbval", "--nbval-current-env",
               "--nbval-sanitize-with", str(SANITIZE), f"--junitxml={junit}", str(notebook)]
        proc = subprocess.run(cmd, cwd=ROOT, env=_grading_env(), capture_output=True, text=True,
                              timeout=timeout_s)
        if not junit.exists():
            raise RuntimeError(f"nbval did not run on {notebook}:\n{proc.stdout}\n{proc.stderr}")
        results: dict[int, str | None] = {}
        for case in ET.parse(junit).getroot().iter("testcase"):
            m = re.fullmatch(r"Cell (\d+)", case.get("name", ""))
            if not m or case.find("skipped") is not None:
                continue
            bad = case.find("failure")
            if bad is None:
                bad = case.find("error")
            results[int(m.group(1))] = (None if bad is None
                                        else (bad.text or bad.get("message") or "failed"))
        return results


def merge_answers(kit_nb: dict, submitted: dict) -> dict:
    """The kit's notebook with the submission's exercise cells put in, matched by first line.

    Everything the grade depends on (the grading cells, their reference verdicts, the setup
    cells) then comes from the kit, not from the student's copy, which may have been edited.
    An exercise missing from the submission keeps its stub, and so fails.
    """
    answers: dict[str, list[dict]] = {}
    for cell in submitted["cells"]:
        if is_exercise(cell):
            answers.setdefault(_first_line(cell), []).append(cell)
    nb = copy.deepcopy(kit_nb)
    for cell in nb["cells"]:
        if is_exercise(cell) and answers.get(_first_line(cell)):
            cell["source"] = _src(answers[_first_line(cell)].pop(0))
    return nb


def _has_graded_exercise(entry: dict) -> bool:
    """Whether a manifest entry lists an exercise that is graded (an entry that lists no
    exercises at all, as an older manifest might, is taken to be graded)."""
    exercises = entry.get("exercises")
    if exercises is None:
        return True
    return any(e.get("kind", "graded" if e.get("graded_by") else "ungraded") == "graded"
               for e in exercises)


def _submission_notebooks(sub: Path, kit: Path | None):
    """``(notebooks to grade, missing, skipped, expected)``: each notebook to grade as ``(path,
    kit notebook or None)``; ``missing`` are the manifest's notebooks with a graded exercise
    that the submission lacks (each fails), ``skipped`` those it lacks that have none (nothing
    to fail), ``expected`` every notebook the manifest lists (empty without a manifest)."""
    base = kit if kit is not None else sub
    manifest = base / MANIFEST
    missing: list[str] = []
    skipped: list[str] = []
    expected: list[str] = []
    found: list[tuple[Path, dict | None]] = []
    if manifest.exists():
        for entry in json.loads(manifest.read_text())["notebooks"]:
            expected.append(entry["path"])
            path = sub / entry["path"]
            if path.exists():
                kit_nb = json.loads((kit / entry["path"]).read_text()) if kit is not None else None
                found.append((path, kit_nb))
            elif _has_graded_exercise(entry):
                missing.append(entry["path"])
            else:
                skipped.append(entry["path"])
    else:
        if kit is not None:
            raise SystemExit(f"error: {manifest} not found; build the kit with this tool")
        for path in sorted(sub.rglob("*.ipynb")):
            if ".ipynb_checkpoints" in path.parts or path.name.startswith(".graded-"):
                continue
            found.append((path, None))
    return found, missing, skipped, expected


def _not_a_folder(sub: Path) -> str | None:
    """Why ``sub`` is no submission folder (``None`` if it is one)."""
    if not sub.exists():
        return f"the submission folder {sub} does not exist"
    if not sub.is_dir():
        return f"the submission {sub} is not a folder"
    return None


def _nothing_found(sub: Path, found: list, expected: list[str]) -> str | None:
    """Why there is nothing to grade in the folder ``sub`` (``None`` if there is something):
    it holds none of the notebooks the manifest lists, or no notebook at all."""
    if found:
        return None
    if expected:
        names = ", ".join(expected[:5])
        if len(expected) > 5:
            names += f" and {len(expected) - 5} more"
        return f"the submission folder {sub} holds none of the kit's notebooks ({names})"
    return f"the submission folder {sub} holds no notebook (.ipynb) to grade"


def grade(sub: Path, summary: Path | None = None, timeout_s: int = 1800,
          kit: Path | None = None) -> int:
    """Grade a submission; print (and write to ``summary``) one line per exercise.

    With ``kit``, the folder the kit was built into, only the submission's exercise cells are
    taken; every other cell comes from the kit (see :func:`merge_answers`).

    Returns 1 if anything failed, and also, with an ``error:`` line on stderr (and in
    ``summary``), when there is nothing to grade: the folder is missing or empty, or holds none
    of the notebooks the manifest lists. A listed notebook that the submission lacks fails,
    unless it has no graded exercise (it is then reported, not counted).
    """
    sub = sub.resolve()
    kit = kit.resolve() if kit is not None else None
    problem = _not_a_folder(sub)
    if problem is None:
        notebooks, missing, skipped, expected = _submission_notebooks(sub, kit)
        problem = _nothing_found(sub, notebooks, expected)
    if problem is not None:
        text = f"Grading {sub}\nerror: {problem}; nothing was graded\n"
        print(text, end="", file=sys.stderr)
        if summary:
            summary.parent.mkdir(parents=True, exist_ok=True)
            summary.write_text(text)
        return 1
    lines: list[str] = [f"Grading {sub}"]
    n_pass = n_fail = 0
    for path in missing:
        lines.append(f"[FAIL] {path} -- the notebook is missing from the submission")
        n_fail += 1
    for path in skipped:
        lines.append(f"[----] {path} -- not in the submission; not counted (no graded exercise)")
    for path, kit_nb in notebooks:
        rel = path.relative_to(sub)
        graded = submitted = json.loads(path.read_text())
        target = path
        if kit_nb is not None:  # grade the kit's notebook with the student's answers
            graded = merge_answers(kit_nb, submitted)
            target = path.with_name(f".graded-{os.getpid()}-{path.name}")
            target.write_text(json.dumps(graded))
        # numbered in the notebook that runs, so a cell the student added shifts nothing
        exercises = exercises_of(graded)
        try:
            results = run_nbval(target, timeout_s)
        finally:
            if target != path:
                target.unlink(missing_ok=True)
        lines.append(f"{rel}:")
        owned = set()
        for ex in exercises:
            cells = [ex["cell"]] + ex["graded_by"]
            owned.update(cells)
            failures = [results[c] for c in cells if results.get(c)]
            if ex["kind"] != "graded":
                state = "ran" if not failures else "error: " + _reason(failures[0])
                lines.append(f"  [----] {ex['name']}: not graded ({ex['kind']}), {state}")
                continue
            if failures:
                n_fail += 1
                lines.append(f"  [FAIL] {ex['name']} -- {_reason(failures[0])}")
            elif all(c in results for c in cells):
                n_pass += 1
                lines.append(f"  [PASS] {ex['name']}")
            else:
                n_fail += 1
                lines.append(f"  [FAIL] {ex['name']} -- a grading cell did not run")
        others = sorted(c for c, r in results.items() if r and c not in owned)
        for c in others:
            n_fail += 1
            lines.append(f"  [FAIL] cell {c}, not an exercise -- {_reason(results[c])}")
    lines.append(f"{n_pass} passed, {n_fail} failed")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if summary:
        summary.parent.mkdir(parents=True, exist_ok=True)
        summary.write_text(text)
    return 1 if n_fail else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="write student notebooks and kit.json")
    b.add_argument("--out", required=True, type=Path)
    b.add_argument("pages", nargs="*", help="pages (.md or .ipynb); default: every page with exercises")
    b.add_argument("--allow-stale", action="store_true",
                   help="build even from a reference notebook older than its page")
    g = sub.add_parser("grade", help="grade a submission with nbval")
    g.add_argument("submission", type=Path)
    g.add_argument("--summary", type=Path, help="also write the summary to this file")
    g.add_argument("--timeout", type=int, default=1800, help="seconds per notebook")
    g.add_argument("--kit", type=Path, help="the kit folder: take only the exercise cells from "
                   "the submission, every other cell (graders, reference verdicts) from the kit")
    args = ap.parse_args(argv)
    if args.cmd == "build":
        build(args.out, args.pages, args.allow_stale)
        return 0
    return grade(args.submission, args.summary, args.timeout, args.kit)


if __name__ == "__main__":
    sys.exit(main())
