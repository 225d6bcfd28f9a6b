"""Tests of helpers.sim.failures: no failures, determinism, an independent event loop, errors."""

import numpy as np
import pytest

from helpers.sim.failures import simulate_job


def test_without_failures_the_wall_time_is_work_plus_checkpoints():
    runs = simulate_job(work_s=100.0, interval_s=10.0, checkpoint_s=1.0, restart_s=3.0,
                        mtbf_s=1e15, n_runs=5, seed=0)
    assert np.allclose(runs.wall_s, 110.0) and runs.failures.sum() == 0


def test_a_last_partial_segment_keeps_the_work_exact():
    runs = simulate_job(work_s=25.0, interval_s=10.0, checkpoint_s=1.0, restart_s=0.0,
                        mtbf_s=1e15, n_runs=2, seed=0)
    assert np.allclose(runs.wall_s, 25.0 + 3 * 1.0)


def test_seeded_runs_repeat_and_different_seeds_differ():
    kw = dict(work_s=50.0, interval_s=5.0, checkpoint_s=1.0, restart_s=1.0, mtbf_s=20.0,
              n_runs=50)
    a, b, c = simulate_job(seed=1, **kw), simulate_job(seed=1, **kw), simulate_job(seed=2, **kw)
    assert np.array_equal(a.wall_s, b.wall_s) and not np.array_equal(a.wall_s, c.wall_s)


def _time_stepped(rng, work, tau, delta, restart, mtbf, dt):
    """An independent oracle: advance a clock in steps of dt, failing with probability dt/M."""
    t, done, seg, restarting = 0.0, 0.0, 0.0, 0.0
    p = dt / mtbf
    seg_len = tau + delta
    while done < work - 1e-9:
        t += dt
        if rng.random() < p:
            seg, restarting = 0.0, restart
            continue
        if restarting > 0:
            restarting -= dt
            continue
        seg += dt
        if seg >= seg_len - 1e-9:
            done, seg = done + tau, 0.0
    return t


def test_mean_matches_a_time_stepped_simulation():
    rng = np.random.default_rng(5)
    work, tau, delta, restart, mtbf = 40.0, 4.0, 1.0, 1.0, 15.0
    stepped = np.mean([_time_stepped(rng, work, tau, delta, restart, mtbf, 0.01)
                       for _ in range(300)])
    runs = simulate_job(work_s=work, interval_s=tau, checkpoint_s=delta, restart_s=restart,
                        mtbf_s=mtbf, n_runs=3000, seed=5)
    assert stepped == pytest.approx(runs.mean_wall_s, rel=0.05)


@pytest.mark.parametrize("kw", [dict(work_s=-1.0), dict(interval_s=0.0), dict(mtbf_s=0.0),
                                dict(n_runs=0), dict(restart_s=-1.0)])
def test_bad_input_raises_value_error(kw):
    base = dict(work_s=10.0, interval_s=1.0, checkpoint_s=0.1, restart_s=0.1, mtbf_s=5.0)
    with pytest.raises(ValueError):
        simulate_job(**{**base, **kw})
