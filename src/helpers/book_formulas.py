"""The formula sheet, generated from the helper package so it cannot drift from the code.

Every public function of every ``helpers.models`` module is one entry: its one-line summary,
the ``.. math::`` equation of its docstring, the unit of its result (from the name's suffix or the
summary), its inputs (the function's parameters, whose names carry their units), its Assumptions
and References sections, and the page that teaches it (the page that labels the docstring's
equation, else the first page in reading order whose source calls it). The sheet is printed one
compact section per page, in reading order under its part, so a lesson's formulas sit together;
models no page uses yet close it, by module. Docstring examples (``>>>``) stay in the code.

Used by: appendix/formulas.md.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from dataclasses import dataclass
from pathlib import Path

from .book import page_sources
from .book_map import ROOT, Markdown

__all__ = ["Entry", "UNIT_SUFFIXES", "model_functions", "parse_docstring", "unit_of",
           "teaching_pages", "formula_entries", "formula_sheet_markdown"]

#: Name suffix -> unit, longest first (the book's naming convention for SI units).
UNIT_SUFFIXES = (
    ("_flop_per_byte", "FLOP/byte"), ("_flop_per_s", "FLOP/s"), ("_bytes_per_s", "bytes/s"),
    ("_bits_per_s", "bit/s"), ("_per_s", "1/s"), ("_flop", "FLOP"), ("_bytes", "bytes"),
    ("_hz", "Hz"), ("_s", "s"),
)

_SECTION = re.compile(r"^\s*([A-Z][A-Za-z ]+)\n\s*-{3,}\s*$", re.M)


@dataclass(frozen=True)
class Entry:
    """One model on the formula sheet."""

    module: str
    name: str
    summary: str
    equation: str | None
    eq_label: str | None
    unit: str | None
    assumptions: str | None
    references: str | None  # the function's own References section
    module_references: str | None  # its module's, which the sheet shows once per module
    page: str | None        # toc file of the page that teaches it
    page_label: str | None  # its (sec-...) label
    inputs: tuple[str, ...] = ()  # the function's parameter names (their suffixes carry units)


def model_functions() -> list[tuple[str, str, object]]:
    """(module, name, function) for every public function of every ``helpers.models`` module."""
    import helpers.models as models

    found = []
    for info in sorted(pkgutil.iter_modules(models.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"helpers.models.{info.name}")
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if inspect.isfunction(obj):
                found.append((info.name, name, obj))
    return found


def _sections(doc: str) -> dict[str, str]:
    """numpydoc sections of ``doc`` by title (text under each, dedented and joined)."""
    doc = inspect.cleandoc(doc)
    marks = list(_SECTION.finditer(doc))
    out = {"": doc[: marks[0].start()] if marks else doc}
    for m, nxt in zip(marks, marks[1:] + [None]):
        body = doc[m.end(): nxt.start() if nxt else len(doc)]
        out[m.group(1).strip()] = inspect.cleandoc(body)
    return out


def parse_docstring(doc: str | None) -> dict:
    """Summary, equation (and its page label), Returns, Assumptions and References of ``doc``.

    >>> d = parse_docstring('''Seconds.
    ...
    ...     .. math:: T = F / P      (the page labels this eq-time)
    ...
    ...     References
    ...     ----------
    ...     A book.
    ...     ''')
    >>> d["equation"], d["eq_label"], d["references"]
    ('T = F / P', 'eq-time', 'A book.')
    >>> parse_docstring("Time (s) to move the bytes: :math:`T_m = Q / M`.")["equation"]
    'T_m = Q / M'
    """
    if not doc:
        return {"summary": "", "equation": None, "eq_label": None, "returns": None,
                "assumptions": None, "references": None}
    sec = _sections(doc)
    head = sec[""]
    summary = head.strip().split("\n\n")[0].replace("\n", " ").strip()
    equation = label = None
    m = re.search(r"\.\. math::[ \t]*(.*?)(?:\n[ \t]*\n|\Z)", head, re.S)
    if m:
        text = m.group(1).strip()
        if not text:  # block form: the equation is the indented paragraph below
            m2 = re.search(r"\.\. math::[ \t]*\n[ \t]*\n((?:[ \t]+\S.*\n?)+)", head)
            text = inspect.cleandoc(m2.group(1)) if m2 else ""
        # the page's label for it, as "(the page labels this eq-x)", "(eq-x; words)" or
        # "\qquad\text{(... eq-x)}", at the end of the equation
        lab = re.search(r"\s*(?:\\qquad\s*)?(?:\\text\{)?\(([^()]*?\b(eq-[\w-]+)[^()]*)\)\}?\s*$",
                        text.strip())
        if lab:
            label = lab.group(2)
            text = text.strip()[: lab.start()]
        # a trailing remark in words, e.g. "(stages not named in ``x`` keep :math:`s = 1`)"
        text = re.sub(r"\s+\([^()]*(?:``|:math:)[^()]*\)\s*$", "", text.strip())
        equation = " ".join(text.split()) or None
    if equation is None:  # "Time (s) to ...: :math:`T_c = F / P`." states it in the summary
        inline = re.search(r":\s*:math:`([^`]+)`\.?\s*$", summary)
        if inline:
            equation = inline.group(1).strip()
    return {"summary": summary, "equation": equation, "eq_label": label,
            "returns": sec.get("Returns"), "assumptions": sec.get("Assumptions"),
            "references": sec.get("References")}


def unit_of(name: str, summary: str = "", returns: str | None = None) -> str | None:
    """The result's unit: from the name's suffix, else the first parenthesis of the summary.

    >>> unit_of("ridge_intensity_flop_per_byte")
    'FLOP/byte'
    >>> unit_of("amdahl_speedup", "Speedup (dimensionless) of a whole task.")
    'dimensionless'
    """
    for suffix, unit in UNIT_SUFFIXES:
        if name.endswith(suffix):
            return unit
    for text in (summary, returns or ""):
        m = re.search(r"\(([^()]*)\)", text)
        if m and len(m.group(1)) < 30 and not m.group(1).startswith(":math:"):
            return m.group(1).replace("``", "")
    return None


def _label_of(path: Path) -> str | None:
    m = re.search(r"^\((sec-[a-z0-9-]+)\)=", path.read_text(encoding="utf-8"), re.M)
    return m.group(1) if m else None


def teaching_pages(root: str | Path | None = None) -> dict:
    """Index of the book's sources: equation label -> page, and the text of every page."""
    root = Path(root or ROOT)
    eq, text = {}, {}
    for page in page_sources(root):
        if not page.exists():
            continue
        rel = str(page.relative_to(root).with_suffix(""))
        src = page.read_text(encoding="utf-8")
        text[rel] = src
        for lab in re.findall(r":label:\s*(eq-[\w-]+)", src):
            eq.setdefault(lab, rel)
    return {"eq": eq, "text": text}


def _module_references(module: str) -> str | None:
    doc = importlib.import_module(f"helpers.models.{module}").__doc__
    return _sections(doc).get("References") if doc else None


def formula_entries(root: str | Path | None = None) -> list[Entry]:
    """One :class:`Entry` per public model function, in module then ``__all__`` order."""
    root = Path(root or ROOT)
    index = teaching_pages(root)
    entries = []
    for module, name, fn in model_functions():
        d = parse_docstring(fn.__doc__)
        page = index["eq"].get(d["eq_label"]) if d["eq_label"] else None
        if page is None:
            call = re.compile(rf"\b{re.escape(name)}\s*\(")
            page = next((rel for rel, src in index["text"].items() if call.search(src)), None)
        entries.append(Entry(
            module=module, name=name, summary=d["summary"], equation=d["equation"],
            eq_label=d["eq_label"], unit=unit_of(name, d["summary"], d["returns"]),
            assumptions=d["assumptions"], references=d["references"],
            module_references=_module_references(module), page=page,
            page_label=_label_of(root / f"{page}.md") if page else None,
            inputs=tuple(p for p in inspect.signature(fn).parameters
                         if p not in ("self", "args", "kwargs"))))
    return entries


_DOCTEST = re.compile(r"(?m)^[ \t]*>>>.*(?:\n(?![ \t]*\n).*)*")


def _md(text: str) -> str:
    """Docstring reST to MyST: inline math, literals and cross-references, one paragraph;
    doctest examples (a ``>>>`` line and the lines up to the next blank one) are dropped."""
    text = _DOCTEST.sub("", text)
    text = text.split(">>>")[0]  # an example run into the same line
    text = re.sub(r":math:`([^`]*)`", r"$\1$", text)
    text = re.sub(r":(?:func|class|mod|meth|data|attr):`~?([^`]*)`", r"`\1`", text)
    text = text.replace("``", "`")
    return " ".join(text.split())


def _md_items(text: str) -> list[str]:
    """A References section as items: one per ``*``/``-`` bullet, or the whole text as one."""
    items = re.split(r"(?m)^\s*[*-]\s+", text)
    items = [_md(i) for i in items if i.strip()]
    return items or [_md(text)]


def _parts(root: Path) -> list[tuple[str, list[str]]]:
    """``(part caption, [toc file, ...])`` in reading order (the root page in the first part)."""
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))

    def files(node):
        if isinstance(node, dict):
            if "file" in node:
                yield node["file"]
            for key in ("chapters", "sections"):
                yield from files(node.get(key) or [])
        elif isinstance(node, list):
            for item in node:
                yield from files(item)

    parts = [(p.get("caption", ""), list(files(p))) for p in toc.get("parts", [])]
    if toc.get("chapters"):
        parts.append(("", list(files(toc["chapters"]))))
    if parts:
        parts[0][1].insert(0, toc["root"])
    return parts


def _entry_markdown(e: Entry) -> list[str]:
    out = [f"**`{e.name}`** (`{e.module}`): {_md(e.summary)}", ""]
    if e.equation:
        eq = e.equation
        if "&" in eq and r"\begin" not in eq:  # alignment points need an environment
            eq = r"\begin{aligned}" + eq + r"\end{aligned}"
        out += ["$$", eq, "$$", ""]
    facts = [f"unit: {e.unit or 'see the docstring'}"]
    if e.inputs:
        facts.append("inputs: " + ", ".join(f"`{p}`" for p in e.inputs))
    if e.references:
        items = [i for i in _md_items(e.references) if i]
        if items:
            facts.append("source: " + "; ".join(items))
    elif e.module_references:
        items = [i for i in _md_items(e.module_references) if i]
        if items:
            facts.append("source: " + "; ".join(items))
    out.append("- " + "; ".join(facts))
    if e.assumptions:
        out.append(f"- assumptions: {_md(e.assumptions)}")
    out.append("")
    return out


def formula_sheet_markdown(root: str | Path | None = None) -> Markdown:
    """The formula sheet as MyST markdown: a section per teaching page in reading order, under
    its part, then the models no page uses yet, by module."""
    root = Path(root or ROOT)
    entries = formula_entries(root)
    by_page: dict[str, list[Entry]] = {}
    for e in entries:
        by_page.setdefault(e.page or "", []).append(e)
    out: list[str] = []
    for caption, files in _parts(root):
        pages = [f for f in files if by_page.get(f)]
        if not pages:
            continue
        out += [f"## {caption}" if caption else "## Pages", ""]
        for page in pages:
            label = _label_of(root / f"{page}.md")
            out += [f"### {{ref}}`{label}`" if label else f"### `{page}`", ""]
            for e in by_page[page]:
                out += _entry_markdown(e)
    untaught = by_page.get("", [])
    if untaught:
        out += ["## Models no page uses yet", "",
                "Library functions the labs and figures call, or models written ahead of the page "
                "that will teach them, by module.", ""]
        for e in sorted(untaught, key=lambda e: e.module):
            out += _entry_markdown(e)
    return Markdown("\n".join(out))
