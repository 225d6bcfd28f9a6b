"""Tests of helpers.figures.scheduling_kv."""

from helpers.figures import scheduling_kv as f
from helpers.sim.serving import StepModel, simulate


def test_opening_animation_counts_the_simulated_iterations():
    svg = f.opening_animation()._repr_html_()
    unit = StepModel(1.0, 0.0, 0.0)
    for k in ("static", "continuous"):
        n = round(simulate(f.opening_trace(), k, unit, num_blocks=64, block_size=4,
                           max_batch=3)["makespan_s"])
        assert f"{n} iterations" in svg
    assert "idle" in svg


def test_structure_diagram_and_plots():
    assert "shared" in f.structure_diagram()._repr_html_()
    mem = [{"t_s": 0.0, "reserved_tokens": 16, "used_tokens": 3},
           {"t_s": 1.0, "reserved_tokens": 32, "used_tokens": 17}]
    fig = f.memory_figure(mem, title="t", contiguous=mem)
    assert len(fig.axes[0].lines) == 3
    rows = [{"scheduler": s, "quantity": q, "unit": "u", "scale": 1.0, "engine": 2.0,
             "simulator": 1.0} for s in ("static", "continuous")
            for q in ("throughput", "TTFT p50", "TPOT p50")]
    fig = f.metrics_figure(rows, title="t")
    assert len(fig.axes) == 3
