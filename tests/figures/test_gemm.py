"""Tests of helpers.figures.gemm: the SVGs carry the models' numbers; the plots draw."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers.figures import gemm as gf  # noqa: E402
from helpers.models import gemm as gm  # noqa: E402


def test_opening_animation_counts_tiles_waves_and_efficiency():
    f = gf.opening_animation(6, 8, 20)
    assert f.animated
    assert "48 tiles on 3 x 20 slots: 80% busy" in f.svg
    assert "8/20" in f.svg  # the last wave's tiles
    f2 = gf.opening_animation(4, 4, 16)
    assert f"{gm.wave_efficiency(16, 16):.0%} busy" in f2.svg and "16/16" in f2.svg


def test_diagrams_are_static_and_name_their_parts():
    s = gf.structure_diagram(stages=4)
    assert not s.animated and "4 stages" in s.svg and "L2 cache" in s.svg
    lab = gf.lab_structure_diagram()
    assert "tiling sweep" in lab.svg and "wave model" in lab.svg


def test_plots_draw_and_refuse_empty_input():
    rows = [{"n": n, "torch_flop_per_s": 1e12 * n / 8192, "triton_flop_per_s": 9e11 * n / 8192,
             "wave_efficiency": 0.9} for n in (1024, 8192)]
    fig = gf.rate_vs_size_figure(rows, title="t", peak_flop_per_s=2e12)
    assert len(fig.axes) == 2  # the rate and the wave model's efficiency
    assert len(fig.axes[0].lines) == 3  # torch, Triton and the peak: no graph, no call line
    graphed = [dict(r, graph=True, triton_call_flop_per_s=r["triton_flop_per_s"] / 2) for r in rows]
    fig3 = gf.rate_vs_size_figure(graphed, title="t", peak_flop_per_s=2e12)
    call = [ln for ln in fig3.axes[0].lines if ln.get_label() == "Triton, one call per interval"]
    assert len(call) == 1 and list(call[0].get_ydata()) == [r["triton_flop_per_s"] / 2e12 for r in rows]
    cfg = [{"name": "a", "flop_per_s": 5e14}, {"name": "b", "flop_per_s": None}]
    fig2 = gf.config_figure(cfg, torch_flop_per_s=6e14, title="t")
    assert len(fig2.axes[0].patches) == 2
    plt.close("all")
    with pytest.raises(ValueError):
        gf.rate_vs_size_figure([], title="t")
    with pytest.raises(ValueError):
        gf.config_figure([], torch_flop_per_s=1.0, title="t")
