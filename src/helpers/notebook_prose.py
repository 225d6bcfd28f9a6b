"""The prose of an executed page, readable outside the site: glue resolved, roles as text.

A page glues the numbers and figures of its prose from code (myst-nb's ``glue``); the site
renders them, but a notebook opened in JupyterLab or downloaded shows ``{glue:text}`key```,
``{term}`...``` and label lines. :func:`resolve_markdown` writes the glued values into the
markdown as the page shows them. Used by the site's notebook downloads
(``_ext/book_links.py``) and by the instructor kit (``tools/exercise_kit.py``).
"""

from __future__ import annotations

import ast
import re

__all__ = ["glued_values", "glue_text", "substitute_glue", "resolve_markdown"]

_GLUE_TEXT = re.compile(r"\{glue(?::text)?\}`([^`]+)`")
_GLUE_FIGURE = re.compile(r"^```\{glue:figure\}[ \t]+(\S+)[ \t]*\n((?::[^\n]*\n)*)(.*?)^```[ \t]*$",
                          re.M | re.S)
_ROLE = re.compile(r"\{(term|ref|numref|eq|doc|cite:p|cite:t|cite|math)\}`([^`]+)`")
_LABEL = re.compile(r"^\([\w.:-]+\)=[ \t]*\n", re.M)
_DIRECTIVE = re.compile(r"^(`{3,}|:{3,})\{([\w:-]+)\}[ \t]*([^\n]*)\n((?::[\w-]+:[^\n]*\n)*)(.*?)^\1[ \t]*$",
                        re.M | re.S)
_RECORD = "application/papermill.record/"


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
    return _GLUE_TEXT.sub(lambda m: glue_text(values, m.group(1)) or m.group(0), text)


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
