"""Control ownership, generated from ``book_controls.yml``: which layer owns each setting.

Each setting the book discusses is listed once with the software layer that owns it (the serving
engine, PyTorch, NCCL, the CUDA runtime, the GPU driver, the network stack, the container runtime,
the operating system), how it is set, who may set it, how far one change reaches, what it trades,
the page that teaches what it affects, the official documentation it was checked against and
a read-only command that prints its current value. The appendix page
``appendix/control-ownership.md`` and its diagram
(:func:`helpers.figures.control_ownership.layers_diagram`) are generated from this data; a page
not yet written is named and marked *(to come)*, as on the learning map (:mod:`helpers.book_map`).

Used by: appendix/control-ownership.md.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import yaml

from .book_checklist import check_problem
from .book_map import ROOT, Markdown, _item, built_pages, load_map

__all__ = ["CONTROLS_PATH", "SCOPES", "SCOPE_LABELS", "FIELDS", "OPTIONAL_FIELDS", "load_controls",
           "by_layer", "anchor", "controls_markdown"]

CONTROLS_PATH = Path(__file__).with_name("book_controls.yml")
#: How far one change reaches, narrowest first.
SCOPES = ("process", "job", "container", "gpu", "node")
#: How each scope is written on the page.
SCOPE_LABELS = {"process": "process", "job": "job", "container": "container", "gpu": "GPU",
                "node": "node"}
#: Fields every setting has, and those it may have.
FIELDS = ("name", "layer", "set", "who", "scope", "trades", "page", "source")
OPTIONAL_FIELDS = ("default", "check")
_LAYER_FIELDS = {"name", "set", "who"}


@lru_cache(maxsize=4)
def _load(path: str) -> dict:
    return yaml.safe_load(Path(path).read_text(encoding="utf-8"))


def load_controls(path: str | Path | None = None) -> dict:
    """``{"layers": {key: {...}}, "settings": [{...}, ...]}``, checked for shape.

    Raises ``ValueError`` naming the first setting with a missing or unknown field, an unknown
    layer or scope, a page label the learning map does not know, a source that is not an
    ``https`` address, a check that is not a well-formed read-only command
    (:func:`helpers.book_checklist.check_problem`), or a name listed twice.
    """
    data = _load(str(path or CONTROLS_PATH))
    if not isinstance(data, dict) or set(data) != {"layers", "settings"}:
        raise ValueError("the controls file needs exactly two keys, layers and settings")
    layers, labels, seen = data["layers"], load_map()["pages"], set()
    for key, layer in layers.items():
        if set(layer) != _LAYER_FIELDS:
            raise ValueError(f"layer {key!r} needs exactly {sorted(_LAYER_FIELDS)}, "
                             f"got {sorted(layer)}")
    for s in data["settings"]:
        keys = set(s)
        if not set(FIELDS) <= keys <= set(FIELDS) | set(OPTIONAL_FIELDS):
            raise ValueError(f"setting {s.get('name')!r} needs {list(FIELDS)} (and may have "
                             f"{list(OPTIONAL_FIELDS)}), got {sorted(keys)}")
        if any(not str(s[k]).strip() for k in keys):
            raise ValueError(f"setting {s['name']!r} has an empty field")
        if s["layer"] not in layers:
            raise ValueError(f"setting {s['name']!r} names unknown layer {s['layer']!r}; "
                             f"the layers are {list(layers)}")
        if s["scope"] not in SCOPES:
            raise ValueError(f"setting {s['name']!r} has scope {s['scope']!r}; valid: {SCOPES}")
        if s["page"] not in labels:
            raise ValueError(f"setting {s['name']!r} names page {s['page']!r}, not on the map")
        if not str(s["source"]).startswith("https://"):
            raise ValueError(f"setting {s['name']!r} needs an https source, got {s['source']!r}")
        if "check" in s and check_problem(s["check"]):
            raise ValueError(f"setting {s['name']!r}: check {s['check']!r} "
                             f"{check_problem(s['check'])}")
        if s["name"] in seen:
            raise ValueError(f"setting {s['name']!r} is listed twice")
        seen.add(s["name"])
    return data


def by_layer(data: dict | None = None) -> dict[str, list[dict]]:
    """The settings grouped by owner, layers in the file's order (top of the stack first)."""
    data = data or load_controls()
    return {key: [s for s in data["settings"] if s["layer"] == key] for key in data["layers"]}


def anchor(title: str) -> str:
    """The HTML id Sphinx gives a section titled ``title`` (the diagram links to it).

    >>> anchor("Network stack")
    'network-stack'
    """
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def controls_markdown(root: str | Path | None = None) -> Markdown:
    """The settings as MyST markdown: one section per layer, top of the stack first, and in it
    one definition-list entry per setting (how to set it, who may, its reach, and the command
    that prints its value where there is one; what it trades; the page that teaches it and the
    documentation)."""
    data, pages, toc = load_controls(), load_map(), built_pages(root or ROOT)
    out = []
    for key, settings in by_layer(data).items():
        layer = data["layers"][key]
        out.append(f"## {layer['name']}\n")
        out.append(f"*Set with {layer['set']}; usually by {layer['who']}.*\n")
        for s in settings:
            name = s["name"] if " " in s["name"] else f"`{s['name']}`"  # a flag, variable or API
            default = f" Default: {s['default']}." if "default" in s else ""
            out.append(f"**{name}**")
            check = f" · **Check:** `{s['check']}`" if "check" in s else ""
            out.append(f": **How:** {s['set']} · **Who:** {s['who']} · **Reach:** "
                       f"{SCOPE_LABELS[s['scope']]}{check}")
            out.append(f": {s['trades']}{default}")
            out.append(f": Taught in {_item(s['page'], pages, toc)} · "
                       f"[documentation]({s['source']})\n")
    return Markdown("\n".join(out))
