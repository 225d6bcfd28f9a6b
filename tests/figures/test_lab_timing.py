import pytest

from helpers.figures import lab_timing as fig


def test_methods_figure_draws_one_bar_per_measured_method():
    times = {"matmul": {"host_no_sync_s": 2e-5, "host_sync_s": 1.6e-3, "events_s": 1.6e-3,
                        "bench_s": 1.6e-3, "backlogged_s": 1.5e-3},
             "tiny": {"host_no_sync_s": 7e-6, "host_sync_s": 1.3e-5, "events_s": None,
                      "bench_s": 9e-6, "backlogged_s": None}}
    f = fig.methods_figure(times, {"matmul": 1.1e-3}, title="t")
    ax = f.axes[0]
    assert len(ax.patches) == 8  # five + three bars; None skipped
    assert ax.get_yscale() == "log"
    with pytest.raises(ValueError):
        fig.methods_figure({}, title="t")
    with pytest.raises(ValueError):
        fig.methods_figure({"x": {"bench_s": 0.0}}, title="t")


def test_warmup_figure_normalizes_each_series():
    f = fig.warmup_figure({"a": [2.0, 1.0, 1.0, 1.0]}, title="w")
    y = f.axes[0].lines[0].get_ydata()
    assert y[0] == pytest.approx(2.0) and y[-1] == pytest.approx(1.0)
    with pytest.raises(ValueError):
        fig.warmup_figure({"a": [1.0]}, title="w")
