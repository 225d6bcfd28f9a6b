"""Tests of helpers.widgets.fusion_and_attention: the explorer builds, redraws, starts right."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from helpers.widgets import fusion_and_attention as fw  # noqa: E402


def test_traffic_explorer_builds_redraws_and_starts_at_the_page_values():
    box = fw.traffic_explorer(seq_len=4096, head_dim=64, sram_kib=100)
    n, d, m = box.children[1].children
    assert (n.value, d.value, m.value) == (4096, 64, 100)
    n.value = 65536
    d.value = 128
    m.value = 16
    with pytest.raises(ValueError):
        fw.traffic_explorer(head_dim=48)
