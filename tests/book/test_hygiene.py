"""Book-wide hygiene: the table of contents, cell tags, no library code in pages, glued numbers,
labelled equations, and the elements every lesson page must have.

These checks read the MyST sources only; they run in a second and fail with the page and line.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import jupytext
import pytest

from helpers.book import is_notebook, page_sources

ROOT = Path(__file__).resolve().parents[2]
PAGE_DIRS = ("chapters", "foundations", "labs", "practice", "appendix")

ALLOWED_TAGS = {
    "remove-cell", "remove-input", "remove-output", "hide-input", "hide-output", "scroll-output",
    "raises-exception", "skip-execution", "nbval-skip", "nbval-ignore-output", "nbval-check-output",
}


PAGES = page_sources(ROOT)
NOTEBOOKS = [p for p in PAGES if is_notebook(p)]
# Pages with every element of BOOK-PLAN's "Every page has": the lessons, the labs and the
# foundation pages (the foundations' index is not a lesson).
LESSONS = [p for p in NOTEBOOKS if p.parent.name in ("chapters", "labs")
           or (p.parent.name == "foundations" and p.stem != "overview")]


def rel(p: Path) -> str:
    return str(p.relative_to(ROOT))


def cells(page: Path):
    return jupytext.read(page).cells


# --- table of contents ------------------------------------------------------------------

def test_every_toc_entry_exists():
    missing = [rel(p) for p in PAGES if not p.exists()]
    assert not missing, f"_toc.yml names pages that do not exist: {missing}"


def test_every_page_is_in_the_toc():
    listed = {p.resolve() for p in PAGES}
    stray = []
    for d in PAGE_DIRS:
        for p in (ROOT / d).glob("**/*.md"):
            if p.name == "README.md":
                continue  # folder notes
            if p.resolve() not in listed:
                stray.append(rel(p))
    assert not stray, f"pages missing from _toc.yml: {stray}"


def test_page_file_names_are_kebab_case_without_numbers():
    bad = [rel(p) for p in PAGES if not re.fullmatch(r"[a-z]+(-[a-z]+)*", p.stem)]
    assert not bad, f"page names must be short kebab-case slugs without numbers: {bad}"


def test_every_page_has_a_label_before_its_title():
    for page in PAGES:
        text = page.read_text()
        body = text.split("---", 2)[2] if text.startswith("---") else text
        first = [ln for ln in body.splitlines() if ln.strip()][:2]
        assert re.fullmatch(r"\(sec-[a-z0-9-]+\)=", first[0]), f"{rel(page)}: no (sec-...)= label"
        assert first[1].startswith("# "), f"{rel(page)}: the label must precede the title"


# --- cells --------------------------------------------------------------------------------

@pytest.mark.parametrize("page", NOTEBOOKS, ids=rel)
def test_cell_tags_come_from_the_closed_list(page):
    for i, cell in enumerate(cells(page)):
        tags = set(cell.metadata.get("tags", []))
        unknown = tags - ALLOWED_TAGS
        assert not unknown, f"{rel(page)} cell {i}: unknown tags {sorted(unknown)}"
        if "skip-execution" in tags:
            assert "nbval-skip" in tags, f"{rel(page)} cell {i}: skip-execution needs nbval-skip"


@pytest.mark.parametrize("page", NOTEBOOKS, ids=rel)
def test_no_library_code_or_installs_in_pages(page):
    for i, cell in enumerate(cells(page)):
        if cell.cell_type != "code":
            continue
        src = cell.source
        assert not re.search(r"^\s*[!%]\s*pip\b", src, re.M), f"{rel(page)} cell {i}: no pip cells"
        if src.lstrip().lower().startswith("# exercise"):
            continue
        tree = ast.parse("\n".join(ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!"))))
        defs = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))]
        assert not defs, (f"{rel(page)} cell {i} defines {defs}: library code belongs in "
                          "src/helpers (exercise cells start with '# Exercise')")


# --- numbers in prose ---------------------------------------------------------------------

_UNITS = (r"%|×|x\b|[kKMGTP]i?B\b|[kKMGTP]?B/s\b|[kMGTPE]?FLOPs?\b|[kMGTPE]?FLOP/s\b|TFLOPS\b|"
          r"[mµun]?s\b|sec\b|seconds?\b|minutes?\b|hours?\b|days?\b|[GM]Hz\b|W\b|watts?\b|"
          r"tokens?\b|requests?\b|bytes?\b|bits?\b|parameters?\b|params\b|GPUs?\b|cores?\b|"
          r"times (?:faster|slower|more|less|higher|lower)\b")
_NUMBER = r"\d[\d,]*(?:\.\d+)?"
_NUMBER_WITH_UNIT = re.compile(r"(?<![\w.\-/^$])" + _NUMBER + r"\s*(?:" + _UNITS + ")")
_DECIMAL = re.compile(r"(?<![\w.\-/^$])\d+\.\d+(?![\w.])")

_SKIP_FENCES = {"math", "code-cell", "code-block", "code", "glossary", "bibliography", "raw",
                "include", "python", "text", "bash", "console", "yaml", "json", ""}


def prose_lines(page: Path):
    """Yield (line number, text) of prose: outside code, math, directive options and roles."""
    lines = page.read_text().splitlines()
    start = 0
    if lines and lines[0].strip() == "---":
        start = lines.index("---", 1) + 1
    stack: list[tuple[str, bool]] = []  # open fences: (marker, skip their body)
    in_dollar_math = False
    for no in range(start, len(lines)):
        stripped = lines[no].strip()
        fence = re.match(r"^(`{3,}|:{3,})\s*(.*)$", stripped)
        if fence:
            marker, rest = fence.groups()
            if stack and not rest and marker[0] == stack[-1][0][0] and len(marker) >= len(stack[-1][0]):
                stack.pop()
                continue
            name = re.match(r"\{([\w:-]+)\}|([\w-]*)", rest)
            name = (name.group(1) or name.group(2) or "") if name else ""
            stack.append((marker, name in _SKIP_FENCES or bool(stack and stack[-1][1])))
            continue
        if stack and stack[-1][1]:
            continue
        if stripped.startswith("$$"):
            if not (len(stripped) > 2 and stripped.endswith("$$")):
                in_dollar_math = not in_dollar_math
            continue
        if in_dollar_math:
            continue
        if re.match(r"^:[\w-]+:", stripped) or re.match(r"^\(.+\)=$", stripped) or stripped.startswith("<!--"):
            continue
        clean = re.sub(r"\{[\w:-]+\}`[^`]*`", " ", lines[no])  # roles: glue, cite, ref, term, eq ...
        clean = re.sub(r"`[^`]*`", " ", clean)                      # inline code
        clean = re.sub(r"\$[^$]+\$", " ", clean)                     # inline math
        clean = re.sub(r"\]\([^)]*\)", "]", clean)                   # link targets
        clean = re.sub(r"<[^>]+>", " ", clean)                       # html tags
        clean = re.sub(r"(?i)\b(sections?|secs?\.|tables?|tab\.|figures?|figs?\.|equations?|eqs?\.|"
                       r"chapters?|ch\.|appendix|appendices|app\.|pages?|pp?\.|theorems?|thm\.|"
                       r"corollar(?:y|ies)|lemmas?|definitions?|algorithms?|alg\.|§)\s*[A-Z]?[\d.,–-]*\d", " ", clean)  # locators
        yield no + 1, clean


@pytest.mark.parametrize("page", [p for p in PAGES if p.exists()], ids=rel)
def test_numbers_in_prose_are_glued_not_typed(page):
    hits = []
    for no, line in prose_lines(page):
        for rx in (_NUMBER_WITH_UNIT, _DECIMAL):
            for m in rx.finditer(line):
                hits.append(f"{rel(page)}:{no}: {m.group(0)!r} in: {line.strip()[:100]}")
    assert not hits, ("numbers with units or decimals are typed into the prose; compute them "
                      "in a cell and glue them:\n" + "\n".join(hits))


# --- equations and lesson elements ------------------------------------------------------------

@pytest.mark.parametrize("page", [p for p in PAGES if p.exists()], ids=rel)
def test_display_equations_are_labelled(page):
    text = page.read_text()
    for m in re.finditer(r"```\{math\}\n(.*?)```", text, re.S):
        assert ":label: eq-" in m.group(1), f"{rel(page)}: a {{math}} block without ':label: eq-...'"


REQUIRED = {
    "opening animation": r"opening_animation\(",
    "structure diagram": r"structure_diagram\(",
    "study guide": r"```\{admonition\} Study guide",
    "prerequisites": r"```\{admonition\} Prerequisites",
    "a labelled equation": r":label: eq-",
    "a citation": r"\{cite(:[tp])?\}`",
    "key takeaways": r"```\{admonition\} Key takeaways",
    "a glued number": r"\{glue:text\}`",
    "an exercise": r"```\{exercise\}",
    "a solution that opens on click": r"```\{solution(-start)?\}[^\n]*\n(:[\w-]+:[^\n]*\n)*:class: dropdown",
    "a predict-then-measure exercise": r"(?i)predict,? then measure",
    "a check against a measurement or published number": r"(?i)^#+ .*check",
}


@pytest.mark.parametrize("page", LESSONS, ids=rel)
def test_lesson_pages_have_every_required_element(page):
    text = page.read_text()
    missing = [name for name, rx in REQUIRED.items() if not re.search(rx, text, re.M)]
    assert not missing, f"{rel(page)} lacks: {missing}"


@pytest.mark.parametrize("page", LESSONS, ids=rel)
def test_every_exercise_has_a_solution(page):
    text = page.read_text()
    exercises = re.findall(r"```\{exercise\}[^\n]*\n:label: ([\w-]+)", text)
    solutions = set(re.findall(r"```\{solution(?:-start)?\} ([\w-]+)", text))
    assert exercises, f"{rel(page)}: exercises need a :label:"
    assert set(exercises) <= solutions, f"{rel(page)}: exercises without solutions: {set(exercises) - solutions}"
