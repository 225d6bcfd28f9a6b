"""Tests of helpers.figures.measurement: valid, deterministic, theme-aware figures."""

from __future__ import annotations

import re
import xml.dom.minidom

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest

from helpers import units
from helpers.figures import measurement as fm
from helpers.figures.svg import TEXT
from helpers.models import stats



def _ids(svg: str) -> list[str]:
    return re.findall(r'\bid="([^"]+)"', svg)


class TestOpeningAnimation:
    def test_valid_animated_and_deterministic(self):
        fig = fm.opening_animation()
        xml.dom.minidom.parseString(fig.svg)
        assert fig.animated and "<animate" in fig.svg and "<animateMotion" in fig.svg
        assert fig.svg == fm.opening_animation().svg
        assert repr(fig).startswith("Animation: ")
        assert 'data-figure="meas-open"' in fig.svg

    def test_labels_are_computed_from_the_inputs(self):
        fig = fm.opening_animation(launch_s=2e-6, kernel_s=(10e-6, 20e-6))
        assert f"host timer: {units.fmt_time(4e-6)}" in fig.svg
        # Device work runs from the first kernel's start (after its launch) to the end.
        assert f"events: {units.fmt_time(30e-6)} of device work" in fig.svg
        assert fig.svg.count("kernel ") >= 2

    def test_theme_aware_and_unique_ids(self):
        svg = fm.opening_animation().svg
        assert TEXT in svg
        ids = _ids(svg)
        assert len(ids) == len(set(ids)) and all(i.startswith("meas-open-") for i in ids)

    def test_key_times_are_valid(self):
        for attr in re.findall(r'keyTimes="([^"]+)"', fm.opening_animation().svg):
            kt = [float(v) for v in attr.split(";")]
            assert kt[0] == 0 and kt[-1] == 1 and all(a <= b for a, b in zip(kt, kt[1:]))

    @pytest.mark.parametrize("kw", [dict(launch_s=0.0), dict(kernel_s=()),
                                    dict(kernel_s=(1e-5, -1e-5))])
    def test_bad_input(self, kw):
        with pytest.raises(ValueError):
            fm.opening_animation(**kw)


class TestStructureDiagram:
    def test_valid_static_and_complete(self):
        fig = fm.structure_diagram()
        xml.dom.minidom.parseString(fig.svg)
        assert not fig.animated and "<animate" not in fig.svg
        for label in ("Host thread", "Stream (FIFO)", "Device", "check", "first call", "warm-up",
                      "repetitions", "statistics", "report", "decision"):
            assert f">{label}<" in fig.svg
        ids = _ids(fig.svg)
        assert len(ids) == len(set(ids)) and all(i.startswith("meas-struct-") for i in ids)
        assert fig.svg == fm.structure_diagram().svg


class TestPlots:
    rng = np.random.default_rng(0)
    x = rng.lognormal(np.log(1e-4), 0.2, 300)

    def test_three_ways(self):
        fig = fm.three_ways_figure({"host_no_sync_s": 3e-5, "host_sync_s": 2.1e-2,
                                    "events_s": 2.0e-2}, 2e-2)
        ax = fig.axes[0]
        assert isinstance(fig, matplotlib.figure.Figure)
        assert len(ax.patches) == 3 and ax.get_yscale() == "log"
        heights = sorted(p.get_height() for p in ax.patches)
        assert heights == pytest.approx([3e-5, 2.0e-2, 2.1e-2])
        with pytest.raises(ValueError, match="lacks"):
            fm.three_ways_figure({"events_s": 1.0}, 1.0)
        with pytest.raises(ValueError):
            fm.three_ways_figure({"host_no_sync_s": 1, "host_sync_s": 1, "events_s": 1}, 0)

    def test_naive_loop(self):
        fig = fm.naive_loop_figure([1e-5] * 3 + [1e-2] * 5, 1e-2, 2)
        assert fig.axes[0].lines[0].get_ydata().size == 8
        with pytest.raises(ValueError):
            fm.naive_loop_figure([], 1e-2, 2)

    def test_first_calls(self):
        fig = fm.first_calls_figure({"a": [1e-2, 1e-4, 1e-4], "b": [5e-3, 5e-4]})
        assert len(fig.axes[0].get_legend().get_texts()) == 2
        with pytest.raises(ValueError):
            fm.first_calls_figure({})
        with pytest.raises(ValueError):
            fm.first_calls_figure({"a": [1.0]})

    def test_resolution_marks_where_each_clock_reaches_the_target(self):
        fig = fm.resolution_figure({"fine": 5e-8, "coarse": 5e-7}, target=0.01)
        markers = [l for l in fig.axes[0].lines if l.get_marker() == "o"]
        assert sorted(float(m.get_xdata()[0]) for m in markers) == pytest.approx([5e-6, 5e-5])
        with pytest.raises(ValueError):
            fm.resolution_figure({"x": 0.0})
        with pytest.raises(ValueError):
            fm.resolution_figure({"x": 1e-8}, target=1.5)

    def test_distribution_marks_median_mean_and_outliers(self):
        y = self.x.copy()
        y[::50] *= 6
        fig = fm.distribution_figure(y)
        labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
        assert "median" in labels and "mean" in labels
        n_out = int(stats.mad_outliers(y).sum())
        assert f"MAD outliers ({n_out})" in labels
        with pytest.raises(ValueError):
            fm.distribution_figure([1.0, 2.0])
        with pytest.raises(ValueError):
            fm.distribution_figure([-1.0] * 10)

    def test_ci_width_shrinks(self):
        fig = fm.ci_width_figure(self.x, [6, 20, 100, 300, 10_000])
        med = fig.axes[0].lines[0].get_ydata()
        assert len(med) == 4 and med[-1] < med[0]
        with pytest.raises(ValueError):
            fm.ci_width_figure(self.x, [3, 10_000])

    def test_cache(self):
        fig = fm.cache_figure({"warm": 1e-5, "flushed": 4e-5}, 1e6)
        heights = [p.get_height() for p in fig.axes[0].patches]
        assert heights == pytest.approx([100.0, 25.0])  # GB/s
        with pytest.raises(ValueError):
            fm.cache_figure({}, 1e6)
        with pytest.raises(ValueError):
            fm.cache_figure({"a": 1.0}, 0)

    def test_comparison(self):
        comp = stats.compare(self.x, self.x / 1.3)
        fig = fm.comparison_figure(self.x, self.x / 1.3, comp, names=("old", "new"))
        assert fig.axes[1].get_title() == "Verdict: faster"
        assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["old", "new"]


def test_svg_text_takes_the_theme_colours():
    # Text follows the page's theme through CSS variables (the site's stylesheet lets the
    # book's figures sit on the page in dark mode; tests/site checks it in a browser).
    from helpers.figures.svg import MUTED, TEXT

    for fig in (fm.opening_animation(), fm.structure_diagram()):
        fills = re.findall(r'<text [^>]*fill="([^"]+)"', fig.svg)
        assert fills and all(f in (TEXT, MUTED) or f.startswith("#") for f in fills)
        assert any(f in (TEXT, MUTED) for f in fills)  # white is used only on filled shapes
