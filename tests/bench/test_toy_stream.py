"""Tests of helpers.bench.toy_stream: the asynchronous contract of a CUDA stream, on a CPU.

No assertion depends on the machine being idle. Kernels sleep for known times
(``time.sleep`` never undersleeps and leaves the CPU free), which gives lower bounds on the
real clock; what would need an upper bound (a launch returns at once, events ignore the host,
an unsynchronized timer sees only the enqueueing) is shown either without a clock, with
kernels that wait on a gate, or on the still clock of ``tests/bench/conftest.py``, which only
the kernels' sleeps move, so event times are exact.
"""

from __future__ import annotations

import threading
import time

import pytest

from helpers.bench.toy_stream import (ToyEvent, ToyStream, naive_loop_times_s, sleep_kernel,
                                      time_three_ways)


def _exactly(value):
    return pytest.approx(value, rel=1e-12, abs=0)


def _gate_opened_by_host_reads(monkeypatch, clock, n_reads):
    """A gate that opens once the host has read ``clock.perf_counter`` ``n_reads`` times.

    Kernels that wait on it cannot move the still clock while the host is still timing its
    launches, so an unsynchronized host timer reads exactly zero. Kernels wait 30 s at most:
    code that waited for its kernels before reading the clock then fails instead of hanging.
    """
    gate, reads = threading.Event(), [0]

    def perf_counter():
        reads[0] += 1
        if reads[0] >= n_reads:
            gate.set()
        return clock.now_ns * 1e-9

    monkeypatch.setattr(clock, "perf_counter", perf_counter)
    return gate


@pytest.fixture
def stream():
    s = ToyStream()
    yield s
    s.close()


class TestLaunch:
    def test_launch_returns_before_the_work_is_done(self, stream):
        # No clock: the kernel cannot finish before the host opens its gate, so a launch that
        # waited for its work would return only after the 30 s timeout, with the work done.
        gate, finished = threading.Event(), threading.Event()

        def kernel():
            gate.wait(30.0)
            finished.set()

        stream.launch(kernel)
        assert not finished.is_set() and not stream.query()
        gate.set()
        stream.synchronize()
        assert finished.is_set() and stream.query()

    def test_synchronize_waits_for_the_work(self, stream):
        t0 = time.perf_counter()
        stream.launch(sleep_kernel(0.1))
        stream.synchronize()
        assert stream.query()
        assert time.perf_counter() - t0 >= 0.1  # a lower bound: load only adds time

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
        assert start.elapsed_time(end) >= 30.0  # the real clock: a lower bound

    def test_elapsed_time_is_exactly_the_kernel_on_a_still_clock(self, stream, still_clock):
        start, end = ToyEvent(), ToyEvent()
        start.record(stream)
        stream.launch(sleep_kernel(0.03))
        end.record(stream)
        end.synchronize()
        assert start.elapsed_time(end) == _exactly(30.0)  # milliseconds

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

    def test_events_ignore_what_the_host_does_meanwhile(self, stream, still_clock):
        start, end = stream.record_event(), ToyEvent()
        stream.launch(sleep_kernel(0.01))
        end.record(stream)
        stream.synchronize()      # the device is done ...
        still_clock.sleep(0.1)    # ... and the host dawdles 100 ms before it asks
        end.synchronize()
        assert start.elapsed_time(end) == _exactly(10.0)  # 110 if stamped when asked

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
        # The real clock: lower bounds only.
        t = time_three_ways(stream, sleep_kernel(0.02), n_launches=2)
        assert t["events_s"] >= 0.04
        assert t["host_sync_s"] >= 0.04
        assert t["host_no_sync_s"] >= 0

    def test_three_ways_on_a_still_clock(self, stream, still_clock, monkeypatch):
        # The kernels move the clock only after the host's second read (the end of the
        # unsynchronized timing), so each way's number is exact: the mistake reads zero.
        gate = _gate_opened_by_host_reads(monkeypatch, still_clock, 2)

        def kernel():
            gate.wait(30.0)
            still_clock.sleep(0.02)

        t = time_three_ways(stream, kernel, n_launches=2)
        assert t == {"host_no_sync_s": 0.0, "host_sync_s": _exactly(0.04),
                     "events_s": _exactly(0.04)}

    def test_a_full_queue_blocks_the_launch_until_the_device_frees_a_slot(self):
        # No clock: every kernel waits on a gate. With the first kernel running and room for
        # two more in the queue, launches 1 to 3 return and the 4th waits for a slot.
        gate, running, done = threading.Event(), threading.Event(), []

        def kernel():
            running.set()
            gate.wait(30.0)

        with ToyStream(max_pending=2) as s:
            def host():
                for i in range(6):
                    s.launch(kernel)
                    done.append(i)

            launcher = threading.Thread(target=host, daemon=True)
            launcher.start()
            try:
                assert running.wait(30.0)
                deadline = time.monotonic() + 30.0
                while len(done) < 3 and time.monotonic() < deadline:
                    time.sleep(0.001)
                time.sleep(0.05)  # room for a 4th launch that did not block (cannot pass it)
                assert len(done) == 3 and launcher.is_alive()
            finally:
                gate.set()
            launcher.join(30.0)
        assert done == list(range(6))

    def test_the_forgotten_sync_times_each_launch_alone(self, still_clock):
        # naive_loop_times_s on a stand-in stream whose launches take known host times, as
        # launches into a full queue do: it reports each launch's own time, in order, and
        # synchronizes before and after the loop, never inside it.
        events = []

        class Stream:
            costs = iter([0.0, 0.0, 0.01, 0.02, 0.01])

            def synchronize(self):
                events.append("sync")

            def launch(self, kernel):
                events.append("launch")
                still_clock.sleep(next(self.costs))

        times = naive_loop_times_s(Stream(), sleep_kernel(0.01), 5)
        assert times == [0.0, 0.0, _exactly(0.01), _exactly(0.02), _exactly(0.01)]
        assert events == ["sync"] + ["launch"] * 5 + ["sync"]

    def test_an_unbounded_queue_never_measures_the_work(self, stream, still_clock, monkeypatch):
        gate = _gate_opened_by_host_reads(monkeypatch, still_clock, 2 * 6)

        def kernel():
            gate.wait(30.0)
            still_clock.sleep(0.01)

        times = naive_loop_times_s(stream, kernel, 6)
        assert times == [0.0] * 6
        assert still_clock.now_ns == 60_000_000  # the work did run, after the timing

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

    def test_sleep_kernel_of_zero_makes_no_system_call(self, still_clock):
        # Counted, not timed: sleep(0) is still a system call that can take a millisecond.
        sleep_kernel(0.0)()
        assert still_clock.sleeps == []
        sleep_kernel(0.002)()
        assert still_clock.sleeps == [0.002]
        with pytest.raises(ValueError):
            sleep_kernel(-1.0)
        with pytest.raises(ValueError):
            sleep_kernel(float("nan"))
