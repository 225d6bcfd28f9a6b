"""Tests of helpers.widgets.scheduling_kv: the explorer builds, redraws and reports the simulator."""

import matplotlib

matplotlib.use("Agg")

import ipywidgets as widgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers.widgets import scheduling_kv as w  # noqa: E402


def test_explorer_builds_and_redraws():
    box = w.serving_explorer(rate_per_s=5.0, output_mean=40.0, max_batch=8, token_budget=256)
    assert isinstance(box, widgets.VBox)
    rate, out, batch, budget = list(box.children[1].children)
    assert batch.value == 8
    batch.value = 16
    plt.close("all")


def test_continuous_batching_wins_and_the_title_says_so():
    m = w.serve_both(20.0, 100.0, 16, 512, n_requests=60)
    assert m["continuous"]["output_tokens_per_s"] >= m["static"]["output_tokens_per_s"]
    assert m["continuous"]["ttft_s"]["p50"] < m["static"]["ttft_s"]["p50"]
    fig = w.draw_serving(20.0, 100.0, 16, 512)
    assert "continuous / static throughput" in fig._suptitle.get_text()
    plt.close(fig)


def test_bad_input_raises():
    with pytest.raises(ValueError):
        w.serve_both(-1.0, 100.0, 16, 512)
