"""eager_step_time_s: a step of unequal kernels launched eagerly (the decode lab's prediction)."""

import math

import pytest

from helpers.models import launch


def test_limits_host_bound_and_device_bound():
    # launches far slower than the device: n t_l; device far slower: its own time
    assert launch.eager_step_time_s(500, 16e-6, 1e-3) == pytest.approx(8e-3)
    assert launch.eager_step_time_s(500, 16e-6, 20e-3) == 20e-3
    # continuous where the two stages take as long
    assert launch.eager_step_time_s(500, 16e-6, 8e-3) == pytest.approx(8e-3)


def test_equal_kernels_reduce_to_eager_time_s():
    """Oracle: with n equal kernels of t_k each, T_dev = n t_k and the model is the two-stage
    pipeline of eager_time_s (no sync cost)."""
    for n, t_l, t_k in ((80, 3.25e-6, 0.5e-6), (100, 5e-6, 2e-6), (7, 1e-6, 9e-6)):
        assert launch.eager_step_time_s(n, t_l, n * t_k) == pytest.approx(
            launch.eager_time_s(n, t_l, t_k), rel=1e-12)


def test_cudajl_rk4_launched_normally():
    # CUDA.jl docs, "Graphs": 80 broadcast kernels take about 260 µs launched normally; the
    # same chain replays in 70 µs (the device's time), so the host's 260/80 µs per launch sets it
    assert launch.eager_step_time_s(80, 260e-6 / 80, 70e-6) == pytest.approx(260e-6)


@pytest.mark.parametrize("bad, name", [(dict(n_kernels=0), "n_kernels"),
                                       (dict(launch_s=-1e-6), "launch_s"),
                                       (dict(device_s=math.nan), "device_s")])
def test_bad_input_names_the_argument(bad, name):
    args = dict(n_kernels=10, launch_s=1e-6, device_s=1e-3) | bad
    with pytest.raises(ValueError, match=name):
        launch.eager_step_time_s(**args)
