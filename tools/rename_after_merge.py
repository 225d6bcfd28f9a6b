#!/usr/bin/env python
"""Renames of CONTRIBUTING.md's "One name per quantity" that touch files other helpers edited
this session; the lead runs this once, after merging every branch, from the repository root:

    python tools/rename_after_merge.py            # edit the files, print what changed
    python tools/rename_after_merge.py --check    # only list what would change

then runs the model tests, ``tests/book/test_names.py`` and ``python tools/nb_refs.py update``
on the pages it prints (their outputs must not change: only argument names do).

A parameter rename edits, in the model module, every word ``old`` that is not an attribute
(``spec.hbm_bytes_per_s`` stays), and, everywhere else (src, tests, pages' code cells), only the
keyword ``old=`` of a call to one of that module's functions taking ``old`` (found with ``ast``,
so ``GPUSpec(hbm_bytes_per_s=...)`` stays). It then lists every word ``old`` left in the files
it touched, for a look by eye. Each entry is applied only while ``old`` is still a parameter, so
a second run changes nothing.
"""
from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import io
import re
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

SEARCH = ("src", "tests", "chapters", "labs", "foundations", "appendix", "practice", "tools",
          "_ext", "instructors")

# (model module, old parameter, new parameter): every public function of the module taking old
PENDING_PARAMS = [
    ("helpers.models.inference", "hbm_bytes_per_s", "mem_bytes_per_s"),
    ("helpers.models.memory_access", "hbm_bytes_per_s", "mem_bytes_per_s"),
    ("helpers.models.memory_access", "peak_bytes_per_s", "mem_bytes_per_s"),
    ("helpers.models.memory_access", "element_bytes", "bytes_per_element"),
    ("helpers.models.attention", "dram_bytes_per_s", "mem_bytes_per_s"),
    ("helpers.models.attention", "compute_flop_per_s", "peak_flop_per_s"),
    ("helpers.models.gemm", "sms", "n_sms"),
    ("helpers.models.collectives", "ranks", "n_ranks"),
    ("helpers.models.dram", "bandwidth_bytes_per_s", "mem_bytes_per_s"),
]

# (file, old text, new text): plain replacements of a renamed function's uses
PENDING_TEXT = [
    ("src/helpers/labs/analysis/roofline.py", "gpu_peaks.peak_flop_per_s", "gpu_peaks.sm_peak_flop_per_s"),
    ("src/helpers/labs/roofline.py", "gpu_peaks.peak_flop_per_s", "gpu_peaks.sm_peak_flop_per_s"),
]

# (file, text to delete): the compatibility alias kept until the callers above are renamed
PENDING_DELETE = [
    ("src/helpers/models/gpu_peaks.py",
     "\n# Kept for src/helpers/labs/analysis/roofline.py until tools/rename_after_merge.py runs.\n"
     "peak_flop_per_s = sm_peak_flop_per_s\n"),
    ("tests/book/test_names.py", None),   # empties PENDING in the test (see below)
]

CELL = re.compile(r"(^```\{code-cell\}[^\n]*\n)(.*?)(^```[ \t]*$)", re.S | re.M)


def functions_taking(module: str, old: str) -> set[str]:
    mod = importlib.import_module(module)
    out = set()
    for name in getattr(mod, "__all__", ()):
        f = getattr(mod, name, None)
        try:
            if callable(f) and old in inspect.signature(f).parameters:
                out.add(name)
        except (TypeError, ValueError):
            pass
    return out


def _callee(node: ast.Call) -> str | None:
    f = node.func
    if isinstance(f, ast.Attribute):
        return f.attr
    if isinstance(f, ast.Name):
        return f.id
    return None


def _python_only(code: str) -> str:
    """A code cell with its MyST options (``:tags:`` lines, a ``---`` block) and IPython magics
    blanked, line for line, so that ``ast`` parses it and line numbers still match."""
    lines = code.split("\n")
    i = 0
    if lines and lines[0].strip() == "---":
        end = lines.index("---", 1) if "---" in lines[1:] else 0
        for j in range(end + 1):
            lines[j] = ""
        i = end + 1
    while i < len(lines) and lines[i].startswith(":"):
        lines[i] = ""
        i += 1
    return "\n".join("" if ln.lstrip().startswith(("%", "!")) else ln for ln in lines)


def rename_keywords(code: str, funcs: set[str], old: str, new: str) -> tuple[str, int]:
    """``code`` with the keyword ``old=`` of calls to ``funcs`` renamed (byte-exact edits)."""
    try:
        tree = ast.parse(_python_only(code))
    except SyntaxError:
        print(f"  (not Python, skipped: {code[:60]!r})")
        return code, 0
    spots = [(kw.lineno, kw.col_offset) for node in ast.walk(tree) if isinstance(node, ast.Call)
             and _callee(node) in funcs for kw in node.keywords if kw.arg == old]
    if not spots:
        return code, 0
    lines = code.splitlines(keepends=True)
    for lineno, col in sorted(spots, reverse=True):
        b = lines[lineno - 1].encode()
        assert b[col:col + len(old)] == old.encode(), (lineno, col)
        lines[lineno - 1] = (b[:col] + new.encode() + b[col + len(old):]).decode()
    return "".join(lines), len(spots)


def rename_in_file(path: Path, funcs: set[str], old: str, new: str) -> int:
    text = path.read_text()
    if path.suffix == ".md":
        count = 0

        def cell(m):
            nonlocal count
            body, n = rename_keywords(m.group(2), funcs, old, new)
            count += n
            return m.group(1) + body + m.group(3)
        out = CELL.sub(cell, text)
    else:
        out, count = rename_keywords(text, funcs, old, new)
    if count:
        path.write_text(out)
    return count


def _literal(token: str):
    try:
        return ast.literal_eval(token)
    except (ValueError, SyntaxError):
        return None


def rename_in_module(code: str, old: str, new: str) -> str:
    """The model module with ``old`` renamed where it is the parameter: names in code (not an
    attribute ``x.old``), a string that is exactly ``old`` (the argument checks' names), and in
    docstrings ````old````, ``old=`` (doctests) and a parameter heading ``old : type``. A word
    ``old`` in prose (``threads``, ``cores``) stays."""
    toks = list(tokenize.generate_tokens(io.StringIO(code).readline))
    lines = code.splitlines(keepends=True)
    edits = []   # (row, col, end_row, end_col, text)
    prev = None
    in_doc = [rf"``{re.escape(old)}``", rf"(?<![.\w]){re.escape(old)}(?==)",
              rf"(?m)^(\s*(?:\w+, )*){re.escape(old)}(?=(?:, \w+)* : )"]
    for i, t in enumerate(toks):
        if t.type == tokenize.NAME and t.string == old and not (prev and prev.string == "."):
            edits.append((*t.start, *t.end, new))
        elif t.type == tokenize.STRING:
            s = t.string
            nxt = [u.string for u in toks[i + 1:i + 3]]
            if _literal(s) == old and nxt == [",", old]:   # check("old", old, ...)
                s2 = s.replace(old, new)
            else:
                s2 = s
                if re.match(r"(?i)[rb]*f", s):   # an f-string: its fields, and "old must"
                    s2 = re.sub(r"\{[^{}]*\}", lambda m: re.sub(
                        rf"(?<![.\w]){re.escape(old)}\b", new, m.group(0)), s2)
                    s2 = re.sub(rf"(?<![.\w]){re.escape(old)}(?= must\b)", new, s2)
                for pat in in_doc:
                    s2 = re.sub(pat, lambda m: m.group(0).replace(old, new), s2)
            if s2 != s:
                edits.append((*t.start, *t.end, s2))
        if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT,
                          tokenize.DEDENT):
            prev = t
    for r0, c0, r1, c1, text in sorted(edits, reverse=True):
        head = lines[r0 - 1][:c0]
        tail = lines[r1 - 1][c1:]
        lines[r0 - 1:r1] = [head + text + tail]
    return "".join(lines)


def module_file(module: str) -> Path:
    return ROOT / "src" / Path(*module.split(".")).with_suffix(".py")


def rename_param(module: str, old: str, new: str, check: bool) -> list[Path]:
    funcs = functions_taking(module, old)
    if not funcs:
        return []
    own = module_file(module)
    touched = []
    word = re.compile(rf"(?<![.\w]){re.escape(old)}\b")
    print(f"{module}: {old} -> {new} in {', '.join(sorted(funcs))}")
    if not check:
        own.write_text(rename_in_module(own.read_text(), old, new))
    touched.append(own)
    for top in SEARCH:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix not in (".py", ".md") or path == own or path.name == Path(__file__).name:
                continue
            if old not in path.read_text():
                continue
            if check:
                n = rename_keywords_count(path, funcs, old)
            else:
                n = rename_in_file(path, funcs, old, new)
            if n:
                print(f"  {path.relative_to(ROOT)}: {n} keyword(s)")
                touched.append(path)
    return touched


def rename_keywords_count(path: Path, funcs: set[str], old: str) -> int:
    text = path.read_text()
    codes = [m.group(2) for m in CELL.finditer(text)] if path.suffix == ".md" else [text]
    return sum(rename_keywords(c, funcs, old, old + "_")[1] for c in codes)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    touched: list[Path] = []
    for module, old, new in PENDING_PARAMS:
        touched += rename_param(module, old, new, args.check)
        importlib.invalidate_caches()
    for rel, old, new in PENDING_TEXT:
        p = ROOT / rel
        if old in p.read_text():
            print(f"{rel}: {old} -> {new}")
            if not args.check:
                p.write_text(p.read_text().replace(old, new))
            touched.append(p)
    for rel, text in PENDING_DELETE:
        p = ROOT / rel
        s = p.read_text()
        if text is None:   # the test's list of names not yet renamed
            s2 = re.sub(r"^PENDING = \{.*?^\}\n", "PENDING: dict = {}\n", s, flags=re.S | re.M)
        else:
            s2 = s.replace(text, "")
        if s2 != s:
            print(f"{rel}: deleted the pending list/alias")
            if not args.check:
                p.write_text(s2)
    for module, old, new in PENDING_PARAMS:
        word = re.compile(rf"(?<![.\w]){re.escape(old)}\b")
        for p in sorted(set(touched)):
            for i, line in enumerate(p.read_text().splitlines(), 1):
                if word.search(line):
                    print(f"  left for a look: {p.relative_to(ROOT)}:{i}: {line.strip()}")
    pages = sorted({str(p.relative_to(ROOT)) for p in touched if p.suffix == ".md"})
    if pages:
        print("regenerate: python tools/nb_refs.py update " + " ".join(pages))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
