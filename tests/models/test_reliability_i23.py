"""Issue 23: FIT sums and cluster MTBF of mixed parts; failure-cause shares from the Llama 3
report's table 5."""

import math

import numpy as np
import pytest

from helpers.models import checkpointing as ck
from helpers.models import reliability as rel

# Dubey et al. (2024), table 5, the share column as printed (%), in the table's order
PRINTED_PCT = [30.1, 17.2, 12.9, 8.4, 7.6, 4.5, 4.1, 1.7, 1.7, 1.4, 1.4, 0.7, 0.7, 0.5, 0.5,
               0.5, 0.5, 0.5]


def test_llama3_counts_add_up_to_the_printed_419():
    assert sum(k for _, _, k in rel.LLAMA3_INTERRUPTIONS) == 419
    assert len(rel.LLAMA3_INTERRUPTIONS) == len(PRINTED_PCT) == 18


def test_llama3_shares_reproduce_the_printed_column_except_one_row():
    # 17 of the 18 printed shares are count / 419 to 0.1 %. "Faulty GPU" is printed 30.1 %,
    # but 148 / 419 is 35.3 %: the source contradicts itself. The book follows the counts,
    # which add up to the 419 of the text (30.1 % would be 126 interruptions, and the counts
    # would then add up to 397).
    shares = rel.cause_shares({c: k for c, _, k in rel.LLAMA3_INTERRUPTIONS})
    mismatched = [c for (c, _, _), pct in zip(rel.LLAMA3_INTERRUPTIONS, PRINTED_PCT)
                  if round(100 * shares[c], 1) != pct]
    assert mismatched == ["Faulty GPU"]
    assert round(100 * shares["Faulty GPU"], 1) == 35.3
    assert round(0.301 * 419) == 126


def test_llama3_gpu_category_share():
    # Section 3.3.4 prints "58.7%" for GPU issues: the sum of the printed GPU rows' shares
    # (30.1 + 17.2 + 4.5 + 4.1 + 1.4 + 1.4), inheriting the 30.1. From the counts: 268 / 419.
    gpu_rows = [pct for (_, cat, _), pct in zip(rel.LLAMA3_INTERRUPTIONS, PRINTED_PCT)
                if cat == "GPU"]
    assert round(sum(gpu_rows), 1) == 58.7
    by_cat = rel.category_counts(rel.LLAMA3_INTERRUPTIONS)
    assert by_cat["GPU"] == 268
    assert round(100 * rel.cause_shares(by_cat)["GPU"], 1) == 64.0
    assert sum(by_cat.values()) == 419


def test_llama3_cluster_mtbf_is_about_three_hours():
    # 419 unexpected interruptions in 54 days: one every ~3 hours (the report's reading)
    fit_gpu = rel.observed_fit(419, rel.LLAMA3_GPUS, rel.LLAMA3_SNAPSHOT_S)
    mtbf = rel.system_mtbf_s({"gpu": fit_gpu}, {"gpu": rel.LLAMA3_GPUS})
    assert round(mtbf / 3600, 1) == 3.1
    # the one-kind case is checkpointing.cluster_mtbf_s of the per-unit MTBF
    per_unit = ck.per_unit_mtbf_s(rel.LLAMA3_SNAPSHOT_S, 419, rel.LLAMA3_GPUS)
    assert mtbf == pytest.approx(ck.cluster_mtbf_s(per_unit, rel.LLAMA3_GPUS), rel=1e-12)


def test_fit_definition():
    # JESD85: 1 FIT = one failure per 1e9 device-hours, an MTBF of 1e9 hours (114,155 years)
    assert rel.system_mtbf_s({"x": 1.0}, {"x": 1}) / 3600 == 1e9
    assert round(rel.system_mtbf_s({"x": 1.0}, {"x": 1}) / (3600 * 24 * 365)) == 114155
    assert rel.rate_to_fit(rel.fit_to_rate_per_s(1234.5)) == pytest.approx(1234.5)


def test_mixed_parts_sum_and_zero_rate():
    fits = {"gpu": 500.0, "nic": 200.0, "psu": 0.0}
    assert rel.system_fit(fits, {"gpu": 8, "nic": 4, "psu": 2}) == 4800.0
    assert rel.system_mtbf_s({"psu": 0.0}, {"psu": 3}) == math.inf
    assert rel.system_fit(fits, {}) == 700.0  # unnamed kinds count once


def test_oracle_simulated_first_failures():
    # the first failure among independent exponential parts comes, on average, after the
    # system MTBF
    rng = np.random.default_rng(7)
    fits = {"gpu": 2e6, "nic": 5e5, "cpu": 1e5}
    counts = {"gpu": 8, "nic": 4, "cpu": 2}
    rates = [rel.fit_to_rate_per_s(fits[k]) for k in fits for _ in range(counts[k])]
    firsts = np.min(rng.exponential(1 / np.array(rates), size=(40_000, len(rates))), axis=1)
    assert firsts.mean() == pytest.approx(rel.system_mtbf_s(fits, counts), rel=0.02)


def test_bad_input():
    with pytest.raises(ValueError, match="counts names"):
        rel.system_fit({"gpu": 1.0}, {"cpu": 2})
    with pytest.raises(ValueError, match=r"fits\['gpu'\]"):
        rel.system_fit({"gpu": -1.0}, {"gpu": 2})
    with pytest.raises(ValueError, match="at least one failure"):
        rel.cause_shares({"a": 0})
    with pytest.raises(ValueError, match=r"rows\[0\]"):
        rel.category_counts([("a", 3)])
