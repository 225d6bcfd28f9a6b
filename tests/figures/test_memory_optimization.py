"""Tests of helpers.figures.memory_optimization: deterministic SVG, numbers from the models."""

import re
import xml.etree.ElementTree as ET

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from helpers import specs, units  # noqa: E402
from helpers.figures import memory_optimization as fig  # noqa: E402
from helpers.models import memory_access as ma  # noqa: E402

SVG_FIGURES = [fig.opening_animation, fig.structure_diagram]


@pytest.mark.parametrize("make", SVG_FIGURES, ids=lambda f: f.__name__)
def test_svg_is_deterministic_well_formed_and_uniquely_labelled(make):
    a, b = make(), make()
    assert a.svg == b.svg
    ET.fromstring(a.svg)
    uid = re.search(r'data-figure="([a-z0-9-]+)"', a.svg).group(1)
    assert uid.startswith("mem-")
    ids = re.findall(r' id="([^"]+)"', a.svg)
    assert all(i.startswith(uid) for i in ids) and len(ids) == len(set(ids))


def test_animation_key_times_are_valid():
    for key_times in re.findall(r'keyTimes="([^"]+)"', fig.opening_animation().svg):
        values = [float(v) for v in key_times.split(";")]
        assert values[0] == 0 and values[-1] == 1
        assert all(b >= a for a, b in zip(values, values[1:])), key_times


@pytest.mark.parametrize("stride", [2, 8, 32])
def test_animation_lights_the_sectors_the_model_counts(stride):
    svg = fig.opening_animation(stride_elements=stride).svg
    lit = svg.count('attributeName="opacity" values="0.08;0.08;0.7;0.7;0.08"')
    assert lit == ma.sectors_per_request(stride_elements=1) + ma.sectors_per_request(
        stride_elements=stride)
    eta = ma.strided_efficiency(stride_elements=stride)
    assert f"{100 * eta:.3g} % efficient" in svg
    assert svg.count("<animateMotion") == 2 * ma.WARP_SIZE


def test_only_the_opening_figure_is_animated():
    assert fig.opening_animation().animated
    assert not fig.structure_diagram().animated


def test_structure_diagram_shows_the_gpu_numbers():
    svg = fig.structure_diagram(specs.H200_SXM).svg
    assert units.fmt_bytes(specs.H200_SXM.hbm_bytes) in svg
    assert units.fmt_rate(specs.H200_SXM.hbm_bytes_per_s, "B/s") in svg
    assert f"{ma.N_BANKS} banks" in svg and f"{ma.SECTOR_BYTES}-B sectors" in svg


def test_plots_draw_what_the_models_say():
    f = fig.sectors_figure(strides=[1, 2, 8], bytes_per_element=(4,))
    line = f.axes[0].get_lines()[0]
    assert list(line.get_ydata()) == [4, 8, 32]
    assert list(f.axes[1].get_lines()[0].get_ydata()) == [100.0, 50.0, 12.5]
    plt.close(f)
    f = fig.request_figure(1, 4, base_bytes=4)
    assert "5 sectors" in f.axes[0].get_title()
    plt.close(f)
    f = fig.bank_figure([128 * t for t in range(32)])
    assert max(p.get_height() for p in f.axes[0].patches) == 32
    plt.close(f)
    f = fig.cpu_stride_figure([1, 16, 64], [1.0, 15.0, 40.0], bytes_per_element=4)
    model = f.axes[0].get_lines()[0]
    assert model.get_ydata()[0] == 1.0 and max(model.get_ydata()) == 16.0
    assert np.allclose(f.axes[0].get_lines()[1].get_ydata(), [1.0, 15.0, 40.0])
    plt.close(f)


def test_cpu_figure_rejects_mismatched_data():
    with pytest.raises(ValueError, match="equal-length"):
        fig.cpu_stride_figure([1, 2], [1.0], bytes_per_element=4)
