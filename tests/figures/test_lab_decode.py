import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers.figures import lab_decode as fig  # noqa: E402


def test_opening_animation_draws_one_kv_cache_per_sequence():
    f = fig.opening_animation(batch=3)
    assert f.animated and f.svg == fig.opening_animation(batch=3).svg  # deterministic
    assert f.svg.count("KV cache, sequence") == 3 and "weights Q_w" in f.svg
    for bad in (0, 7, 2.5):
        with pytest.raises(ValueError):
            fig.opening_animation(batch=bad)


def test_structure_diagram_names_the_checks_and_the_model():
    svg = fig.structure_diagram().svg
    for word in ("KV nbytes = model", "batched = one by one", "CUDA graph", "B M / (Q_w + B Q_kv)"):
        assert word in svg


def test_rate_figure_plots_model_and_measurements_as_tokens_per_second():
    rows = [{"batch": b, "bound_s": 1e-3, "copy_bound_s": 2e-3, "roofline_s": None,
             "eager_s": 4e-3, "graph_s": 2e-3} for b in (1, 4, 16)]
    f = fig.rate_figure({"a": rows}, title="t")
    ax = f.axes[0]
    labels = [ln.get_label() for ln in ax.lines]
    assert "measured, CUDA graph" in labels and "with the compute roof" not in labels
    model = ax.lines[labels.index("model: B M / (Q_w + B Q_kv)")]
    assert list(model.get_ydata()) == pytest.approx([1e3, 4e3, 16e3])
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    with pytest.raises(ValueError):
        fig.rate_figure({}, title="t")
    assert plt.get_fignums() == []
