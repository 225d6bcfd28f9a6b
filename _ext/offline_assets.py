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
* Links to glossary terms carry the term's definition as their ``title``, so hovering over a
  term on any page shows what it means.
* pydata-sphinx-theme logs an error on a fresh browser profile unless ``html_context``
  sets ``default_mode``.
* pydata-sphinx-theme's template loads ``scripts/fontawesome.js`` on every page (1.5 MB, 0.5 MB
  gzipped: the heaviest file of most pages, see ``helpers.book_weight``) only "so that users
  can add custom icons", which the book does not; its style sheet already draws every icon
  from the Font Awesome web fonts. The tag is dropped from each written page after the build.
"""

import re
from pathlib import Path

from docutils import nodes
from sphinx import addnodes

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


def _collect_glossary(app, doctree):
    """Remember each glossary entry's definition under its anchor id (e.g. ``term-kernel``)."""
    store = app.env.__dict__.setdefault("book_glossary", {})
    docname = app.env.docname
    for glossary in doctree.findall(addnodes.glossary):
        for item in glossary.findall(nodes.definition_list_item):
            definition = item.next_node(nodes.definition)
            text = " ".join(definition.astext().split()) if definition else ""
            # Cross-references are unresolved at this point and read as their label; a hover
            # title is plain text, so drop them and simplify the commonest LaTeX.
            text = re.sub(r"[;,]?\s*(?:[Ii]ntroduced in|[Ss]ee)\s+sec-[\w-]+\.?", "", text)
            text = re.sub(r"\(?\bsec-[\w-]+\)?", "", text)
            text = text.replace("\\times", "×").replace("\\,", " ").replace("\\", "")
            for term in item.findall(nodes.term):
                for anchor in term["ids"]:
                    store[anchor] = (docname, text)


def _purge_glossary(app, env, docname):
    store = env.__dict__.get("book_glossary", {})
    for anchor in [a for a, (doc, _) in store.items() if doc == docname]:
        del store[anchor]


def _merge_glossary(app, env, docnames, other):
    env.__dict__.setdefault("book_glossary", {}).update(other.__dict__.get("book_glossary", {}))


def _term_titles(app, doctree, docname):
    """Give every resolved term reference its definition as a hover title."""
    store = app.env.__dict__.get("book_glossary", {})
    for ref in doctree.findall(nodes.reference):
        if not any("std-term" in child.get("classes", []) for child in ref.children
                   if isinstance(child, nodes.Element)):
            continue
        anchor = ref.get("refid") or ref.get("refuri", "").rpartition("#")[2]
        if anchor in store and store[anchor][1]:
            text = store[anchor][1]
            ref["reftitle"] = text if len(text) <= 300 else text[:297] + "..."


_FONTAWESOME_JS = re.compile(r'[ \t]*<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>\n?')


def _drop_fontawesome_js(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        lean = _FONTAWESOME_JS.sub("", text)
        if lean != text:
            page.write_text(lean, encoding="utf-8")


def setup(app):
    app.connect("builder-inited", _add_static)
    app.connect("config-inited", _theme_defaults)
    app.connect("html-page-context", _dedupe_scripts, priority=999)
    app.connect("doctree-read", _collect_glossary)
    app.connect("env-purge-doc", _purge_glossary)
    app.connect("env-merge-info", _merge_glossary)
    app.connect("doctree-resolved", _term_titles)
    app.connect("build-finished", _drop_fontawesome_js)
    app.add_js_file("mathjax2-shim.js", priority=200)
    app.add_js_file("book.js", priority=900)  # after the themes' scripts; see its header
    app.add_css_file("book.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
