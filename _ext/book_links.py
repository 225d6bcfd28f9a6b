"""Links from each page out of the static site: its notebook with outputs, and launch buttons.

* **Download with outputs.** The theme's download menu offers the page's source (``.md``) and a
  print dialog. Every page that executes also gets its executed notebook, the one the page was
  rendered from (``_build/jupyter_execute/<page>.ipynb``: outputs, figures and the explorers'
  widget state), copied beside the source under ``_sources/`` and listed in the menu as
  ``.ipynb``. The theme only does this when launch buttons are configured; here it is always on.
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
import shutil
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


def _offer_notebook(app, pagename, templatename, context, doctree):
    """Copy the page's executed notebook into ``_sources`` and let the theme list it."""
    if not context.get("page_source_suffix") or app.builder.format != "html":
        return
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if not executed.is_file():  # a plain markdown page: nothing executed, nothing to offer
        return
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(executed, target)
    context["ipynb_source"] = f"{pagename}.ipynb"


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
    return {"parallel_read_safe": True, "parallel_write_safe": True}
