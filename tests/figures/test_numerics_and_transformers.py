"""Tests of helpers.figures.numerics_and_transformers: deterministic SVG, numbers from models."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import matplotlib.pyplot as plt
import numpy as np
import pytest

from helpers import specs
from helpers.figures import numerics_and_transformers as fig
from helpers.models import numerics as nm
from helpers.models import transformer as tm

SVG_FIGURES = [fig.opening_animation, fig.structure_diagram, fig.bit_layouts]


@pytest.mark.parametrize("make", SVG_FIGURES, ids=lambda f: f.__name__)
def test_svg_is_deterministic_well_formed_and_uniquely_labelled(make):
    a, b = make(), make()
    assert a.svg == b.svg  # nbval compares the SVG source
    ET.fromstring(a.svg)  # well-formed XML
    uid = re.search(r'data-figure="([a-z0-9-]+)"', a.svg).group(1)
    assert uid.startswith("num-")
    ids = re.findall(r' id="([^"]+)"', a.svg)
    assert all(i.startswith(uid) for i in ids) and len(ids) == len(set(ids))


def test_animation_key_times_are_valid():
    """SMIL rejects key times that decrease or leave [0, 1] (the browser logs an error)."""
    for key_times in re.findall(r'keyTimes="([^"]+)"', fig.opening_animation().svg):
        values = [float(v) for v in key_times.split(";")]
        assert values[0] == 0 and values[-1] == 1
        assert all(b >= a for a, b in zip(values, values[1:])), key_times


def test_uids_differ_between_figures():
    uids = {re.search(r'data-figure="([^"]+)"', m().svg).group(1) for m in SVG_FIGURES}
    assert len(uids) == len(SVG_FIGURES)


def test_only_the_opening_figure_is_animated():
    assert fig.opening_animation().animated and "<animateMotion" in fig.opening_animation().svg
    assert not fig.structure_diagram().animated and not fig.bit_layouts().animated


def test_structure_diagram_shows_the_model_numbers():
    svg = fig.structure_diagram(tm.LLAMA3_8B).svg
    assert "8.03 B parameters" in svg
    assert "4,096 × 1,024" in svg  # W_k and W_v under GQA
    kib = tm.kv_cache_bytes_per_token(tm.LLAMA3_8B, 2.0) / 1024
    assert f"{kib:.0f} KiB / token" in svg
    assert "4,096 × 1,024" not in fig.structure_diagram(tm.LLAMA2_7B).svg  # no GQA there


def test_bit_layouts_draw_one_square_per_bit():
    svg = fig.bit_layouts(("fp8_e4m3",)).svg
    body = svg.split("</text>", 4)[-1]  # after the legend
    squares = re.findall(r'<rect x="[\d.]+" y="40"', body)
    assert len(squares) == nm.number_format("fp8_e4m3").bits
    assert "max 448" in svg


def test_plots_draw_what_the_models_say():
    f = fig.intensity_figure(tm.LLAMA3_8B, gpus=(specs.H100_SXM,), decode_batches=(1,),
                             prefill_tokens=(2048,))
    ax = f.axes[0]
    ridge = specs.H100_SXM.ridge_intensity_flop_per_byte("bf16")
    assert any(np.allclose(line.get_ydata(), ridge) for line in ax.get_lines())
    plt.close(f)
    f = fig.spacing_figure(("fp8_e4m3",))
    line = f.axes[0].get_lines()[0]
    assert line.get_xdata()[-1] == 448.0 and line.get_ydata()[-1] == 0.125
    plt.close(f)
    f = fig.memory_figure(tm.LLAMA3_8B, batch=1, context=1024)
    widths = sorted(p.get_width() for p in f.axes[0].patches)
    assert widths[-1] == pytest.approx(tm.training_state_bytes(tm.parameter_count(tm.LLAMA3_8B)) / 1e9)
    plt.close(f)
    f = fig.summation_figure(np.array([1, 10]), {"bf16": np.array([0.0, 0.1])})
    assert len(f.axes[0].get_lines()) == 1
    plt.close(f)
