"""Tests of helpers.widgets.inference_metrics: the explorer builds, redraws and states the model."""

import matplotlib

matplotlib.use("Agg")

import ipywidgets as widgets  # noqa: E402
import pytest  # noqa: E402

from helpers import specs  # noqa: E402
from helpers.models import inference as inf  # noqa: E402
from helpers.models import transformer as tf  # noqa: E402
from helpers.widgets import inference_metrics as w  # noqa: E402


def test_explorer_builds_and_redraws():
    box = w.serving_explorer(batch=8)
    assert isinstance(box, widgets.VBox)
    controls = list(box.children[1].children)
    assert controls[4].value == 8
    controls[0].value = "Llama-3-70B"  # does not fit: a different figure, no error
    controls[1].value = controls[1].options[-1]
    controls[4].value = 1000


def test_numbers_are_the_models():
    n = w.serving_numbers("Llama-3-8B", "H200 SXM", 1024, 256, 64, reserve_gb=4.0)
    cfg, g = tf.LLAMA3_8B, specs.H200_SXM
    assert n["max_batch"] == inf.max_concurrent_requests(
        g.hbm_bytes, tf.weight_bytes(tf.parameter_count(cfg), 2),
        tf.kv_cache_bytes_per_token(cfg, 2), 1280, 4e9)
    assert n["fits"] and n["tokens_per_s"] == pytest.approx(64 / n["tpot_s"])
    assert n["requests_per_s"] == pytest.approx(64 / inf.e2e_latency_s(n["ttft_s"], n["tpot_s"], 256))
    title = w.draw_serving("Llama-3-8B", "H200 SXM", 1024, 256, 64, 4.0).axes[0].get_title()
    assert title.startswith("batch 64 fits") and f"TPOT >= {n['tpot_s'] * 1e3:.3g} ms" in title
    big = w.draw_serving("Llama-3-8B", "H200 SXM", 1024, 256, 1000, 4.0).axes[0].get_title()
    assert "does NOT fit" in big


def test_a_model_too_large_for_the_gpu_says_so():
    assert w.serving_numbers("Llama-3-70B", "H100 SXM", 1024, 256, 1)["max_batch"] == 0
    title = w.draw_serving("Llama-3-70B", "H100 SXM", 1024, 256, 1, 4.0).axes[0].get_title()
    assert "does not fit on one H100 SXM" in title


def test_bad_input_raises():
    with pytest.raises(ValueError):
        w.serving_numbers("GPT-5", "H200 SXM", 1024, 256, 1)
