"""Tests of helpers.figures.pcie_and_interconnects: SVG figures and the plots."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from helpers.figures import pcie_and_interconnects as f  # noqa: E402


def test_opening_animation_is_animated_and_uses_its_arguments():
    fig = f.opening_animation()
    assert fig.animated and "<animate" in fig.svg and "<desc>" in fig.svg
    assert "75:1" in fig.svg and "4.8 TB/s" in fig.svg and "64 GB/s" in fig.svg
    assert fig.svg == f.opening_animation().svg
    assert "25:1" in f.opening_animation(hbm_bytes_per_s=1.6e12).svg


def test_structure_diagram_names_the_parts():
    fig = f.structure_diagram()
    assert not fig.animated
    for word in ("PCIe root complex", "PCIe switch", "NVLink", "NVMe", "NIC",
                 "GPUDirect Storage", "GPUDirect RDMA", "bounce buffer"):
        assert word in fig.svg


def test_plots_draw_and_close():
    fig = f.link_times_figure({"HBM": 4.8e12, "PCIe": 64e9}, weight_bytes=140e9)
    assert len(fig.axes[0].patches) == 2
    plt.close(fig)
    n = np.array([1e3, 1e5, 1e7])
    fig = f.copy_figure(n, 1e-7 + n / 1e10, latency_s=1e-7, bandwidth_bytes_per_s=1e10)
    assert len(fig.axes[0].lines) == 2 and "10 GB/s" in fig.axes[0].get_legend().texts[1].get_text()
    plt.close(fig)
