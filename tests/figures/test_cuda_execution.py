"""Tests of helpers.figures.cuda_execution: SVG whose numbers
come from the SM limits and the occupancy model; plots that draw what the model computes.
(Validity, determinism and theme: tests/figures/test_svg_common.py.)"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from helpers import specs  # noqa: E402
from helpers.figures import cuda_execution as fc  # noqa: E402
from helpers.models import occupancy as occ  # noqa: E402

SVG_NS = "{http://www.w3.org/2000/svg}"


def _texts(fig):
    return ["".join(el.itertext()) for el in ET.fromstring(fig.svg).iter(f"{SVG_NS}text")]


def test_opening_animation_counts_waves_with_the_model():
    fig = fc.opening_animation(n_blocks=20, n_sms=4, blocks_per_sm=2)
    assert fig.animated and "<animateTransform" in fig.svg
    texts = _texts(fig)
    n_waves = occ.waves(20, 2, 4)
    assert n_waves == 3
    assert f"wave {n_waves} of {n_waves}: the tail, 4 blocks in 8 slots" in texts
    assert sum(1 for t in texts if re.fullmatch(r"b\d+", t)) == 20
    # A grid that fills its last wave has no tail.
    full = _texts(fc.opening_animation(n_blocks=16, n_sms=4, blocks_per_sm=2))
    assert "wave 2 of 2" in full and not any("tail" in t for t in full)


def test_opening_animation_key_times_are_valid():
    svg = fc.opening_animation().svg
    for attr in re.findall(r'keyTimes="([^"]+)"', svg):
        kt = [float(v) for v in attr.split(";")]
        assert kt[0] == 0 and kt[-1] == 1 and all(a <= b for a, b in zip(kt, kt[1:]))


@pytest.mark.parametrize("kw", [dict(n_blocks=0), dict(n_sms=7), dict(blocks_per_sm=2.0),
                                dict(wave_s=0.0), dict(n_blocks=41)])
def test_opening_animation_bad_input(kw):
    with pytest.raises(ValueError):
        fc.opening_animation(**kw)


@pytest.mark.parametrize("lim", [specs.SM80, specs.SM90, specs.SM100])
def test_structure_diagram_reads_the_limits(lim):
    text = " ".join(_texts(fc.structure_diagram(lim)))
    assert f"{lim.max_blocks_per_sm} block slots, {lim.max_warps_per_sm} warp slots" in text
    assert f"{lim.smem_per_sm_bytes // 1024} KiB shared memory" in text
    assert lim.name in text


def test_structure_diagram_bad_input():
    with pytest.raises(ValueError):
        fc.structure_diagram("h100")


def test_occupancy_curve_draws_the_model():
    fig = fc.occupancy_curve_figure(specs.SM90, block_sizes=(256,), mark_registers=40)
    line = fig.axes[0].lines[0]
    x, y = line.get_xdata(), line.get_ydata()
    for r in (32, 33, 40, 64, 65, 128):
        want = occ.occupancy(threads_per_block=256, registers_per_thread=r,
                             limits=specs.SM90).fraction * 100
        assert y[list(x).index(r)] == pytest.approx(want)
    # 1,024-thread blocks stop where a block no longer fits the register file.
    big = fc.occupancy_curve_figure(specs.SM90, block_sizes=(1024,)).axes[0].lines[0]
    ys = np.asarray(big.get_ydata())
    assert np.isnan(ys[64:]).all() and not np.isnan(ys[:64]).any()
    with pytest.raises(ValueError):
        fc.occupancy_curve_figure(block_sizes=())


def test_limits_figure_highlights_the_binding_limit():
    o = occ.occupancy(threads_per_block=256, registers_per_thread=40, smem_bytes=48 * 1024,
                      limits=specs.SM90)
    assert o.binding == ("shared memory",)
    fig = fc.limits_figure(o, specs.SM90)
    ax = fig.axes[0]
    widths = [p.get_width() for p in ax.patches]
    assert widths[:3] == [o.blocks_by_warps, o.blocks_by_registers, o.blocks_by_smem]
    colors = [p.get_facecolor() for p in ax.patches]
    assert colors[2] != colors[0] and colors[0] == colors[1]
    assert "occupancy 50.0%, limited by shared memory" in ax.get_title()
    with pytest.raises(ValueError):
        fc.limits_figure(None, specs.SM90)
