"""Request metrics (helpers.models.inference): identities, an independent oracle, bad input."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from helpers.models import inference as inf
from helpers.models import stats


gaps = st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=40)


@given(a=st.floats(0, 100), wait=st.floats(0, 10), g=gaps)
@settings(max_examples=60, deadline=None)
def test_identities_tie_the_four_metrics_together(a, wait, g):
    times = a + wait + np.concatenate([[0.0], np.cumsum(g)])
    m = inf.request_latencies(a, times)
    n = times.size
    assert m["ttft_s"] == pytest.approx(wait, abs=1e-9)
    assert len(m["itl_s"]) == n - 1
    # E2E = TTFT + (n-1) TPOT, and TPOT is the mean ITL
    assert m["e2e_s"] == pytest.approx(inf.e2e_latency_s(m["ttft_s"], m["tpot_s"], n), abs=1e-9)
    assert m["tpot_s"] == pytest.approx(np.mean(m["itl_s"]), abs=1e-9)


def test_one_token_has_a_ttft_and_no_tpot():
    m = inf.request_latencies(1.0, [1.25])
    assert (m["ttft_s"], m["tpot_s"], m["itl_s"], m["e2e_s"]) == (0.25, None, [], 0.25)
    assert inf.e2e_latency_s(0.25, 123.0, 1) == 0.25  # TPOT does not count for one token


def test_trace_metrics_against_an_event_by_event_oracle():
    """Oracle: a token-by-token replay that keeps its own counters, and numpy's percentile."""
    rng = np.random.default_rng(3)
    reqs = []
    for i in range(50):
        a = float(i) * 0.1
        n = int(rng.integers(1, 20))
        times = a + rng.uniform(0.05, 0.3) + np.cumsum(rng.uniform(0.01, 0.05, n))
        reqs.append({"arrival_s": a, "token_times_s": times.tolist()})
    m = inf.trace_metrics(reqs)
    ttft, tpot, itl, e2e, count = [], [], [], [], 0
    for r in reqs:
        t = r["token_times_s"]
        ttft.append(t[0] - r["arrival_s"])
        e2e.append(t[-1] - r["arrival_s"])
        prev = None
        for x in t:
            count += 1
            if prev is not None:
                itl.append(x - prev)
            prev = x
        if len(t) > 1:
            tpot.append((t[-1] - t[0]) / (len(t) - 1))
    end = max(r["token_times_s"][-1] for r in reqs)
    assert m["n_tokens"] == count
    assert m["output_tokens_per_s"] == pytest.approx(count / end)
    for key, xs in [("ttft_s", ttft), ("tpot_s", tpot), ("itl_s", itl), ("e2e_s", e2e)]:
        assert m[key]["mean"] == pytest.approx(np.mean(xs))
        for q in inf.PERCENTILES:
            assert m[key][f"p{q:g}"] == pytest.approx(np.percentile(xs, q))


def test_window_counts_only_tokens_inside_it():
    m = inf.trace_metrics([(0.0, [1.0, 2.0, 3.0, 4.0])], window_s=(1.5, 3.5))
    assert m["n_tokens"] == 2 and m["output_tokens_per_s"] == pytest.approx(1.0)
    assert m["requests_per_s"] == 0.0  # it finished after the window


def test_percentiles_use_the_books_definition():
    m = inf.trace_metrics([(0.0, [x]) for x in [1.0, 2.0, 3.0, 4.0]], percentiles=(50,))
    assert m["ttft_s"]["p50"] == stats.percentile([1, 2, 3, 4], 50) == 2.5
    assert m["tpot_s"] is None and m["itl_s"] is None


@pytest.mark.parametrize("args, match", [
    ((0.0, []), "empty"),
    ((1.0, [0.5]), "before the arrival"),
    ((0.0, [1.0, 0.5]), "non-decreasing"),
    ((float("nan"), [1.0]), "arrival_s"),
    ((0.0, [1.0, float("inf")]), "finite"),
])
def test_bad_requests_are_named(args, match):
    with pytest.raises(ValueError, match=match):
        inf.request_latencies(*args)


def test_bad_traces_and_formula_inputs():
    with pytest.raises(ValueError, match="no completed request"):
        inf.trace_metrics([])
    with pytest.raises(ValueError, match="window_s"):
        inf.trace_metrics([(0.0, [1.0])], window_s=(2.0, 1.0))
    with pytest.raises(ValueError, match="spans no time"):
        inf.trace_metrics([(1.0, [1.0])])
    with pytest.raises(ValueError, match="n_output_tokens"):
        inf.e2e_latency_s(0.1, 0.01, 0)
    with pytest.raises(ValueError, match="tpot_s"):
        inf.e2e_latency_s(0.1, -0.01, 3)
