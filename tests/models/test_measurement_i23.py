"""Issue 23: the timer-quantization error as a model, and Triton do_bench's count rule."""

import inspect
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.figures import measurement as fig_measurement
from helpers.models import measurement

FAST = settings(max_examples=60, deadline=None)


# --- quantization error ------------------------------------------------------------------

def test_published_cuda_event_resolution():
    # CUDA Runtime API, cudaEventElapsedTime: "a resolution of around 0.5 microseconds";
    # within 1 % the interval must then be 50 us, and a 5 us kernel is read within 10 %.
    assert measurement.min_interval_s(0.5e-6, 0.01) == pytest.approx(50e-6)
    assert measurement.timer_quantization_error(0.5e-6, 5e-6) == pytest.approx(0.1)


@FAST
@given(st.floats(1e-12, 1.0), st.floats(1e-9, 1.0))
def test_min_interval_inverts_the_error(r, eps):
    t = measurement.min_interval_s(r, eps)
    assert measurement.timer_quantization_error(r, t) == pytest.approx(min(1.0, eps), rel=1e-12)


def test_error_is_capped_at_one_and_falls_as_one_over_t():
    assert measurement.timer_quantization_error(1e-6, 1e-9) == 1.0
    e1 = measurement.timer_quantization_error(1e-6, 1e-3)
    e2 = measurement.timer_quantization_error(1e-6, 2e-3)
    assert e1 == pytest.approx(2 * e2)


def test_oracle_rounding_a_simulated_clock():
    # round random intervals to a tick and measure the worst relative error
    rng = np.random.default_rng(0)
    r = 1e-6
    for t in (3.3e-6, 47.2e-6, 1100.6e-6):
        starts = rng.uniform(0, 1.0, 20_000)
        read = np.floor((starts + t) / r) * r - np.floor(starts / r) * r
        worst = np.max(np.abs(read - t)) / t
        assert worst <= measurement.timer_quantization_error(r, t) * (1 + 1e-6)
        frac = t / r - math.floor(t / r)
        # a reading is floor or ceil of T / r ticks: the error reaches max(frac, 1 - frac) r,
        # which tends to the bound r as T nears a whole number of ticks
        assert worst == pytest.approx(max(frac, 1 - frac) * r / t, rel=1e-3)
    t = 5.0005e-6
    starts = rng.uniform(0, 1.0, 20_000)
    read = np.floor((starts + t) / r) * r - np.floor(starts / r) * r
    assert np.max(np.abs(read - t)) / t >= 0.99 * measurement.timer_quantization_error(r, t)


def test_the_figure_draws_the_model(monkeypatch):
    fig = fig_measurement.resolution_figure({"fine": 5e-8}, target=0.01)
    curve = fig.axes[0].lines[0]
    T, err = curve.get_xdata(), curve.get_ydata()
    assert list(err) == [measurement.timer_quantization_error(5e-8, float(t)) for t in T]
    # the figure calls the model (not a copy of its formula): a stand-in model shows up
    monkeypatch.setattr(measurement, "timer_quantization_error", lambda r, t: 0.25)
    monkeypatch.setattr(measurement, "min_interval_s", lambda r, eps: 1.0)
    fig = fig_measurement.resolution_figure({"fine": 5e-8}, target=0.01)
    lines = fig.axes[0].lines
    assert set(lines[0].get_ydata()) == {0.25}
    assert float(lines[1].get_xdata()[0]) == 1.0


def test_bad_input():
    with pytest.raises(ValueError, match="resolution_s"):
        measurement.timer_quantization_error(0.0, 1.0)
    with pytest.raises(ValueError, match="interval_s"):
        measurement.timer_quantization_error(1e-6, -1.0)
    with pytest.raises(ValueError, match="max_error"):
        measurement.min_interval_s(1e-6, 0.0)
    with pytest.raises(ValueError, match="max_error"):
        measurement.min_interval_s(1e-6, 1.5)


# --- do_bench ----------------------------------------------------------------------------

def test_do_bench_published_defaults():
    # Triton 3.5.0 testing.py: do_bench(fn, warmup=25, rep=100, ...), in ms
    triton_testing = pytest.importorskip("triton.testing")
    sig = inspect.signature(triton_testing.do_bench)
    assert sig.parameters["warmup"].default * 1e-3 == measurement.DO_BENCH_WARMUP_S
    assert sig.parameters["rep"].default * 1e-3 == measurement.DO_BENCH_REP_S
    assert "/ 5" in inspect.getsource(triton_testing.do_bench)
    assert measurement.do_bench_counts(1e-3) == (25, 100)
    assert measurement.do_bench_counts(0.3) == (1, 1)  # max(1, .): at least one of each


@FAST
@given(st.floats(1e-7, 10.0))
def test_counts_fill_the_budget(t):
    w, r = measurement.do_bench_counts(t)
    assert w >= 1 and r >= 1
    if r > 1:
        assert r * t <= measurement.DO_BENCH_REP_S * (1 + 1e-12) < (r + 1) * t * (1 + 1e-12)


class _FakeDriver:
    """A device whose clock advances by ``call_ms`` per call of ``fn``: Triton's real
    ``do_bench`` runs against it and its calls are counted."""

    def __init__(self, call_ms):
        self.now_ms, self.call_ms, self.calls = 0.0, call_ms, 0
        driver = self

        class Event:
            def __init__(self, enable_timing=True):
                self.t = None

            def record(self):
                self.t = driver.now_ms

            def elapsed_time(self, end):
                return end.t - self.t

        class Interface:
            pass

        Interface.Event = Event
        Interface.synchronize = staticmethod(lambda: None)
        self.interface = Interface

    def get_device_interface(self):
        return self.interface

    def get_empty_cache_for_benchmark(self):
        return None

    def clear_cache(self, cache):
        pass

    def fn(self):
        self.calls += 1
        self.now_ms += self.call_ms


@pytest.mark.parametrize("call_ms", [0.0137, 0.3, 1.7, 7.3, 40.0, 150.0])
def test_oracle_triton_do_bench_itself(monkeypatch, call_ms):
    triton_testing = pytest.importorskip("triton.testing")
    fake = _FakeDriver(call_ms)
    monkeypatch.setattr(triton_testing.runtime.driver, "_active", fake, raising=False)
    monkeypatch.setattr(type(triton_testing.runtime.driver), "active",
                        property(lambda self: fake), raising=False)
    times = triton_testing.do_bench(fake.fn, return_mode="all")
    n_warmup, n_repeat = measurement.do_bench_counts(call_ms * 1e-3)
    assert len(times) == n_repeat
    assert fake.calls == 1 + measurement.DO_BENCH_ESTIMATE_CALLS + n_warmup + n_repeat


def test_do_bench_bad_input():
    with pytest.raises(ValueError, match="estimate_s"):
        measurement.do_bench_counts(0.0)
    with pytest.raises(ValueError, match="rep_s"):
        measurement.do_bench_counts(1e-3, rep_s=-1.0)
    with pytest.raises(ValueError, match="warmup_s"):
        measurement.do_bench_counts(5e-324)
