"""Tests of helpers.bench.probes: work counts, result checks, thread handling, errors.

Timings themselves are not asserted (they depend on the machine and its load), only that
they exist and are positive.
"""

import numpy as np
import pytest
import torch

from helpers.bench import probes
from helpers.bench.env import usable_cores
from helpers.models import roofline as rl


def test_copy_counts_read_plus_written_bytes():
    r = probes.copy_bandwidth(4e6, budget_s=0.02)
    assert r.bytes_moved == 8e6 and r.flop == 0.0
    assert r.bytes_per_s > 0 and r.result.n_reps >= 5
    assert r.n_threads == usable_cores()


def test_read_counts_one_flop_per_element():
    r = probes.read_bandwidth(4e6, budget_s=0.02)
    assert r.flop == 1e6 and r.bytes_moved == 4e6
    assert r.intensity_flop_per_byte == 0.25
    assert r.flop_per_s == pytest.approx(r.bytes_per_s / 4)


def test_matmul_counts():
    r = probes.matmul_rate(128, budget_s=0.02)
    assert r.flop == rl.matmul_flop(128, 128, 128)
    assert r.bytes_moved == rl.matmul_min_bytes(128, 128, 128, 4.0)
    assert r.flop_per_s > 0


@pytest.mark.parametrize("batch", [1, 3, 16])
def test_batched_gemv_counts_and_intensity(batch):
    w = probes.make_weights(512, 256, seed=3)
    r = probes.batched_gemv(w, batch, budget_s=0.02)
    assert r.flop == 2 * 512 * 256 * batch
    assert r.bytes_moved == 4 * (512 * 256 + 256 * batch + 512 * batch)
    # about batch / 2 FLOP per byte when the weights dominate the traffic
    assert r.intensity_flop_per_byte == pytest.approx(batch / 2, rel=0.1)


def test_inputs_are_seeded_and_never_zero():
    a = probes.make_weights(64, 32, seed=5)
    b = probes.make_weights(64, 32, seed=5)
    assert torch.equal(a, b)
    assert float(a.min()) >= 0.5 and float(a.max()) < 1.5


def test_result_check_catches_a_wrong_product():
    rng = np.random.default_rng(0)
    a, b = rng.random((4, 8)) + 0.5, rng.random((8, 3)) + 0.5
    good = torch.from_numpy((a @ b).astype(np.float32))
    probes._check_rows(good, a, b, "test")  # passes
    with pytest.raises(RuntimeError, match="relative error"):
        probes._check_rows(good * 1.001, a, b, "test")


def test_threads_are_restored():
    before = torch.get_num_threads()
    with probes.threads(1) as n:
        assert n == 1 and torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    probes.copy_bandwidth(1e6, budget_s=0.01, n_threads=1)
    assert torch.get_num_threads() == before


def test_errors():
    with pytest.raises(ValueError, match="at least 4096 bytes"):
        probes.copy_bandwidth(100)
    with pytest.raises(ValueError, match="n must be >= 16"):
        probes.matmul_rate(4)
    with pytest.raises(ValueError, match="2-D fp32"):
        probes.batched_gemv(torch.ones(4, 4, dtype=torch.float64), 1)
    with pytest.raises(ValueError, match="batch must be a positive integer"):
        probes.batched_gemv(probes.make_weights(32, 32), 0)
    with pytest.raises(ValueError, match="n must be >= 1"):
        with probes.threads(0):
            pass
