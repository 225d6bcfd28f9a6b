"""Tests of helpers.figures.cpu_architecture."""

import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers.figures import cpu_architecture as cf  # noqa: E402


def test_animation_follows_its_arguments():
    a = cf.opening_animation(lanes=8, width=2)
    assert a.animated and "8 lanes" in a.svg and "group of 2 instructions" in a.svg
    assert a.svg.count("<animateMotion") == 5 * 2
    assert not cf.structure_diagram().animated
    with pytest.raises(ValueError):
        cf.opening_animation(lanes=0)


def test_peak_figure_bars():
    fig = cf.peak_figure({"one": 80e9, "two": 160e9}, 150e9)
    widths = [b.get_width() for b in fig.axes[0].patches]
    assert widths == pytest.approx([80, 160, 150])


def _key_times_are_valid(svg: str) -> None:
    """SMIL keyTimes must start at 0, end at 1 and never decrease (browsers reject others)."""
    for kt in re.findall(r'keyTimes="([^"]+)"', svg):
        vals = [float(v) for v in kt.split(";")]
        assert vals[0] == 0 and vals[-1] == 1, kt
        assert all(b >= a for a, b in zip(vals, vals[1:])), kt


@pytest.mark.parametrize("make", [cf.opening_animation, cf.structure_diagram])
def test_animation_key_times_are_valid(make):
    _key_times_are_valid(make().svg)
