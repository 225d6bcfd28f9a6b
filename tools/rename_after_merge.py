#!/usr/bin/env python
"""Renames of CONTRIBUTING.md's "One name per quantity" that touch files other helpers edited
this session; the lead runs this once, after merging every branch, from the repository root:

    python tools/rename_after_merge.py            # edit the files, print what changed
    python tools/rename_after_merge.py --check    # only list what would change

then runs the model tests, ``tests/book/test_names.py``, ``test_one_definition.py``,
``test_backrefs.py`` and ``python tools/nb_refs.py update`` on the pages it prints (their
outputs must not change: only argument names do). At the end it rewrites every module's
back-reference paragraph (``tools/backrefs.py --write``), since merged pages import anew.

A parameter rename edits, in the model module, the parameter where it is one (a name in code
that is not an attribute, so ``spec.hbm_bytes_per_s`` stays; the argument check's string
``check("old", old)``; ````old````, ``old=`` and a heading ``old : type`` in docstrings; an
f-string's fields), not the word in prose. Everywhere else (src, tests, the pages' code cells)
it renames only the keyword ``old=`` of a call to one of that module's functions taking ``old``
(found with ``ast``, so ``GPUSpec(hbm_bytes_per_s=...)`` stays), and in a test that calls one
of them also ``dict(old=...)``, a bad-input case's ``"old"`` and ``match="...old..."``. It
lists, for a look by eye, every ``old=`` or ``"old"`` left in the files it touched. Each entry
applies only while ``old`` is still a parameter, so a second run changes nothing.

Besides the list below it renames any other public model parameter that the names table
replaces and names one successor for (a merged branch may bring one in; it prints the rest as
BY HAND), puts ``helpers.book.ROOT`` where a file of src/ or tests/ computes the root again and
``SIZE_ENV``/``FORCE_CPU_ENV`` where one spells the size switch's variables, and empties the
tests' lists of what was pending.
"""
from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import inspect
import io
import re
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))

SEARCH = ("src", "tests", "chapters", "labs", "foundations", "appendix", "practice", "tools",
          "_ext", "instructors")

# (model module, old parameter, new parameter): every public function of the module taking old
PENDING_PARAMS = [
    # decode_bandwidth's with inference's, which calls it (a bad argument must be named as
    # the caller spelled it)
    ("helpers.models.decode_bandwidth", "hbm_bytes_per_s", "mem_bytes_per_s"),
    ("helpers.models.decode_bandwidth", "peak_bytes_per_s", "mem_bytes_per_s"),
    ("helpers.models.decode_bandwidth", "bytes_moved", "n_bytes"),
    ("helpers.models.decode_bandwidth", "elapsed_s", "time_s"),
    ("helpers.models.inference", "hbm_bytes_per_s", "mem_bytes_per_s"),
    ("helpers.models.memory_access", "hbm_bytes_per_s", "mem_bytes_per_s"),
    ("helpers.models.memory_access", "peak_bytes_per_s", "mem_bytes_per_s"),
    ("helpers.models.memory_access", "element_bytes", "bytes_per_element"),
    ("helpers.models.attention", "dram_bytes_per_s", "mem_bytes_per_s"),
    ("helpers.models.attention", "compute_flop_per_s", "peak_flop_per_s"),
    ("helpers.models.gemm", "sms", "n_sms"),
    ("helpers.models.collectives", "ranks", "n_ranks"),
    ("helpers.models.memory_access", "stream_bytes_per_s", "mem_bytes_per_s"),
    ("helpers.models.dram", "bandwidth_bytes_per_s", "mem_bytes_per_s"),
    ("helpers.models.gemm", "full_rate_flop_per_s", "peak_flop_per_s"),
    ("helpers.models.gemm", "tiles", "n_tiles"),
    ("helpers.models.gemm", "ctas_per_sm", "blocks_per_sm"),
    ("helpers.models.gemm", "ctas_per_wave", "blocks_per_wave"),
    ("helpers.models.gemm", "smem_bytes_per_cta", "smem_per_block_bytes"),
    ("helpers.models.distributed_analysis", "model_flop_utilization", "mfu"),
]

# (file, old text, new text): plain replacements of a renamed function's uses
PENDING_TEXT = [
    ("src/helpers/labs/analysis/roofline.py", "gpu_peaks.peak_flop_per_s", "gpu_peaks.sm_peak_flop_per_s"),
    ("src/helpers/labs/roofline.py", "gpu_peaks.peak_flop_per_s", "gpu_peaks.sm_peak_flop_per_s"),
]

# (file, text to delete): the compatibility alias kept until the callers above are renamed;
# None: the test's lists of what is still pending (emptied)
PENDING_DELETE = [
    ("src/helpers/models/gpu_peaks.py",
     "\n\n# Kept for src/helpers/labs/analysis/roofline.py until tools/rename_after_merge.py runs.\n"
     "peak_flop_per_s = sm_peak_flop_per_s\n"),
    ("tests/book/test_names.py", None),
    ("tests/book/test_one_definition.py", None),
    ("tests/book/test_backrefs.py", None),
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


def _units(tree: ast.Module):
    """Top-level statements, with each function or class body split into its own statements
    (a test function counts with its decorators)."""
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            yield from stmt.body
        else:
            yield stmt


def rename_keywords(code: str, funcs: set[str], old: str, new: str,
                    in_tests: bool = False) -> tuple[str, int]:
    """``code`` with the keyword ``old=`` of calls to ``funcs`` renamed (byte-exact edits).

    In a test file, inside a test (or statement) that calls one of ``funcs``, also
    ``dict(old=...)`` (keyword sets spread into the call), ``"old"`` as the last item of a
    tuple that holds a call or a lambda (a bad-input case naming the argument) and the word
    ``old`` in a ``match=`` pattern. Dictionary keys and subscripts (result fields) stay."""
    try:
        tree = ast.parse(_python_only(code))
    except SyntaxError:
        print(f"  (not Python, skipped: {code[:60]!r})")
        return code, 0
    lines = code.splitlines(keepends=True)
    edits = set()   # (line, start byte, end byte, new text)

    def span(node, text):
        edits.add((node.lineno, node.col_offset, node.end_col_offset, text))

    def segment(node):
        return lines[node.lineno - 1].encode()[node.col_offset:node.end_col_offset].decode()

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _callee(node) in funcs:
            for kw in node.keywords:
                if kw.arg == old:
                    edits.add((kw.lineno, kw.col_offset, kw.col_offset + len(old.encode()), new))
    if in_tests:
        word = re.compile(rf"(?<![.\w]){re.escape(old)}\b")
        for unit in _units(tree):
            nodes = list(ast.walk(unit))
            if not any(isinstance(n, ast.Attribute) and n.attr in funcs
                       or isinstance(n, ast.Name) and n.id in funcs for n in nodes):
                continue   # the test neither calls nor names one of funcs
            for n in nodes:
                if isinstance(n, ast.Call) and _callee(n) == "dict":
                    for kw in n.keywords:
                        if kw.arg == old:
                            edits.add((kw.lineno, kw.col_offset,
                                       kw.col_offset + len(old.encode()), new))
                if isinstance(n, ast.Call):
                    for kw in n.keywords:
                        v = kw.value
                        if (kw.arg == "match" and isinstance(v, ast.Constant)
                                and isinstance(v.value, str) and v.lineno == v.end_lineno
                                and word.search(segment(v))):
                            span(v, word.sub(new, segment(v)))
                if isinstance(n, ast.Tuple) and len(n.elts) >= 2:
                    last = n.elts[-1]
                    if (isinstance(last, ast.Constant) and last.value == old
                            and last.lineno == last.end_lineno
                            and any(isinstance(e, (ast.Call, ast.Lambda, ast.Tuple))
                                    for e in n.elts[:-1])):
                        span(last, segment(last).replace(old, new))
    if not edits:
        return code, 0
    for lineno, c0, c1, text in sorted(edits, reverse=True):
        b = lines[lineno - 1].encode()
        lines[lineno - 1] = (b[:c0] + text.encode() + b[c1:]).decode()
    return "".join(lines), len(edits)


def rename_in_file(path: Path, funcs: set[str], old: str, new: str) -> int:
    text = path.read_text()
    in_tests = path.relative_to(ROOT).parts[0] == "tests"
    if path.suffix == ".md":
        count = 0

        def cell(m):
            nonlocal count
            body, n = rename_keywords(m.group(2), funcs, old, new, in_tests)
            count += n
            return m.group(1) + body + m.group(3)
        out = CELL.sub(cell, text)
    else:
        out, count = rename_keywords(text, funcs, old, new, in_tests)
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
    print(f"{module}: {old} -> {new} in {', '.join(sorted(funcs))}")
    if not check:
        own.write_text(rename_in_module(own.read_text(), old, new))
    return [own] + rename_callers(own, funcs, old, new, check)


def rename_callers(own: Path, funcs: set[str], old: str, new: str, check: bool) -> list[Path]:
    """The keyword ``old=`` renamed in every call to ``funcs`` outside their module ``own``."""
    touched = []
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


# Renames this branch made itself: a merged branch may call these functions by the old names,
# so their callers are renamed again (the module already has the new name).
DONE_PARAMS = [
    ("helpers.models.transformer", "optimizer_bytes_per_param", "moment_bytes_per_param"),
    ("helpers.models.parallelism", "optimizer_bytes_per_param", "optimizer_state_bytes_per_param"),
    ("helpers.models.gpu_peaks", "sm_count", "n_sms"),
    ("helpers.models.cpu_peak", "cores", "n_cores"),
    ("helpers.models.cgroups", "threads", "n_threads"),
    ("helpers.models.cgroups", "cores", "n_cores"),
    ("helpers.models.parallel_patterns", "processors", "n_processors"),
    ("helpers.models.parallel_patterns", "block_size", "threads_per_block"),
    ("helpers.models.parallel_patterns", "rate_per_s", "atomic_updates_per_s"),
    ("helpers.models.kv_paging", "num_tokens", "n_tokens"),
    ("helpers.models.kv_paging", "num_sequences", "n_sequences"),
    ("helpers.models.kv_paging", "block_size", "block_tokens"),
    ("helpers.models.kv_paging", "output_len", "n_output_tokens"),
    ("helpers.models.parallelism", "tokens", "n_tokens"),
    ("helpers.models.parallelism", "capacity", "capacity_tokens"),
    ("helpers.models.parallelism", "bytes_per_param", "bytes_per_element"),
    ("helpers.models.transformer", "tokens", "n_tokens"),
    ("helpers.models.quantization", "block_size", "group_size"),
]
# (module, old function, new function), renamed on this branch
DONE_FUNCTIONS = [
    ("helpers.models.gpu_peaks", "peak_flop_per_s", "sm_peak_flop_per_s"),
    ("helpers.models.gpu_peaks", "sparse_peak_flop_per_s", "sm_sparse_peak_flop_per_s"),
    ("helpers.models.cpu_peak", "peak_flop_per_s", "cpu_peak_flop_per_s"),
]


def redo_callers(check: bool) -> list[Path]:
    touched = []
    for module, old, new in DONE_PARAMS:
        funcs = functions_taking(module, new) - functions_taking(module, old)
        touched += rename_callers(module_file(module), funcs, old, new, check)
    for module, old, new in DONE_FUNCTIONS:
        short = module.rsplit(".", 1)[1]
        for top in SEARCH:
            for path in sorted((ROOT / top).rglob("*")):
                if path.suffix not in (".py", ".md") or path.name == Path(__file__).name \
                        or path == module_file(module):
                    continue
                text = path.read_text()
                aliases = set(re.findall(rf"\bimport[^\n]*\b{short}\b(?: as (\w+))?", text))
                aliases = {a or short for a in aliases} if aliases else set()
                if rf"{module} import" in text and re.search(rf"import[^\n]*\b{old}\b", text):
                    print(f"BY HAND: {path.relative_to(ROOT)} imports {module}.{old}")
                out = text
                for a in aliases:
                    out = re.sub(rf"\b{a}\.{old}\b", f"{a}.{new}", out)
                out = out.replace(f"{module}.{old}`", f"{module}.{new}`")
                if out != text:
                    print(f"{path.relative_to(ROOT)}: {short}.{old} -> {short}.{new}")
                    if not check:
                        path.write_text(out)
                    touched.append(path)
    return touched


def rename_keywords_count(path: Path, funcs: set[str], old: str) -> int:
    text = path.read_text()
    codes = [m.group(2) for m in CELL.finditer(text)] if path.suffix == ".md" else [text]
    in_tests = path.relative_to(ROOT).parts[0] == "tests"
    return sum(rename_keywords(c, funcs, old, old + "_", in_tests)[1] for c in codes)


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def table_renames() -> list[tuple[str, str, str]]:
    """(module, old, new) for every public model parameter the names table replaces and names
    one successor for (what merged branches brought in besides PENDING_PARAMS); the others are
    printed, to be renamed by hand."""
    names = _load(ROOT / "tests" / "book" / "test_names.py", "test_names")
    _, replaced, only = names.TABLE
    out = []
    for (module, old), message in sorted(names.violations(names.SIGNATURES, replaced,
                                                           only).items()):
        news = {n for scope, new in replaced.get(old, ()) for n in new
                if names._in_scope(scope, module, "")
                or any(names._in_scope(scope, module, f) for m, f, _ in names.SIGNATURES
                       if m == module)}
        if (f"helpers.models.{module}", old) in {(m, o) for m, o, _ in PENDING_PARAMS}:
            continue
        if len(news) == 1:
            out.append((f"helpers.models.{module}", old, news.pop()))
        else:
            print(f"BY HAND: {message}")
    return out


ROOT_CALL = re.compile(r"Path\(__file__\)\.resolve\(\)\.parents\[(\d)\]")
ROOT_IMPORT = "from helpers.book import ROOT"


def add_import(path: Path, line: str, check: bool) -> None:
    s = path.read_text()
    if re.search(rf"^{re.escape(line)}\b", s, re.M):
        return
    m = re.search(r"^(from helpers|import helpers)", s, re.M) or \
        re.search(r"^(?!from __future__)(from |import )", s, re.M)
    print(f"  {path.relative_to(ROOT)}: + {line}")
    if not check:
        path.write_text(s[:m.start()] + line + "\n" + s[m.start():])


def one_definition(check: bool) -> None:
    """The root from helpers.book and the size switch's names from helpers.bench.sizes, in
    every Python file of src/ and tests/ (tests/book/test_one_definition.py)."""
    files = [p for top in ("src", "tests") for p in sorted((ROOT / top).rglob("*.py"))]
    for path in files + [ROOT / "conftest.py"]:
        rel = str(path.relative_to(ROOT))
        if rel in ("src/helpers/book.py", "src/helpers/bench/sizes.py"):
            continue
        text = path.read_text()
        new = text
        for m in reversed(list(ROOT_CALL.finditer(text))):
            if path.resolve().parents[int(m.group(1))] != ROOT:
                continue
            line_start = new.rfind("\n", 0, m.start()) + 1
            line_end = new.find("\n", m.end())
            line = new[line_start:line_end]
            if re.fullmatch(r"ROOT = " + re.escape(m.group(0)), line.strip()):
                new = new[:line_start] + ROOT_IMPORT + "  # the repository root, computed once" \
                    + new[line_end:]
            else:
                new = new[:m.start()] + "ROOT" + new[m.end():]
        needs = []
        if new != text and ROOT_IMPORT not in new:
            needs.append(ROOT_IMPORT)
        consts = {"BOOK_SIZE": "SIZE_ENV", "BOOK_FORCE_CPU": "FORCE_CPU_ENV"}
        tree = ast.parse(new)
        lines = new.splitlines(keepends=True)
        spans = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in consts \
                    and node.lineno == node.end_lineno:
                spans.append((node.lineno, node.col_offset, node.end_col_offset,
                              consts[node.value]))
            elif isinstance(node, ast.keyword) and node.arg in consts:
                print(f"BY HAND (keyword {node.arg}=): {rel}:{node.value.lineno}")
        for lineno, c0, c1, const in sorted(spans, reverse=True):
            b = lines[lineno - 1].encode()
            lines[lineno - 1] = (b[:c0] + const.encode() + b[c1:]).decode()
            needs.append(f"from helpers.bench.sizes import {const}")
        new = "".join(lines)
        if new != text:
            print(f"{rel}: the root / the size switch from their one definition")
            if not check:
                path.write_text(new)
            for line in dict.fromkeys(needs):
                add_import(path, line, check)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    touched: list[Path] = []
    touched += redo_callers(args.check)
    todo = list(dict.fromkeys(PENDING_PARAMS + table_renames()))
    for module, old, new in todo:
        touched += rename_param(module, old, new, args.check)
        importlib.invalidate_caches()
    for rel, old, new in PENDING_TEXT:
        p = ROOT / rel
        if old in p.read_text():
            print(f"{rel}: {old} -> {new}")
            if not args.check:
                p.write_text(p.read_text().replace(old, new))
            touched.append(p)
        elif new not in p.read_text():
            print(f"{rel}: NOT FOUND, edit by hand: {old!r} -> {new!r}")
    one_definition(args.check)
    for rel, text in PENDING_DELETE:
        p = ROOT / rel
        s = p.read_text()
        if text is None:   # the tests' lists of what is not yet renamed
            s2 = re.sub(r"^PENDING = \{.*?^\}\n", "PENDING: dict = {}\n", s, flags=re.S | re.M)
            s2 = re.sub(r"^PENDING_FILES = \{.*?^\}\n", "PENDING_FILES: set = set()\n", s2,
                        flags=re.S | re.M)
            s2 = re.sub(r"^PENDING_MODULES = \{.*?^\}\n", "PENDING_MODULES: set = set()\n", s2,
                        flags=re.S | re.M)
        else:
            s2 = s.replace(text, "")
        if s2 != s:
            print(f"{rel}: deleted the pending list/alias")
            if not args.check:
                p.write_text(s2)
    for module, old, new in todo:
        word = re.compile(rf"(?<![.\w\"']){re.escape(old)}(?=\s*=[^=]|[\"'] *[,)\]:]| : )")
        for p in sorted(set(touched)):
            for i, line in enumerate(p.read_text().splitlines(), 1):
                if word.search(line):
                    print(f"  left for a look: {p.relative_to(ROOT)}:{i}: {line.strip()}")
    # the back-reference paragraphs of every module, now that all pages are merged
    import backrefs
    todo = backrefs.out_of_date()
    for name, para in todo.items():
        print(f"{name}: back-references {'rewritten' if not args.check else 'out of date'}")
        if not args.check:
            backrefs.rewrite(backrefs.module_path(name), para)
    pages = sorted({str(p.relative_to(ROOT)) for p in touched if p.suffix == ".md"})
    if pages:
        print("regenerate: python tools/nb_refs.py update " + " ".join(pages))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
