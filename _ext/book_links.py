"""Links from each page out of the static site: its notebook with outputs, and launch buttons.

* **Download with outputs.** The theme's download menu offers the page's source (``.md``) and a
  print dialog. Every page that executes also gets its executed notebook, the one the page was
  rendered from (``_build/jupyter_execute/<page>.ipynb``: outputs, figures and the explorers'
  widget state, merged back from the execution cache where myst-nb left them out), copied
  beside the source under ``_sources/`` and listed in the menu as ``.ipynb``. The theme only
  does this when launch buttons are configured; here it is always on.
* **Numbers in the text.** A page's prose glues its numbers and figures from code
  (``{glue:text}`key:spec```, ``{glue:figure}``); outside the site those would read as raw
  placeholders. The downloaded notebook has them resolved
  (:func:`helpers.notebook_prose.resolve_markdown`): each
  glued value is written into the markdown as the page shows it, glued figures become images
  attached to their cell, and cross-references, glossary terms, citations and labels become
  plain text. The notebook still opens and runs in JupyterLab.
* **Plain markdown for assistants.** Every page is also written as plain markdown beside its
  HTML (``chapters/gemm.md`` next to ``chapters/gemm.html``): prose with its numbers resolved,
  code fenced as Python, text outputs fenced below it (:func:`helpers.notebook_prose.page_markdown`).
  ``llms.txt`` at the site's root lists them by part with each page's first sentence (the
  llms.txt proposal, https://llmstxt.org), and ``llms-full.txt`` holds every page in reading order.
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

import os
from pathlib import Path
from urllib.parse import urlparse

from helpers.notebook_prose import (glued_values, llms_txt, markdown_page, page_markdown,
                                    resolve_markdown, summary_sentence)

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


def _offer_notebook(app, pagename, templatename, context, doctree):
    """Copy the page's executed notebook into ``_sources`` and let the theme list it."""
    if not context.get("page_source_suffix") or app.builder.format != "html":
        return
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if not executed.is_file():  # a plain markdown page: nothing executed, nothing to offer
        return
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(_with_cached_outputs(app, executed))  # prose resolved at the end
    context["ipynb_source"] = f"{pagename}.ipynb"


def _resolve_downloads(app, exception):
    """Resolve the prose of every offered notebook, once, after the build has written them all
    (with launch buttons configured the theme copies the executed notebook into ``_sources``
    itself, after :func:`_offer_notebook` ran, so earlier would be too early)."""
    if exception is not None or app.builder.format != "html":
        return
    import json

    for path in (Path(app.outdir) / "_sources").rglob("*.ipynb"):
        nb = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(json.dumps(resolve_markdown(nb, _glue_of(app, nb)), indent=1,
                                   ensure_ascii=False) + "\n", encoding="utf-8")


def _toc_order(app) -> list[tuple[str, list[str]]]:
    """``(part caption, [docname, ...])`` in reading order, from the book's ``_toc.yml``: the
    root page first, under the first part."""
    import yaml

    toc = yaml.safe_load((Path(app.srcdir) / "_toc.yml").read_text(encoding="utf-8"))

    def files(entries):
        for entry in entries or []:
            if "file" in entry:
                yield str(Path(entry["file"]).with_suffix(""))
            yield from files(entry.get("sections"))

    parts = toc.get("parts") or [{"caption": "Contents", "chapters": toc.get("chapters")}]
    order = [(p.get("caption") or "Contents", list(files(p.get("chapters")))) for p in parts]
    order[0][1].insert(0, str(Path(toc["root"]).with_suffix("")))
    return order


def _page_text(app, docname: str) -> str | None:
    """A page as plain markdown, from its executed notebook when it ran, else its source."""
    import json

    executed = Path(app.outdir).parent / "jupyter_execute" / f"{docname}.ipynb"
    if executed.is_file():
        nb = json.loads(_with_cached_outputs(app, executed).decode("utf-8"))
        return page_markdown(nb, _glue_of(app, nb))
    source = Path(app.env.doc2path(docname))
    if source.suffix != ".md" or not source.is_file():
        return None
    return page_markdown(markdown_page(source.read_text(encoding="utf-8")))


def _export_markdown(app, exception):
    """Write every page as plain markdown beside its HTML, and ``llms.txt``/``llms-full.txt``."""
    if exception is not None or app.builder.format != "html":
        return
    out, sections, full = Path(app.outdir), [], []
    for caption, docnames in _toc_order(app):
        pages = []
        for docname in docnames:
            if docname not in app.env.found_docs:
                continue
            text = _page_text(app, docname)
            if text is None:
                continue
            target = out / f"{docname}.md"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            title = app.env.titles[docname].astext() if docname in app.env.titles else docname
            pages.append((title, f"{docname}.md", summary_sentence(text)))
            full.append(text)
        sections.append((caption, pages))
    summary = sections[0][1][0][2] if sections and sections[0][1] else ""
    (out / "llms.txt").write_text(llms_txt(app.config.html_title or app.config.project, summary, sections), encoding="utf-8")
    (out / "llms-full.txt").write_text("\n\n---\n\n".join(full), encoding="utf-8")


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
    app.connect("build-finished", _export_markdown)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
