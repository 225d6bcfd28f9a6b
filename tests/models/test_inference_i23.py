"""Issue 23: end-to-end latency under NIM's and Databricks's definitions, side by side."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.models import inference as inf

FAST = settings(max_examples=80, deadline=None)

# NVIDIA NIM LLM Benchmarking Guide 1.0.0, "Performance": Llama-3.3-70b-Instruct (NIM 1.8.0),
# 2 x H100 80G, fp8 TP2, concurrency 1: (input, output tokens, TTFT ms, ITL ms, throughput
# tokens/s), as printed.
NIM_ROWS = [(5000, 500, 406.77, 18.58, 51.67), (500, 2000, 47.77, 18.91, 52.85)]


def _implied_throughput_range(n, ttft_ms, itl_ms, definition):
    # the table rounds TTFT and ITL to 0.01 ms: the throughput they imply at concurrency 1
    # (one request at a time: n tokens per end-to-end latency) lies in this interval
    lo = inf.e2e_latency_by_definition_s((ttft_ms - 0.005) * 1e-3, (itl_ms - 0.005) * 1e-3, n,
                                         definition=definition)
    hi = inf.e2e_latency_by_definition_s((ttft_ms + 0.005) * 1e-3, (itl_ms + 0.005) * 1e-3, n,
                                         definition=definition)
    return n / hi, n / lo


@pytest.mark.parametrize("row", NIM_ROWS)
def test_nims_printed_throughput_follows_its_own_definition(row):
    # NIM's definition (TTFT + (n - 1) ITL) reproduces the printed throughput to its rounding;
    # Databricks's (TTFT + n TPOT), fed the same two numbers, does not: one ITL too many
    _, n, ttft_ms, itl_ms, printed = row
    lo, hi = _implied_throughput_range(n, ttft_ms, itl_ms, "nim")
    assert lo - 0.005 <= printed <= hi + 0.005
    lo_d, hi_d = _implied_throughput_range(n, ttft_ms, itl_ms, "databricks")
    assert hi_d + 0.005 < printed


def test_databricks_formula_as_printed():
    # Databricks: "Latency = TTFT + (TPOT) * (the number of tokens to be generated)"; its page
    # prints no worked end-to-end number, so the formula itself is the check, with its
    # example TPOT of 100 ms/token (10 tokens/s) and 100 tokens after a 0.5 s TTFT
    assert inf.e2e_latency_by_definition_s(0.5, 0.1, 100, definition="databricks") == \
        pytest.approx(0.5 + 0.1 * 100)


@FAST
@given(st.floats(0, 10), st.floats(0, 1), st.integers(1, 10_000))
def test_the_two_differ_by_one_per_token_time(ttft, tpot, n):
    nim = inf.e2e_latency_by_definition_s(ttft, tpot, n, definition="nim")
    dbx = inf.e2e_latency_by_definition_s(ttft, tpot, n, definition="databricks")
    assert dbx - nim == pytest.approx(tpot, abs=1e-9)
    assert nim == inf.e2e_latency_s(ttft, tpot, n)  # the book's own definition is NIM's
    if n == 1:
        assert nim == ttft


def test_oracle_token_timestamps():
    # stream n tokens: the first at TTFT, the rest ITL apart; request_latencies reads the
    # trace. NIM's E is the last token's time; Databricks's is one step later (it counts the
    # first token's decode step in TPOT as well as in TTFT)
    a, ttft, itl, n = 3.0, 0.25, 0.02, 40
    times = [a + ttft + k * itl for k in range(n)]
    lat = inf.request_latencies(a, times)
    assert lat["e2e_s"] == pytest.approx(inf.e2e_latency_by_definition_s(
        lat["ttft_s"], lat["tpot_s"], n, definition="nim"), rel=1e-12)
    assert a + ttft + n * itl - a == pytest.approx(inf.e2e_latency_by_definition_s(
        ttft, itl, n, definition="databricks"), rel=1e-12)


def test_bad_input():
    with pytest.raises(ValueError, match="definition"):
        inf.e2e_latency_by_definition_s(0.1, 0.01, 10, definition="vllm")
    with pytest.raises(ValueError, match="n_output_tokens"):
        inf.e2e_latency_by_definition_s(0.1, 0.01, 0, definition="databricks")
    with pytest.raises(ValueError, match="tpot_s"):
        inf.e2e_latency_by_definition_s(0.1, -0.01, 5, definition="databricks")
