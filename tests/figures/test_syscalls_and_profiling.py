"""Tests of helpers.figures.syscalls_and_profiling."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from helpers.figures import syscalls_and_profiling as f  # noqa: E402


def test_svg_figures():
    anim, diag = f.opening_animation(), f.structure_diagram()
    assert anim.animated and "<animateMotion" in anim.svg and "<desc>" in anim.svg
    assert anim.svg == f.opening_animation().svg
    for word in ("counters", "tracers", "samplers", "page cache", "system calls"):
        assert word in diag.svg


def test_chunked_read_figure():
    fig = f.chunked_read_figure([256, 4096, 65536], [0.03, 0.002, 0.0005],
                                model_s=[0.03, 0.0021, 0.0005])
    assert len(fig.axes[0].lines) == 2
    plt.close(fig)
