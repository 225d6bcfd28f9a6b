"""The gloo algorithm runner (helpers.labs.collectives_gloo_worker) and what the chapter computes
from its result (helpers.labs.analysis.collectives, the algorithm_* functions)."""

from __future__ import annotations

import json
import math

import pytest

from helpers.distributed import algorithms as alg
from helpers.labs import collectives_gloo_worker as gw
from helpers.labs import core
from helpers.labs.analysis import collectives as view
from helpers.models import collectives as model

SIZES = [384, 3072, 24576, 196608]


def _synthetic(alpha=30e-6, beta=0.4e-9, gamma=0.1e-9, ranks=(2, 4, 6, 8), skew=None):
    """A result shaped as the runner writes it, every time from the models (``skew`` scales
    one algorithm's times)."""
    groups = []
    for p in ranks:
        c = {"ranks": p, "alpha_s": alpha, "beta_s_per_byte": beta, "gamma_s_per_byte": gamma}
        algos = {}
        for name in alg.ALGORITHMS:
            if not alg.allowed(name, p):
                continue
            entries = []
            for n in SIZES:
                t = float(view.algorithm_model_s(name, n, c))
                if skew and name == skew[0]:
                    t *= skew[1]
                entries.append({"message_bytes": n, "median_s": t, "max_rank_median_s": t,
                                "checked": True, "spread": 0.01})
            algos[name] = entries
        groups.append({"ranks": p, "algorithms": algos,
                       "gamma": [{"message_bytes": n, "median_s": 1e-7 + gamma * n} for n in SIZES],
                       "copy": [{"message_bytes": n, "median_s": 1e-7 + 0.05e-9 * n} for n in SIZES]})
    return {"measurements": {"gloo": groups}}


def test_fit_recovers_the_constants_and_predicts_exactly():
    res = _synthetic()
    for p in (2, 4, 6, 8):
        c = view.algorithm_constants(res, p)
        assert c["alpha_s"] == pytest.approx(30e-6, rel=1e-9)
        assert c["beta_s_per_byte"] == pytest.approx(0.4e-9, rel=1e-9)
        assert c["gamma_s_per_byte"] == pytest.approx(0.1e-9, rel=1e-9)
        assert c["copy_s_per_byte"] == pytest.approx(0.05e-9, rel=1e-9)
    rows = view.algorithm_rows(res)
    assert all(abs(r["error"]) < 1e-9 for r in rows)
    assert {r["algorithm"] for r in rows if r["fitted"]} == {view.ALGO_FIT_FROM}


def test_a_wrong_algorithm_shows_as_an_error():
    rows = view.algorithm_rows(_synthetic(skew=("bruck_all_gather", 1.5)), ranks=6)
    summary = {s["algorithm"]: s for s in view.algorithm_summary(rows)}
    assert summary["bruck_all_gather"]["worst_error"] == pytest.approx(1 / 1.5 - 1)
    assert abs(summary["pairwise_all_to_all"]["worst_error"]) < 1e-9
    assert "recursive_doubling_all_gather" not in summary  # 6 is not a power of two


def test_crossovers():
    c = {"ranks": 8, "alpha_s": 30e-6, "beta_s_per_byte": 0.4e-9, "gamma_s_per_byte": 0.0}
    n = view.algorithm_crossover_bytes("recursive_doubling_all_reduce",
                                       "rabenseifner_all_reduce", c)
    # 3 alpha + 3 n beta = 6 alpha + 1.75 n beta  ->  n = 3 alpha / (1.25 beta)
    assert n == pytest.approx(3 * 30e-6 / (1.25 * 0.4e-9))
    for name in ("recursive_doubling_all_reduce", "rabenseifner_all_reduce"):
        assert float(view.algorithm_model_s(name, n, c)) == pytest.approx(
            float(view.algorithm_model_s("rabenseifner_all_reduce", n, c)))
    # Rabenseifner never loses to the ring on a power of two: same bytes, fewer start-ups
    assert view.algorithm_crossover_bytes("ring_all_reduce", "rabenseifner_all_reduce", c) == math.inf


def test_missing_group_is_named():
    with pytest.raises(ValueError, match="no gloo group of 3 ranks"):
        view.algorithm_constants(_synthetic(ranks=(2,)), 3)


def test_runner_end_to_end_on_one_rank(tmp_path, monkeypatch):
    """The runner as a script on a one-rank gloo group (the smallest real run): the file it
    writes reads back and names its provenance and its allocator settings; every entry was
    checked."""
    for key in gw.KEEP_MEMORY_ENV:  # main() sets them; monkeypatch restores the environment
        monkeypatch.delenv(key, raising=False)
    path = gw.main(["--out", str(tmp_path), "--size", "small", "--ranks", "1", "--keep-memory"])
    data = core.load_result(path)
    assert data["lab"] == alg.NAME and data["tier"] == "cpu"
    assert data["provenance"]["commit"] and data["settings"]["backend"] == "gloo"
    assert data["settings"]["malloc_env"] == gw.KEEP_MEMORY_ENV
    (group,) = data["measurements"]["gloo"]
    assert group["ranks"] == 1 and set(group["algorithms"]) == set(alg.ALGORITHMS)
    assert all(e["checked"] for es in group["algorithms"].values() for e in es)
    assert gw.reference_or_none(path) == json.loads(path.read_text())


def test_reference_absent(tmp_path, capsys):
    assert gw.reference_or_none(tmp_path / "none.json") is None
    assert "not measured yet" in capsys.readouterr().out
