"""Links from each page out of the static site: its notebook with outputs, and launch buttons.

* **Download with outputs.** The theme's download menu offers the page's source (``.md``) and a
  print dialog. Every page that executes also gets its executed notebook, the one the page was
  rendered from (``_build/jupyter_execute/<page>.ipynb``: outputs, figures and the explorers'
  widget state, merged back from the execution cache where myst-nb left them out), copied
  beside the source under ``_sources/`` and listed in the menu as ``.ipynb``. The theme only
  does this when launch buttons are configured; here it is always on.
* **Numbers in the text.** A page's prose glues its numbers and figures from code
  (``{glue:text}`key:spec```, ``{glue:figure}``); outside the site those would read as raw
  placeholders. The downloaded notebook has them resolved (:func:`resolve_markdown`): each
  glued value is written into the markdown as the page shows it, glued figures become images
  attached to their cell, and cross-references, glossary terms, citations and labels become
  plain text. The notebook still opens and runs in JupyterLab.
* **Launch buttons and the repository link** appear only when the environment variable
  ``BOOK_REPOSITORY_URL`` names the public repository (the publish workflow sets it from
  ``github.server_url``/``github.repository``; ``BOOK_REPOSITORY_BRANCH`` picks the branch,
  ``main`` by default). A local or offline build has no public repository to point at, so it
  draws no buttons rather than dead links. Binder opens the page in JupyterLab with the book's
  environment (``binder/``); Colab (GitHub only) opens it from GitHub. Both open the committed
  reference notebook beside each page (``chapters/x.ipynb``, written by ``tools/nb_refs.py``),
  which the theme prefers over the ``.md`` whenever it exists: a real notebook with outputs,
  which Colab can read (it cannot read MyST markdown).
"""

from __future__ import annotations

import ast
import base64
import os
import re
from pathlib import Path
from urllib.parse import urlparse

BINDER = "https://mybinder.org"
COLAB = "https://colab.research.google.com"


def repository_options(env: dict | None = None) -> dict:
    """The theme options for ``BOOK_REPOSITORY_URL`` in ``env`` (default: the process's), or ``{}``."""
    env = os.environ if env is None else env
    url = (env.get("BOOK_REPOSITORY_URL") or "").strip().rstrip("/")
    if not url:
        return {}
    parts = urlparse(url)
    if parts.scheme not in ("http", "https") or len([p for p in parts.path.split("/") if p]) != 2:
        raise ValueError(f"BOOK_REPOSITORY_URL must be https://host/owner/repo, got {url!r}")
    launch = {"binderhub_url": BINDER, "notebook_interface": "jupyterlab"}
    if parts.netloc.lower() == "github.com":  # Colab opens notebooks from GitHub only
        launch["colab_url"] = COLAB
    return {
        "repository_url": url,
        "repository_branch": (env.get("BOOK_REPOSITORY_BRANCH") or "").strip() or "main",
        "path_to_docs": "",
        "use_repository_button": True,
        "launch_buttons": launch,
    }


def _configure(app, config):
    options = repository_options()
    if options:
        config.html_theme_options = {**(config.html_theme_options or {}), **options}


def _cached_notebook(app, nb):
    """``nb`` merged with its outputs from the execution cache, or None if it is not cached."""
    cache_path = getattr(getattr(app.env, "mystnb_config", None), "execution_cache_path", "")
    cache_path = Path(cache_path or Path(app.outdir).parent / ".jupyter_cache")
    if not cache_path.is_dir():
        return None
    from jupyter_cache import get_cache

    try:
        _, merged = get_cache(str(cache_path)).merge_match_into_notebook(nb)
    except KeyError:  # not in the cache: the page was not executed
        return None
    return merged


def _with_cached_outputs(app, path: Path) -> bytes:
    """The notebook at ``path``, with its outputs from the execution cache if it has none.

    myst-nb 1.4.0 writes ``jupyter_execute/<page>.ipynb`` from the notebook it read, not from
    the one it merged with the cache (``myst_nb/sphinx_.py``: ``notebook`` rather than
    ``nb_client.notebook``), so a page whose outputs came from jupyter-cache is written there
    with none. Merge them back the way myst-nb's cache client does.
    """
    raw = path.read_bytes()
    import nbformat

    nb = nbformat.reads(raw.decode("utf-8"), as_version=4)
    if any(c.get("outputs") for c in nb.cells if c.cell_type == "code"):
        return raw
    merged = _cached_notebook(app, nb)
    return raw if merged is None else nbformat.writes(merged).encode("utf-8")


def _glue_of(app, nb_json: dict) -> dict:
    """The values a page glues: from the execution cache, which keeps the glue outputs that
    the executed notebook written beside the site may have dropped, else from the notebook."""
    import nbformat

    merged = _cached_notebook(app, nbformat.from_dict(nb_json))
    values = glued_values(nb_json)
    if merged is not None:
        values = {**values, **glued_values(merged)}
    return values


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


def _glue_text(values: dict, ref: str) -> str:
    """A ``{glue:text}`` role's text as the site shows it (myst-nb: the value's text/plain
    representation, formatted with the spec after ``:`` when there is one)."""
    key, _, spec = ref.partition(":")
    entry = values.get(key.strip())
    if entry is None or "text/plain" not in entry:
        return f"`{ref}`"  # not glued on this page: leave it visible rather than guess
    text = entry["text/plain"]
    text = "".join(text) if isinstance(text, list) else text
    if spec:
        try:
            return format(ast.literal_eval(text), spec)
        except (ValueError, SyntaxError, TypeError):
            return text
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        try:
            return str(ast.literal_eval(text))
        except (ValueError, SyntaxError):
            return text[1:-1]
    return text


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
        src = _GLUE_TEXT.sub(lambda m: _glue_text(values, m.group(1)), src)
        src = _ROLE.sub(lambda m: _role_text(m.group(1), m.group(2)), src)
        src = _LABEL.sub("", src)
        cell["source"] = src
        if attachments:
            cell["attachments"] = attachments
    return nb


def _offer_notebook(app, pagename, templatename, context, doctree):
    """Copy the page's executed notebook into ``_sources`` and let the theme list it."""
    if not context.get("page_source_suffix") or app.builder.format != "html":
        return
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if not executed.is_file():  # a plain markdown page: nothing executed, nothing to offer
        return
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    import json

    nb = json.loads(_with_cached_outputs(app, executed).decode("utf-8"))
    nb = resolve_markdown(nb, _glue_of(app, nb))
    target.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    context["ipynb_source"] = f"{pagename}.ipynb"


def _resolve_downloads(app, exception):
    """Resolve every offered notebook once the build has written them all: with launch buttons
    configured, the theme copies the executed notebook into ``_sources`` itself, after
    :func:`_offer_notebook` ran, so the resolution is applied (again, harmlessly) at the end."""
    if exception is not None or app.builder.format != "html":
        return
    import json

    for path in (Path(app.outdir) / "_sources").rglob("*.ipynb"):
        nb = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(json.dumps(resolve_markdown(nb, _glue_of(app, nb)), indent=1,
                                   ensure_ascii=False) + "\n", encoding="utf-8")


def _label_notebook(app, pagename, templatename, context, doctree):
    """Say in the menu that the notebook carries its outputs."""
    for group in context.get("header_buttons", []):
        for button in group.get("buttons", []) if group.get("label") == "download-buttons" else []:
            if button.get("label") == "download-notebook-button":
                button["tooltip"] = "Download the notebook with its outputs"


def setup(app):
    app.connect("config-inited", _configure)
    # After the theme's prep_header_buttons (500) and before it draws the download menu (501).
    app.connect("html-page-context", _offer_notebook, priority=500)
    app.connect("html-page-context", _label_notebook, priority=502)
    app.connect("build-finished", _resolve_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
