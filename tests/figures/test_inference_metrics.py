import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers.figures import inference_metrics as fig  # noqa: E402
from helpers.models import inference as inf  # noqa: E402


def test_opening_animation_marks_ttft_itl_and_every_token():
    f = fig.opening_animation(n_tokens=5)
    assert f.animated and f.svg == fig.opening_animation(n_tokens=5).svg
    assert "TTFT = t1 - arrival" in f.svg and ">ITL<" in f.svg
    assert f.svg.count(">t5<") == 1 and ">t6<" not in f.svg and f.svg.count(">step ") == 4
    for bad in (1, 11):
        with pytest.raises(ValueError):
            fig.opening_animation(n_tokens=bad)


def test_structure_diagram_names_the_phases_and_the_memory():
    svg = fig.structure_diagram().svg
    for word in ("prefill", "decode", "scheduler", "weights", "KV cache", "reserve"):
        assert word in svg


def test_memory_bar_adds_up_to_the_gpu():
    hbm, w, r, q, n = 80e9, 16e9, 4e9, 131072, 1280
    f = fig.memory_budget_figure(hbm, w, r, q, n)
    fits = inf.max_concurrent_requests(hbm, w, q, n, r)
    assert f"{fits} requests of {n} tokens fit" == f.axes[0].get_title()
    widths = [p.get_width() for p in f.axes[0].patches]
    assert sum(widths) == pytest.approx(hbm / 1e9)  # weights + reserve + KV + free = the GPU
    f2 = fig.memory_budget_figure(hbm, w, r, q, n, batch=3, title="x")
    assert any("room for" in t.get_text() for t in f2.axes[0].get_legend().get_texts())
    assert plt.get_fignums() == []


def test_token_timeline_states_the_metrics():
    f = fig.token_timeline_figure(0.0, [0.05, 0.06, 0.08])
    labels = [ln.get_label() for ln in f.axes[0].lines]
    assert any(lab.startswith("TTFT 50 ms") for lab in labels)
    assert any(lab.startswith("TPOT 15 ms") for lab in labels)
    with pytest.raises(ValueError):
        fig.token_timeline_figure(1.0, [0.5])
