"""Tests of helpers.figures.gpu_architecture: SVG whose numbers
come from the specs; plots that draw what the models compute.
(Validity, determinism and theme: tests/figures/test_svg_common.py.)"""

import xml.etree.ElementTree as ET

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from helpers import specs, units  # noqa: E402
from helpers.figures import gpu_architecture as ga  # noqa: E402
from helpers.models import gpu_peaks  # noqa: E402

SVG_NS = "{http://www.w3.org/2000/svg}"


def _texts(fig):
    return " | ".join(el.text or "" for el in ET.fromstring(fig.svg).iter(f"{SVG_NS}text"))


def test_animation_is_animated_and_diagram_is_not():
    anim, diag = ga.opening_animation(), ga.structure_diagram()
    assert anim.animated and "<animate" in anim.svg and 'repeatCount="indefinite"' in anim.svg
    assert not diag.animated and "<animate" not in diag.svg
    assert ET.fromstring(anim.svg).get("data-figure") != ET.fromstring(diag.svg).get("data-figure")


@pytest.mark.parametrize("gpu", [specs.A100_SXM_80GB, specs.H200_SXM], ids=lambda g: g.name)
def test_numbers_drawn_come_from_the_spec(gpu):
    text = _texts(ga.opening_animation(gpu))
    flop_clk = 2 * gpu.tensor_fma_per_clock_per_sm["bf16"]
    b_clk = gpu_peaks.bytes_per_clock_per_sm(gpu.hbm_bytes_per_s, gpu.sm_count,
                                             gpu.tensor_boost_clock_hz)
    assert f"one SM of {gpu.sm_count}: {flop_clk:.0f} FLOP per clock" in text
    assert f"{b_clk:.3g} bytes per clock" in text
    diagram = ga.structure_diagram(gpu)
    assert f"GPU: {gpu.sm_count} SMs" in _texts(diagram)
    # One small square per SM, plus the boxes of the rest of the diagram.
    squares = [r for r in ET.fromstring(diagram.svg).iter(f"{SVG_NS}rect") if r.get("rx") == "2"]
    assert len(squares) == gpu.sm_count
    assert f"{gpu.fp32_lanes_per_sm // 4} FP32" in _texts(diagram)
    assert units.fmt_bytes(gpu.l2_bytes, binary=True) in _texts(diagram)


def test_unpublished_architecture_is_refused_clearly():
    with pytest.raises(ValueError, match="does not publish"):
        ga.opening_animation(specs.B200_HGX)
    with pytest.raises(ValueError, match="does not publish"):
        ga.structure_diagram(specs.B200_HGX)


def test_hierarchy_levels_sum_per_sm_capacities():
    h = specs.H200_SXM
    levels = {lv["name"]: lv for lv in ga.hierarchy_levels(h)}
    assert levels["registers"]["total"] == h.sm_count * h.register_file_bytes_per_sm
    assert levels["HBM"]["bytes_per_s"] == h.hbm_bytes_per_s
    assert levels["L2 cache"]["bytes_per_s"] is None
    caps = [lv["total"] for lv in ga.hierarchy_levels(h)]
    assert caps == sorted(caps)  # each level down is larger


def test_derived_vs_datasheet_points_sit_on_the_diagonal():
    fig = ga.derived_vs_datasheet_figure([specs.A100_SXM_80GB, specs.H100_SXM, specs.B200_HGX])
    ax = fig.axes[0]
    lines = [ln for ln in ax.get_lines() if ln.get_linestyle() == "None"]
    assert len(lines) == 2  # the B200 has no derivable point and is left out
    n_points = sum(len(ln.get_xdata()) for ln in lines)
    assert n_points == len(specs.A100_SXM_80GB.dense_flop_per_s) + len(specs.H100_SXM.dense_flop_per_s)
    for ln in lines:
        x, y = np.asarray(ln.get_xdata()), np.asarray(ln.get_ydata())
        assert np.all(np.abs(y / x - 1) < 0.02)


def test_memory_hierarchy_figure_draws_one_bar_per_level():
    fig = ga.memory_hierarchy_figure(specs.H200_SXM)
    ax = fig.axes[0]
    assert len(ax.patches) == 4
    assert ax.patches[-1].get_width() == specs.H200_SXM.hbm_bytes


def test_spec_table_is_generated_from_the_specs():
    table = ga.spec_table()
    assert table.header[1:] == tuple(g.name for g in specs.GPUS)
    rows = {r[0]: r[1:] for r in table.rows}
    assert rows["SMs"] == ("108", "132", "132", "not published")
    assert rows["compute capability"] == ("8.0", "9.0", "9.0", "10.0")
    assert rows["dense bf16 peak, derived"][-1] == "cannot derive"
    assert rows["dense bf16 peak, datasheet"] == tuple(
        units.fmt_rate(g.peak_flop_per_s("bf16"), "FLOP/s") for g in specs.GPUS)
    html_text = table._repr_html_()
    assert html_text.count("<tr>") == len(table.rows) + 1
    assert repr(table).splitlines()[0].startswith(" ")
