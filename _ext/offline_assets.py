"""Site assets: serve the vendored MathJax and widget manager from the book itself, and clean
up three defects of the Jupyter Book 1 stack that show as console errors in a browser.

* ``tools/vendor-web-assets`` fills ``_vendor_static/`` from the npm registry. The folder is added
  to ``html_static_path`` at ``builder-inited`` rather than placed under ``_static/``, because
  Jupyter Book 1 injects every .js file under ``_static/`` into every page. A missing folder is a
  Sphinx warning, so a build with ``-W`` fails loudly if the vendor step did not run.
* ``@jupyter-widgets/html-manager`` typesets widget labels through MathJax 2's
  ``MathJax.Hub.Queue``; Sphinx 7 ships MathJax 3. ``mathjax2-shim.js`` maps the call.
* sphinx-thebe 0.3.1 registers its inline config script twice on Sphinx 7.4
  (``Identifier 'THEBE_JS_URL' has already been declared``); duplicates are dropped per page.
  The handler runs last (priority 999) and edits the list in place, after every other
  extension has added its scripts.
* ``book.css`` lets the book's theme-aware SVG figures sit on the page in dark mode (the theme
  otherwise puts every HTML output on a light card, where their light text would vanish).
* pydata-sphinx-theme logs an error on a fresh browser profile unless ``html_context``
  sets ``default_mode``.
"""

from pathlib import Path

HERE = Path(__file__).parent


def _add_static(app):
    app.config.html_static_path.append(str(Path(app.srcdir) / "_vendor_static"))
    app.config.html_static_path.append(str(HERE / "static"))


def _theme_defaults(app, config):
    context = dict(config.html_context or {})
    context.setdefault("default_mode", "auto")
    config.html_context = context


def _dedupe_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for js in scripts:
        # Sphinx 7.4 stores an inline script once as filename None and once as "".
        attrs = getattr(js, "attributes", {})
        key = (getattr(js, "filename", None) or "", tuple(sorted(attrs.items())))
        if key in seen:
            continue
        seen.add(key)
        unique.append(js)
    scripts[:] = unique


def setup(app):
    app.connect("builder-inited", _add_static)
    app.connect("config-inited", _theme_defaults)
    app.connect("html-page-context", _dedupe_scripts, priority=999)
    app.add_js_file("mathjax2-shim.js", priority=200)
    app.add_css_file("book.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
