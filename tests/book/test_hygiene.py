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

from helpers.book import ROOT  # the repository root, computed once
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
    for no, _raw, clean in _prose(page):
        yield no, clean


def _prose(page: Path):
    """Yield (line number, raw line, line with roles, code, math and locators blanked) of prose."""
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
        yield no + 1, lines[no], clean


@pytest.mark.parametrize("page", [p for p in PAGES if p.exists()], ids=rel)
def test_numbers_in_prose_are_glued_not_typed(page):
    hits = []
    for no, line in prose_lines(page):
        for rx in (_NUMBER_WITH_UNIT, _DECIMAL):
            for m in rx.finditer(line):
                hits.append(f"{rel(page)}:{no}: {m.group(0)!r} in: {line.strip()[:100]}")
    assert not hits, ("numbers with units or decimals are typed into the prose; compute them "
                      "in a cell and glue them:\n" + "\n".join(hits))


# --- directions next to measured numbers ----------------------------------------------------
# A sentence that glues a measured value (one glued in a cell tagged nbval-ignore-output: a
# timing, a rate, anything of this machine) must not also carry a typed direction ("faster",
# "costs less", "X ns more"): the measurement may come out the other way on the next machine,
# and the page would then contradict the number beside it (issue 17). The word must come from
# the data (conditional glue: compute it in the cell and glue it) or the sentence must state
# both cases. The sentence before a direction counts too, since "The second miss costs less
# than the first" compares the numbers its predecessor glued. Questions are exempt (a
# prediction asked of the reader states no result).

_GLUE_CALL = re.compile(r"""\bglue\(\s*f?["']([^"']+)["']""")
_GLUE_ROLE = re.compile(r"\{glue(?::text)?\}`([^`:]+)[^`]*`")
_GLUED = "\x00"  # what a glue role becomes in the typed text, so "{glue} ns more" is seen
_DIRECTION = re.compile(
    r"(?i)\b(?:faster|slower|quicker|cheaper|costlier|beats?|beaten|beating|outperform(?:s|ed)?)\b"
    r"|\b(?:costs?|took|takes|paid|pays|spent|spends)\s+(?:\w+\s+)?(?:more|less)\b"
    r"|\b(?:more|less|fewer|higher|lower|larger|smaller|longer|shorter|greater)\s+than\b"
    r"|" + _GLUED + r"\s*(?:[^\s" + _GLUED + r"]+\s+){0,2}?(?:more|less|fewer|higher|lower|longer|shorter)\b")
_LIST_ITEM = re.compile(r"^\s*(?:[*-]|\d+\.)\s")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z{*(`$])")
# A sentence that names both directions ("faster ... or slower") states both cases.
_BOTH_CASES = [(re.compile(r"(?i)\b(?:faster|quicker|cheaper|beats?)\b"),
                re.compile(r"(?i)\b(?:slower|costlier|dearer|fell short|falls? short)\b")),
               (re.compile(r"(?i)\bmore\b"), re.compile(r"(?i)\b(?:less|fewer)\b"))]

# Sentences whose direction is not a measurement's, each with its reason: (page, a piece of
# the sentence's source) -> why the direction cannot flip with the measurement.
DIRECTION_ALLOWED: dict[tuple[str, str], str] = {
    # A general possibility ("can"), followed by the run's outcome as computed glue.
    ("foundations/containers-and-cgroups.md", "even one thread can get less than a whole CPU"):
        "states what can happen on a shared machine; the run's outcome is glued after the colon",
    ("foundations/containers-and-cgroups.md", "falls short of the CPUs allowed, the process got fewer"):
        "a conditional rule (where ... falls short, ...), true in both cases",
    # Physics and published behaviour, not this run's measurement.
    ("foundations/pcie-and-interconnects.md", "copies that fit in the CPU's caches run faster"):
        "the memory hierarchy's ordering (cache above DRAM), explaining why one line misfits",
    ("chapters/measurement.md", "a matrix multiplication on zeros runs *faster* than on random data"):
        "a published GPU result (He et al. 2024, cited in the sentence), not this CPU's run",
    ("chapters/gpu-architecture.md", "A value above one means the cores have more than one FMA unit"):
        "a conditional reading of the ratio (above one means ...), true in both cases",
    ("chapters/measurement.md", "so only a buffer larger than that would send the sum to main memory"):
        "a rule about cache sizes (a flush must exceed the level it empties)",
    ("chapters/measurement.md", "A buffer smaller than the second-level cache"):
        "a rule about cache sizes (a buffer smaller than a level cannot evict it)",
    ("chapters/measurement.md", "A clock cannot time what is shorter than its resolution"):
        "a property of clocks; the glued error is this run's illustration of it",
    # True by construction of the statistic or the threshold.
    ("chapters/measurement.md", "two reads in a row never differ by less than"):
        "the glued resolution is the smallest difference observed, so none is less by definition",
    ("chapters/measurement.md", "No repetition ran faster than"):
        "the glued value is the minimum of the repetitions, so none ran faster by definition",
    ("chapters/measurement.md", "one repetition in a hundred was slower"):
        "the definition of the 99th percentile",
    ("chapters/measurement.md", "we switch only if the fused version is faster by at least"):
        "a decision rule stated before measuring; the glued number is the threshold",
    ("chapters/profiling.md", "so nested operators are not counted twice"):
        "'longer than' names the reader's gap threshold, a definition, not a comparison of results",
    ("chapters/profiling.md", "Shaded: idle gaps longer than"):
        "the gaps shown are selected by the threshold, so longer by definition",
    ("chapters/profiling.md", "idle gaps longer than"):
        "the gaps counted are selected by the threshold, so longer by definition",
    ("chapters/profiling.md", "When kernels are shorter than their launches the step is launch-bound"):
        "a conditional rule (the roofline of launches); the verdict itself is glued",
}


def measured_glue_keys(page: Path) -> set[str]:
    """Keys glued in cells tagged nbval-ignore-output (machine-dependent by the page's own
    policy); an f-string key's fields become ``*`` wildcards."""
    keys = set()
    for cell in cells(page):
        if cell.cell_type == "code" and "nbval-ignore-output" in cell.metadata.get("tags", []):
            keys.update(re.sub(r"\{[^}]*\}", "*", m.group(1)) for m in _GLUE_CALL.finditer(cell.source))
    return keys


def prose_sentences(page: Path):
    """Yield (line number of its paragraph, sentence source) for every prose sentence, a
    paragraph or list item at a time (roles kept, so glue keys can be read)."""
    block: list[tuple[int, str]] = []

    def flush():
        if block:
            text = " ".join(raw.strip() for _, raw in block)
            for s in _SENTENCE_END.split(text):
                yield block[0][0], s
            block.clear()

    last = None
    for no, raw, _clean in _prose(page):
        if not raw.strip() or _LIST_ITEM.match(raw) or (last is not None and no != last + 1):
            yield from flush()
        if raw.strip():
            block.append((no, raw))
        last = no
    yield from flush()


def direction_hits(page: Path) -> list[tuple[int, str, list[str], list[str]]]:
    """(line, sentence, direction words, measured keys) for each typed direction next to a
    measured glue on ``page``."""
    import fnmatch

    keys = measured_glue_keys(page)
    if not keys:
        return []
    hits, prev = [], (None, "")
    for no, sentence in prose_sentences(page):
        context = sentence if prev[0] != no else prev[1] + " " + sentence
        prev = (no, sentence)
        if sentence.rstrip().endswith("?"):
            continue
        measured = [k for k in _GLUE_ROLE.findall(context)
                    if any(fnmatch.fnmatchcase(k, pat) for pat in keys)]
        if not measured:
            continue
        typed = re.sub(r"\{[\w:-]+\}`[^`]*`", _GLUED, sentence)
        typed = re.sub(r"`[^`]*`|\$[^$]+\$", " ", typed)
        words = [m.group(0).replace(_GLUED, "{glue}") for m in _DIRECTION.finditer(typed)]
        if words and any(up.search(typed) and down.search(typed) for up, down in _BOTH_CASES):
            continue  # both cases stated
        if words:
            hits.append((no, sentence, words, measured))
    return hits


def _allowed(page: Path, sentence: str) -> bool:
    return any(page_rel == rel(page) and piece in sentence for page_rel, piece in DIRECTION_ALLOWED)


DIRECTION_PAGES = [p for p in NOTEBOOKS if p.parent.name in ("chapters", "foundations", "labs")]


@pytest.mark.parametrize("page", DIRECTION_PAGES, ids=rel)
def test_directions_next_to_measured_numbers_are_computed(page):
    bad = [f"{rel(page)}:{no}: typed {words} beside measured {measured[:3]}: {s[:140]}"
           for no, s, words, measured in direction_hits(page) if not _allowed(page, s)]
    assert not bad, ("a typed direction sits in the sentence of a measured number (or right "
                     "after it); glue the word from the data or state both cases:\n"
                     + "\n".join(bad))


def test_every_allowed_direction_still_exists():
    """An allow-list entry whose sentence is gone, or no longer flagged, is removed, so the
    list cannot hide a new sentence that happens to share its words."""
    flagged = {rel(p): [s for _, s, _, _ in direction_hits(p)] for p in DIRECTION_PAGES}
    stale = [(page, piece) for page, piece in DIRECTION_ALLOWED
             if not any(piece in s for s in flagged.get(page, []))]
    assert not stale, f"allow-list entries that match no flagged sentence: {stale}"


def test_the_direction_check_finds_a_contradiction():
    """The check reads a sentence like the ones issue 17 found (a clamped difference printed as
    'costs about 0.001 ns more', 'makes a second load cheaper' beside a ratio below one, a
    comparison in the sentence after the numbers) and passes the computed and both-case forms."""
    import tempfile

    body = ("---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
            "kernelspec:\n  display_name: Python 3\n  language: python\n  name: python3\n---\n\n"
            "```{code-cell} ipython3\n:tags: [remove-cell, nbval-ignore-output]\n\n"
            "glue('x_ns', 1.0)\nglue('x_word', 'more')\n```\n\n"
            "```{code-cell} ipython3\n:tags: [remove-cell]\n\nglue('y_spec', 2.0)\n```\n\n")
    cases = {
        "A load costs about {glue:text}`x_ns:.3g` ns more.": 1,
        "The cache makes it cheaper: a cold read took {glue:text}`x_ns:.3g` times a warm one.": 1,
        "A step cost {glue:text}`x_ns:.3g` ns. The second miss costs less than the first.": 1,
        "A load costs {glue:text}`x_ns:.3g` ns, {glue:text}`x_word` than a hit.": 0,
        "The spec's {glue:text}`y_spec:.3g` ns is more than a hit.": 0,
        "Will a load cost more than {glue:text}`x_ns:.3g` ns?": 0,
        "It can run faster or slower; it took {glue:text}`x_ns:.3g` ns.": 0,
    }
    with tempfile.TemporaryDirectory() as tmp:
        for prose, want in cases.items():
            page = Path(tmp) / "page.md"
            page.write_text(body + prose + "\n")
            assert len(direction_hits(page)) == want, prose


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
