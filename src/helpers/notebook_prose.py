"""The prose of an executed page, readable outside the site: glue resolved, roles as text.

A page glues the numbers and figures of its prose from code (myst-nb's ``glue``); the site
renders them, but a notebook opened in JupyterLab or downloaded shows ``{glue:text}`key```,
``{term}`...``` and label lines. :func:`resolve_markdown` writes the glued values into the
markdown as the page shows them. :func:`page_markdown` turns a whole page into plain markdown
(prose resolved, code and its text outputs fenced) and :func:`llms_txt` indexes those files for
readers who study with an assistant (the llms.txt proposal, https://llmstxt.org). Used by the
site's notebook downloads and plain-markdown export (``_ext/book_links.py``) and by the
instructor kit (``tools/exercise_kit.py``).

Library only: no page imports it.
"""

from __future__ import annotations

import ast
import copy
import re

__all__ = ["glued_values", "glue_text", "substitute_glue", "resolve_markdown", "page_markdown",
           "markdown_page", "summary_sentence", "llms_txt"]

_GLUE_TEXT = re.compile(r"\{glue(?::text)?\}`([^`]+)`")
_GLUE_FIGURE = re.compile(r"^```\{glue:figure\}[ \t]+(\S+)[ \t]*\n((?::[^\n]*\n)*)(.*?)^```[ \t]*$",
                          re.M | re.S)
_ROLE = re.compile(r"\{(term|ref|numref|eq|doc|cite:p|cite:t|cite|math)\}`([^`]+)`")
_LABEL = re.compile(r"^\([\w.:-]+\)=[ \t]*\n", re.M)
_DIRECTIVE = re.compile(r"^(`{3,}|:{3,})\{([\w:-]+)\}[ \t]*([^\n]*)\n((?::[\w-]+:[^\n]*\n)*)(.*?)^\1[ \t]*$",
                        re.M | re.S)
_RECORD = "application/papermill.record/"
_ATTACHMENT = re.compile(r"!\[([^\]]*)\]\(attachment:[^)]+\)")
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
#: Cell tags whose code (or output) a page does not show; the export leaves them out too.
_HIDDEN_INPUT = {"remove-cell", "remove-input", "hide-input"}
_HIDDEN_OUTPUT = {"remove-cell", "remove-output", "hide-output"}
#: The most lines of one text output the export keeps (long logs and tables are cut).
OUTPUT_LINES = 40


def glued_values(nb: dict) -> dict:
    """Every value a notebook glues: ``{name: {mime type: data}}`` from its outputs."""
    out = {}
    for cell in nb.get("cells", []):
        for o in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            meta = (o.get("metadata") or {}).get("scrapbook") or {}
            if meta.get("name"):
                prefix = meta.get("mime_prefix", _RECORD)
                out[meta["name"]] = {k[len(prefix):]: v for k, v in (o.get("data") or {}).items()
                                     if k.startswith(prefix)}
    return out


def glue_text(values: dict, ref: str) -> str | None:
    """A ``{glue:text}`` role's text as the site shows it (myst-nb: the value's text/plain
    representation, formatted with the spec after ``:`` when there is one; a string shows
    without its quotes), or None when ``values`` has no text for the key.

    >>> glue_text({"n": {"text/plain": "4096.0"}, "s": {"text/plain": "'1.2 ms'"}}, "n:d")
    '4096'
    >>> glue_text({"s": {"text/plain": "'1.2 ms'"}}, "s"), glue_text({}, "gone:.2f") is None
    ('1.2 ms', True)
    """
    key, _, spec = ref.partition(":")
    entry = values.get(key.strip())
    if entry is None or "text/plain" not in entry:
        return None
    text = entry["text/plain"]
    text = "".join(text) if isinstance(text, list) else text
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    if spec:
        try:
            return format(int(value) if spec.endswith("d") else value, spec)
        except (ValueError, TypeError):
            return text
    return str(value)


def _role_text(kind: str, body: str) -> str:
    """The plain text of a cross-reference, term, citation or math role."""
    m = re.match(r"^(.*?)\s*<([^>]+)>$", body, re.S)
    title, target = (m.group(1), m.group(2)) if m else (None, body)
    if kind == "math":
        return f"${body}$"
    if kind.startswith("cite"):
        keys = ", ".join(k.strip() for k in body.split(","))
        return f"[{keys}]"
    if title:
        return title
    if kind == "eq":
        return f"equation ({target})"
    if kind in ("ref", "numref", "doc"):
        return "“" + re.sub(r"^(sec|fig|tab|eq|ex)-", "", target).replace("-", " ") + "”"
    return target  # a term's own words


def substitute_glue(text: str, values: dict) -> str:
    """``text`` with every ``{glue:text}`` role whose key ``values`` holds replaced by its text
    (:func:`glue_text`); a role with no value stays as it is, visible.

    >>> substitute_glue("n={glue:text}`n:d`, m={glue:text}`m`", {"n": {"text/plain": "7.0"}})
    'n=7, m={glue:text}`m`'
    """
    def one(m):
        shown = glue_text(values, m.group(1))
        return m.group(0) if shown is None else shown  # an empty glued string shows as nothing

    return _GLUE_TEXT.sub(one, text)


def resolve_markdown(nb: dict, values: dict | None = None) -> dict:
    r"""The notebook with its markdown resolved for reading outside the site (in place).

    Glued values are written as the page shows them, glued figures become images attached to
    their cell (PNG where the value has one, else its HTML), MyST roles become plain text,
    label lines are dropped, and directives become quoted blocks with their title in bold.
    ``values`` are the glued values (:func:`glued_values`), by default the notebook's own.

    >>> nb = {"cells": [
    ...   {"cell_type": "code", "source": "", "outputs": [{"output_type": "display_data",
    ...     "data": {_RECORD + "text/plain": "8.030261248"},
    ...     "metadata": {"scrapbook": {"name": "n", "mime_prefix": _RECORD}}}]},
    ...   {"cell_type": "markdown", "source": "(sec-a)=\n# A\n{term}`HBM` holds {glue:text}`n:.1f` GB."}]}
    >>> resolve_markdown(nb)["cells"][1]["source"]
    '# A\nHBM holds 8.0 GB.'
    """
    values = glued_values(nb) if values is None else values
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "markdown":
            continue
        src = cell["source"]
        src = "".join(src) if isinstance(src, list) else src
        attachments = dict(cell.get("attachments") or {})

        def figure(m):
            key, caption = m.group(1), m.group(3).strip()
            entry = values.get(key) or {}
            if "image/png" in entry:
                name = f"{key}.png"
                data = entry["image/png"]
                attachments[name] = {"image/png": "".join(data) if isinstance(data, list) else data}
                image = f"![{caption.splitlines()[0] if caption else key}](attachment:{name})"
            elif "text/html" in entry:
                html = entry["text/html"]
                image = "".join(html) if isinstance(html, list) else html
            else:
                image = f"*(figure `{key}`: see the page on the site)*"
            return image + ("\n\n" + caption if caption else "")

        src = _GLUE_FIGURE.sub(figure, src)

        def directive(m):
            name, arg, body = m.group(2), m.group(3).strip(), m.group(5).rstrip("\n")
            if name in ("math",):
                return "$$\n" + body + "\n$$"
            title = f"**{name.split(':')[-1].capitalize()}{': ' + arg if arg else ''}**"
            lines = [title, ""] + body.splitlines()
            return "\n".join("> " + ln if ln else ">" for ln in lines)

        for _ in range(3):  # nested directives (an exercise inside a dropdown)
            new = _DIRECTIVE.sub(directive, src)
            if new == src:
                break
            src = new
        src = substitute_glue(src, values)
        src = _ROLE.sub(lambda m: _role_text(m.group(1), m.group(2)), src)
        src = _LABEL.sub("", src)
        cell["source"] = src
        if attachments:
            cell["attachments"] = attachments
    return nb


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else (value or "")


def _output_text(output: dict) -> str:
    """The text a reader sees of one output: stream text, or a result's plain text; glue records
    and widgets (shown elsewhere or only live) give none."""
    if (output.get("metadata") or {}).get("scrapbook"):
        return ""
    if output.get("output_type") == "stream":
        return _text(output.get("text"))
    data = output.get("data") or {}
    if any(k.startswith("application/vnd.jupyter.widget") for k in data):
        return ""
    if "text/plain" in data and not any(k.startswith("image/") for k in data):
        return _text(data["text/plain"])
    return ""


def page_markdown(nb: dict, values: dict | None = None, *, output_lines: int = OUTPUT_LINES) -> str:
    """A page as one plain-markdown text: its prose resolved (:func:`resolve_markdown`, on a
    copy), each shown code cell fenced as Python, and each text output fenced below it (cut to
    ``output_lines`` lines). Figures attached by the resolution become their caption in words,
    since a plain text cannot carry them.

    >>> nb = {"cells": [
    ...   {"cell_type": "markdown", "source": "# A\\nRate {glue:text}`r:.1f` GB/s."},
    ...   {"cell_type": "code", "source": "print(6 * 7)", "metadata": {},
    ...    "outputs": [{"output_type": "stream", "name": "stdout", "text": "42\\n"}]},
    ...   {"cell_type": "code", "source": "secret()", "metadata": {"tags": ["remove-cell"]},
    ...    "outputs": []}]}
    >>> print(page_markdown(nb, {"r": {"text/plain": "3.14159"}}))
    # A
    Rate 3.1 GB/s.
    <BLANKLINE>
    ```python
    print(6 * 7)
    ```
    <BLANKLINE>
    ```text
    42
    ```
    <BLANKLINE>
    """
    if output_lines < 1:
        raise ValueError(f"output_lines must be at least 1, got {output_lines!r}")
    values = glued_values(nb) if values is None else values
    nb = resolve_markdown(copy.deepcopy(nb), values)
    parts = []
    for cell in nb.get("cells", []):
        src = _text(cell.get("source")).strip("\n")
        if cell.get("cell_type") == "markdown":
            src = _ATTACHMENT.sub(lambda m: f"*[Figure: {m.group(1) or 'see the page'}]*", src)
            if src:
                parts.append(src)
            continue
        if cell.get("cell_type") != "code":
            continue
        tags = set((cell.get("metadata") or {}).get("tags") or [])
        if src and not tags & _HIDDEN_INPUT:
            parts.append("```python\n" + src + "\n```")
        if tags & _HIDDEN_OUTPUT:
            continue
        for output in cell.get("outputs", []):
            shown = (output.get("data") or {}).get("text/markdown")
            if shown and not (output.get("metadata") or {}).get("scrapbook"):
                # markdown a cell displays (a generated table or list) reads as prose
                prose = resolve_markdown({"cells": [{"cell_type": "markdown",
                                                     "source": _text(shown)}]}, values)
                parts.append(_text(prose["cells"][0]["source"]).strip("\n"))
                continue
            lines = _output_text(output).rstrip("\n").splitlines()
            if not lines:
                continue
            if len(lines) > output_lines:
                lines = lines[:output_lines] + [f"... ({len(lines) - output_lines} more lines)"]
            parts.append("```text\n" + "\n".join(lines) + "\n```")
    return "\n\n".join(parts) + "\n"


def markdown_page(text: str) -> dict:
    """A plain MyST page (no code) as a one-cell notebook, front matter dropped, so that
    :func:`page_markdown` treats it like the others.

    >>> markdown_page("---\\nmyst: 1\\n---\\n# Hi\\n")["cells"][0]["source"]
    '# Hi\\n'
    """
    return {"cells": [{"cell_type": "markdown", "source": _FRONT_MATTER.sub("", text)}]}


def summary_sentence(markdown: str, limit: int = 200) -> str:
    """The first sentence of a page's first paragraph of prose (not a heading, list, quote,
    fence, table or figure), cut at ``limit`` characters: the page's line in llms.txt.

    >>> summary_sentence("# Title\\n\\n> **Note**\\n\\nA GPU waits on memory. Then more.\\n")
    'A GPU waits on memory.'
    """
    if limit < 20:
        raise ValueError(f"limit must be at least 20 characters, got {limit!r}")
    in_fence = False
    for block in re.split(r"\n\s*\n", markdown):
        first = block.lstrip()
        if first.startswith("```"):
            in_fence = first.count("```") % 2 == 1
            continue
        if in_fence:
            in_fence = block.count("```") % 2 == 0
            continue
        if not first or first[0] in "#>|-*!<$:`" or re.match(r"\d+\.\s", first):
            continue
        text = " ".join(first.split())
        m = re.match(r"(.+?[.!?])(\s|$)", text)
        sentence = m.group(1) if m else text
        return sentence if len(sentence) <= limit else sentence[:limit - 1].rstrip() + "…"
    return ""


def llms_txt(title: str, summary: str, sections: list[tuple[str, list[tuple[str, str, str]]]]) -> str:
    """An llms.txt index (https://llmstxt.org): the title as the one H1, the summary as a quote,
    then one H2 per section listing its pages as ``- [title](url): line``.

    >>> print(llms_txt("Book", "What it is.", [("Part I", [("One", "one.md", "First.")])]))
    # Book
    <BLANKLINE>
    > What it is.
    <BLANKLINE>
    ## Part I
    <BLANKLINE>
    - [One](one.md): First.
    <BLANKLINE>
    """
    if not title.strip():
        raise ValueError("title must not be empty")
    out = [f"# {title.strip()}", ""]
    if summary.strip():
        out += [f"> {' '.join(summary.split())}", ""]
    for caption, pages in sections:
        if not pages:
            continue
        out += [f"## {caption}", ""]
        out += [f"- [{t}]({u})" + (f": {line}" if line else "") for t, u, line in pages]
        out.append("")
    return "\n".join(out)
