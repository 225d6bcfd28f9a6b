"""Tests of helpers.figures.lab_launch_overhead: valid, deterministic, computed figures."""

from __future__ import annotations

import xml.dom.minidom

import matplotlib.pyplot as plt
import pytest

from helpers import units
from helpers.figures import lab_launch_overhead as fl
from helpers.models import launch



def _result(with_graph: bool) -> dict:
    """A synthetic lab result that follows the model exactly."""
    ns = [1, 10, 100]
    chain = []
    for n in ns:
        e = {"n": n, "eager": {"median_s": 2e-6 + 5e-6 * n},
             "batched": {"median_s": 3e-6 + 1e-8 * n}}
        if with_graph:
            e["graph"] = {"median_s": 4e-6 + 1.5e-6 * n}
        chain.append(e)
    sizes = [{"numel": k, "bytes_per_kernel": 8.0 * k,
              "eager": {"median_s": 10 * max(5e-6, 1.5e-6 + 8.0 * k / 4e12)},
              **({"graph": {"median_s": 10 * (1.5e-6 + 8.0 * k / 4e12)}} if with_graph else {})}
             for k in (1, 1 << 10, 1 << 20, 1 << 24)]
    fits = {"eager_fixed_s": 2e-6, "eager_per_kernel_s": 5e-6, "host_launch_s": 5e-6}
    if with_graph:
        fits.update(graph_launch_s=4e-6, kernel_in_graph_s=1.5e-6)
    return {"settings": {"sweep_n": 10},
            "measurements": {"chain": chain, "size_sweep": sizes, "fits": fits,
                             "host_enqueue": {"launch_s": 5e-6}}}


def test_opening_animation_is_valid_deterministic_and_computed():
    fig = fl.opening_animation()
    xml.dom.minidom.parseString(fig.svg)
    assert fig.animated and "<animate" in fig.svg
    assert fig.svg == fl.opening_animation().svg
    t_graph = launch.graph_time_s(4, 3e-6, 1e-6)
    fig = fl.opening_animation(launch_s=4e-6, kernel_s=1e-6, graph_launch_s=3e-6,
                               kernel_in_graph_s=1e-6, n_kernels=4)
    assert f"done after {units.fmt_time(t_graph)}" in fig.svg
    # eager: 4 launches of 4 µs, the last kernel ends one kernel after the last launch
    assert f"done after {units.fmt_time(4 * 4e-6 + 1e-6)}" in fig.svg


def test_structure_diagram_is_valid_and_static():
    fig = fl.structure_diagram()
    xml.dom.minidom.parseString(fig.svg)
    assert not fig.animated
    assert "replay()" in fig.svg and "perf_counter" in fig.svg


def test_plots_draw_every_series():
    gpu, cpu = _result(True), _result(False)
    fig = fl.chain_figure({"H200": gpu, "cpu": cpu})
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "CUDA graph (H200)" in labels and "CUDA graph (cpu)" not in labels
    assert len(labels) == 5
    fig = fl.size_figure({"H200": gpu})
    ys = fig.axes[0].lines[1].get_ydata()  # graph per-kernel time, µs
    assert ys[0] == pytest.approx(1.5 + 8.0 / 4e12 * 1e6)


def test_bad_input_raises_value_error():
    with pytest.raises(ValueError):
        fl.opening_animation(n_kernels=0)
    with pytest.raises(ValueError):
        fl.chain_figure({})
    with pytest.raises(ValueError):
        fl.size_figure({})
    with pytest.raises(ValueError):
        fl.opening_animation(launch_s=-1e-6)
