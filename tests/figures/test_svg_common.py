"""One test of every SVG figure of the book: well formed, deterministic and theme aware.

The figure functions are found, not listed: every public function of a ``helpers.figures``
module whose return annotation is :class:`helpers.figures.svg.Figure` and that needs no argument
(plus the calls in ``EXTRA_CALLS``), so a new figure is covered the day it is written. The
page-specific tests next to this file check what each figure draws; this one checks what every
figure owes the page that shows it:

* the same call gives the same bytes (nbval compares the SVG source);
* it parses as an ``<svg>`` with a ``<title>`` and a ``<desc>`` (screen readers read them);
* every ``id`` is unique and starts with the figure's ``data-figure`` uid, so two figures can
  share a page;
* text takes the theme's colours (CSS variables), so it follows light and dark mode; other text
  colours are literal mid-tones; no pure black or white fill (``THEME_EXEMPT`` lists the figures
  that print white text on filled shapes, where it is meant);
* SMIL ``keyTimes`` start at 0, never decrease, stay in [0, 1] and end at 1 (the last may be
  below 1 only with ``calcMode="discrete"``) and pair with the values; the browser rejects
  anything else.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
import re
import xml.etree.ElementTree as ET

import pytest

import helpers.figures
from helpers.figures.foundations_overview import thread_diagram
from helpers.figures.svg import MUTED, TEXT, Figure

SVG_NS = "{http://www.w3.org/2000/svg}"


def _discover() -> list:
    found = {}
    for info in pkgutil.iter_modules(helpers.figures.__path__):
        module = importlib.import_module(f"helpers.figures.{info.name}")
        for name in getattr(module, "__all__", ()):
            fn = getattr(module, name)
            if not inspect.isfunction(fn) or inspect.signature(fn).return_annotation not in (
                    Figure, "Figure"):
                continue
            params = inspect.signature(fn).parameters.values()
            if all(p.default is not p.empty for p in params):
                found[(fn.__module__, fn.__name__)] = fn  # a re-export is tested once
    return [found[k] for k in sorted(found)]


#: Figures called with arguments other than their defaults.
EXTRA_CALLS = [functools.partial(thread_diagram, ["memory-hierarchy"])]
FIGURES = _discover() + EXTRA_CALLS


def _name(make) -> str:
    fn = make.func if isinstance(make, functools.partial) else make
    suffix = "(args)" if isinstance(make, functools.partial) else ""
    return f"{fn.__module__.rsplit('.', 1)[-1]}.{fn.__name__}{suffix}"


#: Figures that print white text on filled shapes (boxes, bars), where white is meant; they
#: still have to use the theme's colours for some text and pass every other check.
THEME_EXEMPT = {"cuda_execution.opening_animation", "lab_launch_overhead.opening_animation",
                "lab_roofline.opening_animation", "measurement.opening_animation",
                "parallelism.opening_animation", "parallelism.structure_diagram",
                "scheduling_kv.opening_animation"}  # request ids in white on filled batch slots


def test_every_figure_module_is_found():
    # 79 figure functions and one extra call when this test was written; fewer means the
    # discovery broke.
    assert len(FIGURES) >= 80
    assert len({_name(m) for m in FIGURES}) == len(FIGURES)
    assert THEME_EXEMPT <= {_name(m) for m in FIGURES}


@pytest.mark.parametrize("make", FIGURES, ids=_name)
def test_svg_is_valid_deterministic_and_theme_aware(make):
    a, b = make(), make()
    assert isinstance(a, Figure) and a.svg == b.svg
    root = ET.fromstring(a.svg)
    assert root.tag == f"{SVG_NS}svg"
    assert root.find(f"{SVG_NS}title") is not None and root.find(f"{SVG_NS}desc") is not None

    uid = root.get("data-figure")
    ids = [el.get("id") for el in root.iter() if el.get("id")]
    assert uid and len(ids) == len(set(ids)) and all(i.startswith(uid + "-") for i in ids)

    fills = [t.get("fill", "") for t in root.iter(f"{SVG_NS}text")]
    assert fills and TEXT in a.svg and any(f in (TEXT, MUTED) for f in fills)
    assert all(f in (TEXT, MUTED) or f.startswith("#") for f in fills), set(fills)
    if _name(make) not in THEME_EXEMPT:
        assert sum(f in (TEXT, MUTED) for f in fills) > len(fills) / 2
        assert not re.search(r'fill="(#000|#000000|#fff|#ffffff|black|white)"', a.svg)


@pytest.mark.parametrize("make", FIGURES, ids=_name)
def test_animation_key_times_are_valid(make):
    fig = make()
    animations = [el for el in ET.fromstring(fig.svg).iter() if el.get("keyTimes")]
    assert bool(animations) <= fig.animated  # a static figure has no timed animation
    for el in animations:
        kt = [float(v) for v in el.get("keyTimes").split(";")]
        assert kt[0] == 0 and all(0 <= x <= y <= 1 for x, y in zip(kt, kt[1:])), kt
        assert kt[-1] == 1 or el.get("calcMode") == "discrete", kt
        values = el.get("values") or el.get("keyPoints")  # animateMotion moves by keyPoints
        assert values and len(kt) == len(values.split(";")), el.attrib
