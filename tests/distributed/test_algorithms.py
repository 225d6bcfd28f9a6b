"""helpers.distributed.algorithms: the point-to-point collective programs, checked exactly."""

from __future__ import annotations

import pytest
import torch

from helpers.distributed import spawn
from helpers.distributed import algorithms as alg


@pytest.mark.parametrize("p", [1, 2, 3, 4, 5, 6, 7, 8])
def test_every_algorithm_matches_the_reference_on_threads(p):
    for name in alg.ALGORITHMS:
        if alg.allowed(name, p):
            outs, _ = alg.run_in_threads(name, p, 24 * 35)  # run_in_threads checks each rank
            assert len(outs) == p


def test_uneven_all_reduce_blocks_are_still_exact():
    """All-reduce buffers need not split evenly into p (or p') blocks."""
    for name in ("ring_all_reduce", "rabenseifner_all_reduce", "recursive_doubling_all_reduce"):
        for p in (3, 5, 6):
            alg.run_in_threads(name, p, 101)


def test_check_output_catches_a_wrong_result_and_a_changed_input():
    n, p, seed = 48, 4, 3
    x = alg.inputs("all_reduce", n, 1, p, seed)
    good = alg.reference("all_reduce", n, 1, p, seed)
    alg.check_output("ring_all_reduce", x, good.clone(), n, 1, p, seed)
    bad = good.clone()
    bad[5] += 1
    with pytest.raises(AssertionError, match="1 of 48 elements differ"):
        alg.check_output("ring_all_reduce", x, bad, n, 1, p, seed)
    with pytest.raises(AssertionError, match="differ"):
        alg.check_output("ring_all_reduce", x, good[:-1], n, 1, p, seed)
    x[0] += 1
    with pytest.raises(AssertionError, match="changed its input"):
        alg.check_output("ring_all_reduce", x, good.clone(), n, 1, p, seed)


def test_a_broken_schedule_is_caught(monkeypatch):
    """A ring all-gather that skips its last step leaves a block unwritten: the check fails."""
    def short_ring(x, rank, p):
        m = x.numel()
        out = torch.zeros(m * p)
        out[rank * m:(rank + 1) * m] = x
        for s in range(p - 2):
            si, ri = (rank - s) % p, (rank - s - 1) % p
            alg._shift(out[si * m:(si + 1) * m], out[ri * m:(ri + 1) * m], (rank + 1) % p,
                       (rank - 1) % p)
        return out
    monkeypatch.setitem(alg.ALGORITHMS, "ring_all_gather", ("all_gather", short_ring, "any"))
    with pytest.raises(AssertionError, match="differ from the reference"):
        alg.run_in_threads("ring_all_gather", 4, 96)


def test_inputs_are_small_nonzero_integers():
    x = alg.inputs("all_to_all", 96, 2, 4, 1)
    assert x.dtype == torch.float32 and torch.all(x >= 1) and torch.all(x == x.round())
    assert alg.inputs("all_gather", 96, 2, 4, 1).numel() == 24
    assert not torch.equal(x, alg.inputs("all_to_all", 96, 3, 4, 1))


def test_refusals():
    with pytest.raises(ValueError, match="power-of-two"):
        alg.run_in_threads("recursive_doubling_all_gather", 6, 96)
    with pytest.raises(ValueError, match="algorithm must be one of"):
        alg.allowed("butterfly", 4)


def test_on_real_gloo_ranks_each_result_is_checked_then_timed():
    """Three gloo processes (not a power of two: the fold's blocking send and recv run), a
    small size: every algorithm is checked against the reference in every rank, then timed."""
    out = spawn(alg.measure_rank, 3, "gloo", args=([384],),
                kwargs={"reps": 2, "warmup": 0, "gamma_reps": 2}, timeout_s=120,
                threads_per_rank=1)
    names = [n for n in alg.ALGORITHMS if alg.allowed(n, 3)]
    for r, o in enumerate(out):
        assert o["rank"] == r and list(o["algorithms"]) == names
        for entries in o["algorithms"].values():
            assert entries[0]["checked"] and entries[0]["median_s"] > 0
    assert len(out[0]["algorithms"]["ring_all_reduce"][0]["samples_s"]) == 2
    assert out[0]["gamma"][0]["s_per_byte"] > 0
