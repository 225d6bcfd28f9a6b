import pytest

from helpers.figures import distributed_analysis as fig
from helpers.models import distributed_analysis as da

TIMELINE = {"ranks": [{"rank": 0, "compute": [[0.0, 0.010]], "comm": [[0.006, 0.012]]},
                      {"rank": 1, "compute": [[0.0, 0.011], [0.0115, 0.012]], "comm": [[0.007, 0.013]]}],
            "slowest_rank": 1, "slowest_span_s": 0.012}


def test_animation_follows_the_bucket_model():
    # the animation's last all-reduce ends where the model says the step ends
    sched = fig._schedule(1.0, 2.0, [0.35] * 4)
    assert sched[-1][1] == pytest.approx(da.dp_step_time_s(forward_s=1.0, backward_s=2.0,
                                                           bucket_comm_s=[0.35] * 4))
    f = fig.opening_animation()
    assert f.animated and "exposed" in f.svg and f.svg == fig.opening_animation().svg
    with pytest.raises(ValueError):
        fig.opening_animation(comm_s=())


def test_structure_diagram_is_static_and_names_the_parts():
    f = fig.structure_diagram()
    assert not f.animated
    for word in ("all-reduce", "buckets", "align"):
        assert word in f.svg


def test_timeline_figure_draws_two_lanes_per_rank():
    f = fig.timeline_figure(TIMELINE, title="t")
    ax = f.axes[0]
    assert len(ax.collections) == 4  # compute and comm lanes of two ranks
    assert [t.get_text() for t in ax.get_yticklabels()][:2] == ["rank 0 compute", "rank 0 comm"]
    with pytest.raises(ValueError):
        fig.timeline_figure({"ranks": []}, title="t")


def test_step_bars_split_compute_and_exposed():
    cfgs = {"per_layer": dict(step_s=0.010, exposed_comm_s=0.001, measured_step_s=0.011,
                              measured_exposed_s=0.002)}
    f = fig.step_bars_figure(cfgs, title="s")
    widths = sorted(p.get_width() for p in f.axes[0].patches)
    assert widths == pytest.approx([1.0, 2.0, 9.0, 9.0])
    with pytest.raises(ValueError):
        fig.step_bars_figure({}, title="s")


def test_buckets_figure_plots_the_steps_over_the_compute_line():
    f = fig.buckets_figure([1, 2, 4], [0.012, 0.011, 0.0105], 0.01)
    ax = f.axes[0]
    assert list(ax.lines[0].get_ydata()) == pytest.approx([12, 11, 10.5])
    assert ax.lines[1].get_ydata()[0] == pytest.approx(10)
    with pytest.raises(ValueError):
        fig.buckets_figure([1, 2], [0.01], 0.01)
