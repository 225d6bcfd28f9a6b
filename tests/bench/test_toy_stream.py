"""Tests of helpers.bench.toy_stream: the asynchronous contract of a CUDA stream, on a CPU.

Kernels sleep for known times (``time.sleep`` never undersleeps and leaves the CPU free), so
lower bounds are exact and upper bounds are generous for a busy CI machine.
"""

from __future__ import annotations

import threading
import time

import pytest

from helpers.bench.toy_stream import (ToyEvent, ToyStream, naive_loop_times_s, sleep_kernel,
                                      time_three_ways)


@pytest.fixture
def stream():
    s = ToyStream()
    yield s
    s.close()


class TestLaunch:
    def test_launch_returns_before_the_work_is_done(self, stream):
        t0 = time.perf_counter()
        stream.launch(sleep_kernel(0.1))
        host = time.perf_counter() - t0
        assert host < 0.05
        assert not stream.query()
        stream.synchronize()
        assert stream.query()
        assert time.perf_counter() - t0 >= 0.1

    def test_kernels_run_in_launch_order_on_one_worker(self, stream):
        order, threads = [], set()

        def kernel(i):
            threads.add(threading.get_ident())
            time.sleep(0.001 * (5 - i))  # later kernels are shorter: order must still hold
            order.append(i)

        for i in range(5):
            stream.launch(kernel, i)
        stream.synchronize()
        assert order == [0, 1, 2, 3, 4]
        assert len(threads) == 1 and threading.get_ident() not in threads

    def test_keyword_arguments(self, stream):
        out = {}
        stream.launch(lambda a, b=0: out.update(s=a + b), 1, b=2)
        stream.synchronize()
        assert out == {"s": 3}

    def test_pending_counts_unfinished_work(self, stream):
        gate = threading.Event()
        stream.launch(gate.wait)
        stream.launch(lambda: None)
        assert stream.pending() == 2
        gate.set()
        stream.synchronize()
        assert stream.pending() == 0

    def test_bad_kernel(self, stream):
        with pytest.raises(TypeError, match="callable"):
            stream.launch(3)

    @pytest.mark.parametrize("bad", [0, -1, 2.0, "4"])
    def test_bad_queue_depth(self, bad):
        with pytest.raises(ValueError, match="max_pending"):
            ToyStream(max_pending=bad)


class TestErrors:
    def test_a_kernel_error_surfaces_at_the_next_synchronize(self, stream):
        stream.launch(lambda: 1 / 0)  # no error here: the launch only enqueues
        with pytest.raises(RuntimeError, match="ZeroDivisionError") as info:
            stream.synchronize()
        assert isinstance(info.value.__cause__, ZeroDivisionError)
        stream.synchronize()  # reported once

    def test_the_stream_keeps_running_after_an_error(self, stream):
        out = []
        stream.launch(lambda: [][1])
        stream.launch(lambda: out.append("after"))
        with pytest.raises(RuntimeError, match="IndexError"):
            stream.synchronize()
        assert out == ["after"]

    def test_event_synchronize_reports_the_error_too(self, stream):
        stream.launch(lambda: {}["missing"])
        ev = stream.record_event()
        with pytest.raises(RuntimeError, match="KeyError"):
            ev.synchronize()


class TestEvents:
    def test_elapsed_time_is_the_device_time_in_ms(self, stream):
        start, end = ToyEvent(), ToyEvent()
        start.record(stream)
        stream.launch(sleep_kernel(0.03))
        end.record(stream)
        end.synchronize()
        ms = start.elapsed_time(end)
        assert 30.0 <= ms < 30.0 + 200.0

    def test_event_times_add_up(self, stream):
        a, b, c = ToyEvent(), ToyEvent(), ToyEvent()
        a.record(stream)
        stream.launch(sleep_kernel(0.005))
        b.record(stream)
        stream.launch(sleep_kernel(0.01))
        c.record(stream)
        c.synchronize()
        assert a.elapsed_time(c) == pytest.approx(a.elapsed_time(b) + b.elapsed_time(c), abs=1e-9)
        assert b.elapsed_time(a) == pytest.approx(-a.elapsed_time(b))
        assert a.elapsed_time(b) >= 5.0 and b.elapsed_time(c) >= 10.0

    def test_events_ignore_what_the_host_does_meanwhile(self, stream):
        start, end = stream.record_event(), ToyEvent()
        stream.launch(sleep_kernel(0.01))
        end.record(stream)
        time.sleep(0.1)  # the host dawdles after the launch; the device is long done
        end.synchronize()
        assert start.elapsed_time(end) < 60.0

    def test_query_and_synchronize(self, stream):
        gate = threading.Event()
        stream.launch(gate.wait)
        ev = stream.record_event()
        assert not ev.query()
        gate.set()
        ev.synchronize()
        assert ev.query()

    def test_re_recording_replaces_the_timestamp(self, stream):
        a, b = stream.record_event(), stream.record_event()
        b.synchronize()
        first = a.elapsed_time(b)
        stream.launch(sleep_kernel(0.01))
        b.record(stream)
        b.synchronize()
        assert a.elapsed_time(b) >= first + 10.0

    def test_elapsed_time_errors(self, stream):
        never = ToyEvent()
        done = stream.record_event()
        done.synchronize()
        with pytest.raises(RuntimeError, match="never recorded"):
            done.elapsed_time(never)
        gate = threading.Event()
        stream.launch(gate.wait)
        late = stream.record_event()
        with pytest.raises(RuntimeError, match="not completed"):
            done.elapsed_time(late)
        gate.set()
        late.synchronize()
        untimed = ToyEvent(enable_timing=False)
        untimed.record(stream)
        untimed.synchronize()
        with pytest.raises(RuntimeError, match="enable_timing"):
            untimed.elapsed_time(done)

    def test_record_needs_a_stream_and_sync_needs_a_record(self):
        with pytest.raises(TypeError, match="ToyStream"):
            ToyEvent().record("default")
        with pytest.raises(RuntimeError, match="never recorded"):
            ToyEvent().synchronize()


class TestLifecycle:
    def test_close_finishes_work_and_stops_the_thread(self):
        out = []
        s = ToyStream()
        s.launch(lambda: (time.sleep(0.01), out.append(1)))
        s.close()
        s.close()  # idempotent
        assert out == [1] and not s._thread.is_alive()
        with pytest.raises(RuntimeError, match="closed"):
            s.launch(lambda: None)
        with pytest.raises(RuntimeError, match="closed"):
            ToyEvent().record(s)

    def test_context_manager(self):
        with ToyStream() as s:
            s.launch(lambda: None)
        assert not s._thread.is_alive()


class TestDemonstrations:
    def test_three_ways(self, stream):
        t = time_three_ways(stream, sleep_kernel(0.02), n_launches=2)
        assert t["events_s"] >= 0.04
        assert t["host_sync_s"] >= 0.04
        assert t["host_no_sync_s"] < t["events_s"] / 5

    def test_a_full_queue_makes_the_forgotten_sync_measure_the_work(self):
        with ToyStream(max_pending=2) as s:
            times = naive_loop_times_s(s, sleep_kernel(0.01), 10)
        assert len(times) == 10
        assert max(times[:2]) < 0.005          # queue filling: launches are instant
        assert min(times[-4:]) >= 0.005        # queue full: each launch waits for a slot

    def test_an_unbounded_queue_never_measures_the_work(self, stream):
        times = naive_loop_times_s(stream, sleep_kernel(0.01), 6)
        assert max(times) < 0.005

    @pytest.mark.parametrize("n", [0, 1.5])
    def test_bad_counts(self, stream, n):
        with pytest.raises(ValueError):
            time_three_ways(stream, sleep_kernel(0.0), n)
        with pytest.raises(ValueError):
            naive_loop_times_s(stream, sleep_kernel(0.0), n)

    def test_sleep_kernel(self):
        k = sleep_kernel(0.002)
        t0 = time.perf_counter()
        k()
        assert time.perf_counter() - t0 >= 0.002
        assert k.__name__ == "sleep_0.002s"
        nothing = sleep_kernel(0.0)  # no system call: a thousand of them take well under 1 s
        t0 = time.perf_counter()
        for _ in range(1000):
            nothing()
        assert time.perf_counter() - t0 < 0.2
        with pytest.raises(ValueError):
            sleep_kernel(-1.0)
        with pytest.raises(ValueError):
            sleep_kernel(float("nan"))
