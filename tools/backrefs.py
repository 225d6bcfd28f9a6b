#!/usr/bin/env python
"""Back-references: which pages use each module of ``src/helpers/`` (issue 16).

Every module's docstring ends with a paragraph that names the pages importing it, found from
the ``import`` statements of the pages' code cells (a name imported from a package counts for
the package and for the module that defines the name)::

    Used by: chapters/roofline.md, labs/roofline.md.

or, for a module no page imports, ``Library only: no page imports it.``

    python tools/backrefs.py                 # list the modules whose paragraph is out of date
    python tools/backrefs.py --write         # rewrite those paragraphs
    python tools/backrefs.py --write MODULE  # only these (dotted names or paths)

``tests/book/test_backrefs.py`` checks every paragraph against the pages. The lab runners
(``src/helpers/labs/``) name their pages in their ``Lab`` record instead and are left out.
"""
from __future__ import annotations

import argparse
import ast
import re
import sys
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PAGE_DIRS = ("chapters", "labs", "foundations", "appendix", "practice")
TOP_PAGES = ("intro.md", "map.md")
EXCLUDED = ("helpers.labs",)   # lab runners: their Lab record names their pages
MANY = 6                       # more pages than this: "Used by many pages, among them ..."
WIDTH = 96

CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
PARAGRAPH = re.compile(r"\n\n(?:Used by(?: many pages, among them)?:|Library only:)[^\0]*?\Z")


def pages() -> list[Path]:
    out = [ROOT / p for p in TOP_PAGES if (ROOT / p).exists()]
    for d in PAGE_DIRS:
        out += sorted((ROOT / d).rglob("*.md"))
    return out


def module_path(name: str) -> Path | None:
    base = SRC / Path(*name.split("."))
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.exists():
            return p
    return None


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def modules() -> list[str]:
    out = []
    for p in sorted((SRC / "helpers").rglob("*.py")):
        name = module_name(p)
        if not any(name == e or name.startswith(e + ".") for e in EXCLUDED):
            out.append(name)
    return out


def _python_only(code: str) -> str:
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


@lru_cache(maxsize=None)
def _tree(name: str):
    p = module_path(name)
    return ast.parse(p.read_text()) if p else None


def _resolve_relative(package: str, level: int, target: str | None) -> str:
    base = package.split(".")
    base = base[:len(base) - (level - 1)] if level > 1 else base
    return ".".join(base + ([target] if target else []))


@lru_cache(maxsize=None)
def defining_module(module: str, attr: str, depth: int = 0) -> str | None:
    """The module of ``src/helpers`` that defines ``module.attr`` (a submodule, or a function,
    class or constant, followed through re-exports)."""
    if module_path(f"{module}.{attr}"):
        return f"{module}.{attr}"
    tree = _tree(module)
    if tree is None or depth > 8:
        return None
    is_pkg = module_path(module).name == "__init__.py"
    package = module if is_pkg else module.rpartition(".")[0]
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and node.name == attr:
            return module
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == attr for t in targets):
                return module
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                if (a.asname or a.name) == attr:
                    src = (_resolve_relative(package, node.level, node.module) if node.level
                           else node.module or "")
                    if src.startswith("helpers"):
                        return defining_module(src, a.name, depth + 1) or src
    return module


def imported_modules(code: str) -> set[str]:
    """Modules of ``src/helpers`` a code cell imports."""
    try:
        tree = ast.parse(_python_only(code))
    except SyntaxError:
        return set()
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "helpers" or a.name.startswith("helpers."):
                    parts = a.name.split(".")
                    out.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module \
                and (node.module == "helpers" or node.module.startswith("helpers.")):
            parts = node.module.split(".")
            out.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
            for a in node.names:
                d = defining_module(node.module, a.name)
                if d:
                    out.add(d)
    return {m for m in out if module_path(m)}


def users() -> dict[str, list[str]]:
    """{module: [pages importing it]} over every page."""
    found: dict[str, set[str]] = {}
    for page in pages():
        rel = str(page.relative_to(ROOT))
        for cell in CELL.findall(page.read_text()):
            for m in imported_modules(cell):
                found.setdefault(m, set()).add(rel)
    return {m: sorted(v) for m, v in found.items()}


def paragraph(used_by: list[str]) -> str:
    if not used_by:
        return "Library only: no page imports it."
    if len(used_by) > MANY:
        head, shown = "Used by many pages, among them:", used_by[:MANY]
    else:
        head, shown = "Used by:", used_by
    words = [head] + [f"{p}," for p in shown[:-1]] + [f"{shown[-1]}."]
    lines, line = [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > WIDTH:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    return "\n".join(lines + [line])


def docstring_node(tree: ast.Module):
    if tree.body and isinstance(tree.body[0], ast.Expr) \
            and isinstance(tree.body[0].value, ast.Constant) \
            and isinstance(tree.body[0].value.value, str):
        return tree.body[0].value
    return None


def stated(path: Path) -> str | None:
    """The back-reference paragraph a module's docstring ends with, or None."""
    node = docstring_node(ast.parse(path.read_text()))
    if node is None:
        return None
    m = PARAGRAPH.search(node.value.rstrip())
    return m.group(0).strip() if m else None


def stated_pages(text: str) -> list[str]:
    return re.findall(r"[a-z_-]+(?:/[a-z0-9_-]+)*\.md", text)


def rewrite(path: Path, para: str) -> bool:
    text = path.read_text()
    node = docstring_node(ast.parse(text))
    lines = text.splitlines(keepends=True)
    start = sum(len(ln) for ln in lines[:node.lineno - 1]) + node.col_offset
    end = sum(len(ln) for ln in lines[:node.end_lineno - 1]) + node.end_col_offset
    literal = text[start:end]
    q = literal[-3:]
    if q not in ('"""', "'''"):
        raise ValueError(f"{path}: the module docstring is not triple-quoted")
    body = literal[:-3]
    m = PARAGRAPH.search(body.rstrip())
    kept = body.rstrip()[:m.start()] if m else body.rstrip()
    new = f"{kept}\n\n{para}\n{q}"
    if new == literal:
        return False
    path.write_text(text[:start] + new + text[end:])
    return True


def out_of_date(selected: list[str] | None = None) -> dict[str, str]:
    """{module: wanted paragraph} for the modules whose docstring does not end with it."""
    use = users()
    todo = {}
    for name in selected or modules():
        path = module_path(name)
        want = paragraph(use.get(name, []))
        if stated(path) != want:
            todo[name] = want
    return todo


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help="rewrite the out-of-date paragraphs")
    ap.add_argument("modules", nargs="*", help="dotted names or paths (default: all)")
    args = ap.parse_args(argv)
    selected = [module_name((ROOT / m).resolve()) if m.endswith(".py") else m
                for m in args.modules] or None
    todo = out_of_date(selected)
    for name, para in todo.items():
        print(f"{name}: {para.splitlines()[0]}{' ...' if chr(10) in para else ''}")
        if args.write:
            rewrite(module_path(name), para)
    return 0 if args.write or not todo else 1


if __name__ == "__main__":
    sys.exit(main())
