"""Tests of helpers.figures.networking."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from helpers.figures import networking as f  # noqa: E402


def test_svg_figures():
    anim, diag = f.opening_animation(), f.structure_diagram()
    assert anim.animated and "<animateMotion" in anim.svg and "<desc>" in anim.svg
    assert anim.svg == f.opening_animation().svg
    for word in ("TCP", "socket buffer", "loopback", "wire and switches"):
        assert word in diag.svg


def test_round_trip_figure_shows_the_fit():
    fig = f.round_trip_figure([1, 1e3, 1e6], [1e-5, 1.1e-5, 1e-3], fit=(1e-5, 1e9))
    ax = fig.axes[0]
    assert len(ax.lines) == 2
    assert "α = 10 µs" in ax.get_legend().get_texts()[1].get_text()
    plt.close(fig)
