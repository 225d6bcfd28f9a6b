"""Tests of helpers.figures.parallelism: SVG whose content
comes from the simulator and the mesh model; plots that draw what the models compute.
(Validity, determinism and theme: tests/figures/test_svg_common.py.)"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers.figures import parallelism as fp  # noqa: E402
from helpers.models import parallelism as par  # noqa: E402
from helpers.sim import pipeline as pipe  # noqa: E402

SVG_NS = "{http://www.w3.org/2000/svg}"


def _texts(fig):
    return ["".join(el.itertext()) for el in ET.fromstring(fig.svg).iter(f"{SVG_NS}text")]


def test_opening_animation_draws_every_operation_and_the_simulated_bubble():
    fig = fp.opening_animation(pp=3, n_microbatches=5)
    assert fig.animated
    labels = [t for t in _texts(fig) if re.fullmatch(r"[FB]\d+", t)]
    assert sorted(labels) == sorted([f"F{j}" for j in range(5)] * 3 + [f"B{j}" for j in range(5)] * 3)
    bubble = pipe.simulate("1f1b", pp=3, n_microbatches=5).bubble_fraction()
    assert any(f"{bubble:.0%} of the step" in t for t in _texts(fig))


def test_structure_diagram_labels_ranks_with_the_mesh_model():
    fig = fp.structure_diagram(dp=2, tp=2, pp=3)
    numbers = sorted(int(t) for t in _texts(fig) if t.isdigit())
    assert numbers == list(range(12))
    assert "12" not in _texts(fig)
    assert any("world = 2 x 2 x 3 = 12" in t for t in _texts(fig))
    assert par.rank_of(i_d=1, i_p=2, i_t=1, dp=2, tp=2, pp=3) == 11


def test_timeline_figure_draws_one_bar_per_operation():
    tl = pipe.simulate("1f1b", pp=4, n_microbatches=6)
    fig = fp.timeline_figure(tl)
    ax = fig.axes[0]
    assert len(ax.patches) == len(tl.ops) == 2 * 4 * 6
    assert f"{tl.bubble_fraction():.1%}" in ax.get_title(loc="left")


def test_zero_memory_figure_stacks_to_the_model():
    fig = fp.zero_memory_figure(7.5e9, dp=64, capacity_bytes=141e9)
    ax = fig.axes[0]
    tops = {}
    for p in ax.patches:
        x = round(p.get_x() + p.get_width() / 2, 3)
        tops[x] = max(tops.get(x, 0.0), p.get_y() + p.get_height())
    got = [tops[x] for x in sorted(tops)]
    want = [par.zero_model_state_bytes_per_rank(7.5e9, dp=64, zero_stage=s) / 1e9
            for s in range(4)]
    assert got == pytest.approx(want)


@pytest.mark.parametrize("call", [
    lambda: fp.opening_animation(pp=9),
    lambda: fp.opening_animation(seconds_per_unit=0),
    lambda: fp.structure_diagram(dp=5),
    lambda: fp.timeline_figure("not a timeline"),
])
def test_bad_input_raises(call):
    with pytest.raises(ValueError):
        call()
