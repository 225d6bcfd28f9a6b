"""Figures of the collectives page: the ring's states, the SVGs, the plots."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.figures import collectives as figs


@pytest.mark.parametrize("p", [2, 3, 4, 5, 8])
def test_ring_states_end_with_every_rank_holding_every_sum(p):
    sends, states = figs.ring_states(p)
    assert len(sends) == len(states) - 1 == 2 * (p - 1)
    assert (states[0] == 1).all() and (states[-1] == p).all()
    after_rs = states[p - 1]
    for r in range(p):  # after the reduce-scatter, rank r owns chunk r + 1 in full
        assert after_rs[r, (r + 1) % p] == p
    for step in sends:  # every rank sends exactly one chunk to its right neighbour per step
        assert sorted(s for s, _, _ in step) == list(range(p))
        assert all(d == (s + 1) % p for s, d, _ in step)
    assert np.all(np.diff(np.array(states), axis=0) >= 0)  # counts never fall


def test_svgs_are_deterministic_and_animated():
    a, b = figs.opening_animation(), figs.opening_animation()
    assert a.svg == b.svg and a.animated and "animateMotion" in a.svg
    d = figs.structure_diagram()
    assert not d.animated and "NVSwitch" in d.svg and "spine 1" in d.svg


def test_plots_draw():
    fig = figs.cost_figure(8, 1e-5, 1 / 450e9, marker_bytes=2**20)
    assert len(fig.axes) == 2
    rows = [{"message_bytes": 2**k, "measured_s": 1e-5 + 2**k / 1e9, "model_s": 1e-5 + 2**k / 1e9,
             "busbw_bytes_per_s": 2**k / (1e-5 + 2**k / 1e9)} for k in range(10, 20)]
    assert figs.measured_figure({"a": rows, "empty": []}, title="t").axes[0].get_title() == "t"
    assert figs.busbw_figure({"a": rows}, link_bytes_per_s=1e9, link_label="link").axes


def test_batching_figure_draws_each_series_it_has():
    rows = [{"message_bytes": 2**k, "single_s": 4e-5, "batched_s": 2.5e-5, "enqueue_s": 2.4e-5,
             "graph_s": 1e-6} for k in range(3, 10)]
    fig = figs.batching_figure({"nccl x1": rows, "empty": []}, title="floor")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert len(labels) == 4 and "CUDA graph" in labels[-1] and fig.axes[0].get_title() == "floor"
    gloo = [{k: v for k, v in r.items() if k not in ("enqueue_s", "graph_s")} | {"enqueue_s": None}
            for r in rows]
    assert len(figs.batching_figure({"gloo": gloo}).axes[0].get_legend().get_texts()) == 2
