"""A CPU stand-in for a CUDA stream: asynchronous execution you can watch without a GPU.

A GPU runs work *asynchronously*: the host (the CPU thread running Python) only enqueues a
kernel on a *stream* and returns at once; the device executes the stream's queue in order,
later. This module builds the same contract on a CPU with one worker thread:

* :class:`ToyStream` is a FIFO of "kernels" (Python callables). :meth:`ToyStream.launch`
  puts a kernel on the queue and returns immediately; the worker thread (the "device") runs
  the kernels one after another, in launch order. :meth:`ToyStream.synchronize` blocks the
  host until everything launched so far has finished.
* :class:`ToyEvent` is a marker recorded *into* the stream. The worker stamps it with the
  clock when it reaches it, that is when all earlier work is done, so the time between two
  events is the time the "device" spent on the work between them, whatever the host was
  doing. :meth:`ToyEvent.elapsed_time` returns milliseconds, like ``torch.cuda.Event``.
* An exception raised inside a kernel is not seen by :meth:`launch`; it surfaces at the next
  :meth:`ToyStream.synchronize` (or :meth:`ToyEvent.synchronize`), as a CUDA error surfaces at
  a later synchronizing call.

The API mirrors ``torch.cuda.Stream`` / ``torch.cuda.Event`` (``record``, ``query``,
``synchronize``, ``elapsed_time``) so that code written against it reads like GPU code.
Kernels that sleep (:func:`sleep_kernel`) take a known time and leave the CPU free, which
keeps the demonstrations honest on a busy machine.

Introduced in {ref}`sec-measurement`.

>>> with ToyStream() as stream:
...     start, end = ToyEvent(), ToyEvent()
...     start.record(stream)
...     stream.launch(sleep_kernel(0.02))        # returns at once
...     end.record(stream)
...     end.synchronize()
...     start.elapsed_time(end) >= 20.0       # milliseconds; a sleep never undersleeps
True

Used by: chapters/cuda-execution.md, chapters/measurement.md.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any, Callable

__all__ = ["ToyStream", "ToyEvent", "sleep_kernel", "time_three_ways", "naive_loop_times_s"]

_STOP = object()


class ToyStream:
    """An in-order queue of work executed by one worker thread (the "device").

    Parameters
    ----------
    max_pending : int or None
        Capacity of the launch queue. ``None`` (default) is unbounded. A bounded queue makes
        :meth:`launch` block once it is full, as a GPU's launch queue does: from then on the
        host advances only as fast as the device drains the queue.
    name : str
        Name of the worker thread.
    """

    def __init__(self, max_pending: int | None = None, name: str = "toy-stream"):
        if max_pending is not None and (not isinstance(max_pending, int) or max_pending < 1):
            raise ValueError(f"max_pending must be None or an integer >= 1, got {max_pending!r}")
        self.max_pending = max_pending
        self._queue: queue.Queue = queue.Queue(maxsize=max_pending or 0)
        self._error: BaseException | None = None
        self._error_lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    # -- the device side ------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is _STOP:
                    return
                item()
            except BaseException as exc:  # reported at the next synchronize, as CUDA does
                with self._error_lock:
                    if self._error is None:
                        self._error = exc
            finally:
                self._queue.task_done()

    # -- the host side --------------------------------------------------------------------
    def launch(self, kernel: Callable[..., Any], *args, **kwargs) -> None:
        """Enqueue ``kernel(*args, **kwargs)`` and return without waiting for it to run.

        Blocks only while a bounded queue is full.
        """
        if self._closed:
            raise RuntimeError("launch on a closed ToyStream")
        if not callable(kernel):
            raise TypeError(f"kernel must be callable, got {type(kernel).__name__}")
        if args or kwargs:
            self._queue.put(lambda: kernel(*args, **kwargs))
        else:
            self._queue.put(kernel)

    def _enqueue_marker(self, fn: Callable[[], None]) -> None:
        if self._closed:
            raise RuntimeError("record on a closed ToyStream")
        self._queue.put(fn)

    def pending(self) -> int:
        """Kernels and markers launched but not finished (approximate, like any queue size)."""
        return self._queue.unfinished_tasks

    def query(self) -> bool:
        """True if all work launched so far has finished (never blocks)."""
        return self._queue.unfinished_tasks == 0

    def synchronize(self) -> None:
        """Block until all work launched so far has finished; raise a kernel's error if any."""
        self._queue.join()
        self._raise_pending_error()

    def _raise_pending_error(self) -> None:
        with self._error_lock:
            exc, self._error = self._error, None
        if exc is not None:
            raise RuntimeError(f"a kernel on this stream failed: {exc!r}") from exc

    def record_event(self, event: "ToyEvent | None" = None) -> "ToyEvent":
        """Record ``event`` (a new one if None) on this stream and return it."""
        event = event or ToyEvent()
        event.record(self)
        return event

    def close(self) -> None:
        """Finish the queued work and stop the worker thread (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(_STOP)
        self._thread.join()

    def __enter__(self) -> "ToyStream":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class ToyEvent:
    """A timestamp the device takes when it reaches this point of a stream.

    Mirrors ``torch.cuda.Event(enable_timing=True)``: :meth:`record` enqueues it,
    :meth:`query` says whether the device has reached it, :meth:`synchronize` waits for it and
    :meth:`elapsed_time` gives the milliseconds between two completed events.
    """

    def __init__(self, enable_timing: bool = True):
        self.enable_timing = bool(enable_timing)
        self._done: threading.Event | None = None
        self._t_ns: int | None = None
        self._stream: ToyStream | None = None

    def record(self, stream: ToyStream) -> None:
        """Enqueue this event on ``stream``; re-recording replaces the earlier record."""
        if not isinstance(stream, ToyStream):
            raise TypeError(f"stream must be a ToyStream, got {type(stream).__name__}")
        done = threading.Event()
        self._done, self._t_ns, self._stream = done, None, stream

        def stamp() -> None:
            self._t_ns = time.perf_counter_ns()
            done.set()

        stream._enqueue_marker(stamp)

    def query(self) -> bool:
        """True once the device has reached this event (False if never recorded)."""
        return self._done is not None and self._done.is_set()

    def synchronize(self) -> None:
        """Block until the device reaches this event; raise a kernel error reported before it."""
        if self._done is None:
            raise RuntimeError("synchronize on an event that was never recorded")
        self._done.wait()
        if self._stream is not None:
            self._stream._raise_pending_error()

    def elapsed_time(self, end: "ToyEvent") -> float:
        """Milliseconds from this event to ``end`` (both recorded and completed)."""
        for ev, which in ((self, "start"), (end, "end")):
            if not ev.enable_timing:
                raise RuntimeError(f"the {which} event was created with enable_timing=False")
            if ev._done is None:
                raise RuntimeError(f"the {which} event was never recorded")
            if not ev._done.is_set():
                raise RuntimeError(f"the {which} event has not completed yet (synchronize first)")
        return (end._t_ns - self._t_ns) / 1e6


def sleep_kernel(duration_s: float) -> Callable[[], None]:
    """A "kernel" that keeps the device busy for ``duration_s`` seconds without using a core.

    ``time.sleep`` releases the interpreter lock and the CPU, so the host thread runs freely
    meanwhile, as the host does while a GPU works; the operating system may oversleep by tens
    of microseconds, never undersleep. ``sleep_kernel(0)`` does nothing, quickly: use it to
    measure the cost of a launch alone.
    """
    duration_s = float(duration_s)
    if not duration_s >= 0:
        raise ValueError(f"duration_s must be >= 0, got {duration_s!r}")

    def kernel() -> None:
        if duration_s > 0:  # sleep(0) is still a system call that can take a millisecond
            time.sleep(duration_s)

    kernel.__name__ = f"sleep_{duration_s:g}s"
    return kernel


def time_three_ways(stream: ToyStream, kernel: Callable[[], Any],
                    n_launches: int = 1) -> dict:
    """Time ``n_launches`` launches of ``kernel`` three ways (seconds).

    * ``host_no_sync_s``: a host timer around the launches only. This
      is the mistake: it times the *enqueueing*, not the work.
    * ``host_sync_s``: a host timer around the launches and a
      ``synchronize``: the work plus launch and sync overheads.
    * ``events_s``: events recorded before and after the launches: the
      device's own time between two points of the stream.
    """
    if not (isinstance(n_launches, int) and n_launches >= 1):
        raise ValueError(f"n_launches must be an integer >= 1, "
                         f"got {n_launches!r}")
    stream.synchronize()              # earlier work is not billed
    t0 = time.perf_counter()
    for _ in range(n_launches):
        stream.launch(kernel)
    host_no_sync_s = time.perf_counter() - t0    # wrong: too early
    stream.synchronize()

    t0 = time.perf_counter()
    for _ in range(n_launches):
        stream.launch(kernel)
    stream.synchronize()              # wait for the work
    host_sync_s = time.perf_counter() - t0

    start, end = ToyEvent(), ToyEvent()
    start.record(stream)              # stamped by the device
    for _ in range(n_launches):
        stream.launch(kernel)
    end.record(stream)
    end.synchronize()                 # wait until `end` is stamped
    events_s = start.elapsed_time(end) / 1e3     # ms -> s
    return {"host_no_sync_s": host_no_sync_s,
            "host_sync_s": host_sync_s, "events_s": events_s}


def naive_loop_times_s(stream: ToyStream, kernel: Callable[[], Any], n: int) -> list[float]:
    """Host-timed launches in a loop with no synchronization: the benchmark that forgot.

    Returns the host time of each of ``n`` launches. On an unbounded stream every value is a
    launch time; on a bounded one (``max_pending``) the first launches are fast until the
    queue fills, and then each launch waits for a slot, so the values jump to the kernel's
    duration: the "measurement" depends on the queue's depth, not on the work alone.
    """
    if not (isinstance(n, int) and n >= 1):
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    stream.synchronize()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        stream.launch(kernel)
        times.append(time.perf_counter() - t0)
    stream.synchronize()
    return times
