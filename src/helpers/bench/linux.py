"""Reading and probing the Linux settings that shape an inference server, on this machine.

* :func:`nofile_limits`, :func:`open_fds`: the descriptor limit and the descriptors in use;
* :func:`fd_exhaustion`: in a child process, lower the soft limit and open descriptors until
  the kernel refuses, counting them (the check of :func:`helpers.models.linux.connection_capacity`);
* :func:`proc_cpu_s`: a process's CPU time from ``/proc/<pid>/stat``;
* :func:`duty_cycle_utilization`: a child that asks to be busy a given fraction of each period,
  its CPU time read through ``/proc`` and by itself (:func:`helpers.models.linux.cpu_utilization`);
* :func:`shutdown`: a child "server" with requests in flight, stopped with ``SIGTERM`` (it drains)
  or ``SIGKILL`` (it cannot), timed from the signal to its exit;
* :func:`settings`: the kernel and process settings an inference engineer should know, as read
  here (``None`` where this system does not expose one).

Every probe that changes a limit or runs a loop does it in a child process, so the caller (a
notebook) is left as it was. Linux only: elsewhere the probes raise ``RuntimeError``.

Used by: foundations/linux-for-inference.md.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["nofile_limits", "open_fds", "fd_exhaustion", "clk_tck", "proc_cpu_s",
           "duty_cycle_utilization", "shutdown", "settings"]


def _linux() -> None:
    if not Path("/proc/self/stat").exists():
        raise RuntimeError("this probe reads /proc and needs Linux")


def nofile_limits() -> tuple[int, int]:
    """The soft and hard ``RLIMIT_NOFILE`` limits of this process (``ulimit -n`` and ``-Hn``)."""
    import resource

    return resource.getrlimit(resource.RLIMIT_NOFILE)


def open_fds(pid: int | str = "self") -> int:
    """Descriptors open in process ``pid``: the entries of ``/proc/<pid>/fd``."""
    _linux()
    return len(os.listdir(f"/proc/{pid}/fd"))


_FD_CHILD = r"""
import errno, json, os, resource, sys
soft = int(sys.argv[1])
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
at_start = len(os.listdir("/proc/self/fd")) - 1   # listdir's own descriptor is closed again
opened, error = 0, None
try:
    while True:
        os.open(os.devnull, os.O_RDONLY)
        opened += 1
except OSError as e:
    error = errno.errorcode.get(e.errno, str(e.errno))
print(json.dumps({"soft": soft, "at_start": at_start, "opened": opened, "error": error}))
"""


def fd_exhaustion(soft_limit: int = 256) -> dict:
    """Open descriptors in a child process under a soft limit of ``soft_limit`` until refused.

    Returns ``{"soft", "at_start", "opened", "error"}``: descriptors open when the child began
    counting, how many more it opened, and the error that stopped it (``"EMFILE"``).
    """
    _linux()
    soft, hard = nofile_limits()
    if int(soft_limit) != soft_limit or not 16 <= soft_limit <= hard:
        raise ValueError(f"soft_limit must be an integer in [16, {hard}], got {soft_limit!r}")
    out = subprocess.run([sys.executable, "-c", _FD_CHILD, str(int(soft_limit))],
                         capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout)


def clk_tck() -> int:
    """Clock ticks per second of ``/proc`` CPU times (``sysconf(_SC_CLK_TCK)``)."""
    return os.sysconf("SC_CLK_TCK")


def proc_cpu_s(pid: int | str = "self") -> float:
    """User plus system CPU seconds of process ``pid`` (fields 14 and 15 of ``/proc/<pid>/stat``)."""
    _linux()
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2:].split()  # the name in parentheses may hold spaces
    utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15, counted from 1
    return (utime + stime) / clk_tck()


_DUTY_CHILD = r"""
import sys, time
busy, period, duration = map(float, sys.argv[1:4])
print("ready", time.process_time(), flush=True)
end = time.perf_counter() + duration
while time.perf_counter() < end:
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < busy * period:
        pass
    time.sleep(max(0.0, period - (time.perf_counter() - t0)))
print("done", time.process_time(), flush=True)
time.sleep(30)   # idle until killed, so /proc can still be read
"""


def duty_cycle_utilization(busy_fraction: float, *, duration_s: float = 1.0,
                           period_s: float = 0.02) -> dict:
    """Run a child that asks to be busy ``busy_fraction`` of every ``period_s`` for
    ``duration_s``, and read its CPU time two ways: from ``/proc/<pid>/stat`` (the kernel's
    ticks, as ``top`` reads them) and from the child's own ``time.process_time()``.

    Returns ``{"demanded", "proc_cpu_s", "self_cpu_s", "wall_s", "utilization"}``. On an idle
    machine the utilization approaches the demanded fraction; on a busy one (or in a container
    with a CPU quota) it is lower, because the kernel grants less CPU than the child asks for.
    """
    _linux()
    if not 0.0 <= busy_fraction <= 1.0:
        raise ValueError(f"busy_fraction must lie in [0, 1], got {busy_fraction!r}")
    if not duration_s > 0 or not period_s > 0:
        raise ValueError("duration_s and period_s must be > 0")
    child = subprocess.Popen([sys.executable, "-c", _DUTY_CHILD, str(busy_fraction),
                              str(period_s), str(duration_s)],
                             stdout=subprocess.PIPE, text=True)
    try:
        self0 = float(child.stdout.readline().split()[1])  # start-up is not counted
        cpu0, t0 = proc_cpu_s(child.pid), time.perf_counter()
        self1 = float(child.stdout.readline().split()[1])
        cpu1, t1 = proc_cpu_s(child.pid), time.perf_counter()
    finally:
        child.kill()
        child.wait()
        child.stdout.close()
    return {"demanded": float(busy_fraction), "proc_cpu_s": cpu1 - cpu0,
            "self_cpu_s": self1 - self0, "wall_s": t1 - t0, "utilization": (cpu1 - cpu0) / (t1 - t0)}


_SERVER_CHILD = r"""
import json, signal, sys, time
request_s = float(sys.argv[1])
stop = False
def on_term(signum, frame):
    global stop
    stop = True          # stop accepting; the request in progress runs to completion
signal.signal(signal.SIGTERM, on_term)
done = 0
print("ready", flush=True)
while not stop:
    t_end = time.perf_counter() + request_s   # one request: request_s of work
    while time.perf_counter() < t_end:
        time.sleep(0.001)
    done += 1
print(json.dumps({"completed": done}), flush=True)
"""


def shutdown(sig: str, *, request_s: float = 0.2, after_s: float = 0.5) -> dict:
    """Start a child serving one request at a time (each ``request_s`` long), send it ``sig``
    (``"SIGTERM"`` or ``"SIGKILL"``) ``after_s`` after it is ready, and time its exit.

    Returns ``{"signal", "exit_s", "returncode", "completed", "drained"}``: seconds from the
    signal to the process's exit, its return code, requests it reported completed (None if it
    could not report: killed), and whether it finished the request in flight.
    """
    _linux()
    if sig not in ("SIGTERM", "SIGKILL"):
        raise ValueError(f"sig must be 'SIGTERM' or 'SIGKILL', got {sig!r}")
    if not request_s > 0 or not after_s > 0:
        raise ValueError("request_s and after_s must be > 0")
    child = subprocess.Popen([sys.executable, "-c", _SERVER_CHILD, str(request_s)],
                             stdout=subprocess.PIPE, text=True)
    try:
        child.stdout.readline()
        time.sleep(after_s)
        t0 = time.perf_counter()
        child.send_signal(getattr(signal, sig))
        rest = child.stdout.read()
        code = child.wait(timeout=max(10.0, 20 * request_s))
        exit_s = time.perf_counter() - t0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
    completed = json.loads(rest)["completed"] if rest.strip() else None
    return {"signal": sig, "exit_s": exit_s, "returncode": code, "completed": completed,
            "drained": completed is not None}


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def settings() -> dict:
    """Settings that matter to a serving process, as this system reports them (None if not)."""
    import resource

    def limit(res):
        soft, hard = resource.getrlimit(res)
        fmt = lambda v: "unlimited" if v == resource.RLIM_INFINITY else str(v)  # noqa: E731
        return f"{fmt(soft)} / {fmt(hard)}"

    thp = _read("/sys/kernel/mm/transparent_hugepage/enabled")
    return {
        "open files (soft / hard)": limit(resource.RLIMIT_NOFILE),
        "locked memory (soft / hard)": limit(resource.RLIMIT_MEMLOCK),
        "processes (soft / hard)": limit(resource.RLIMIT_NPROC),
        "descriptors open now": open_fds() if Path("/proc/self/fd").exists() else None,
        "clock ticks per second": clk_tck(),
        "transparent huge pages": thp.split("[")[1].split("]")[0] if thp and "[" in thp else thp,
        "vm.swappiness": _read("/proc/sys/vm/swappiness"),
        "vm.overcommit_memory": _read("/proc/sys/vm/overcommit_memory"),
        "net.core.somaxconn": _read("/proc/sys/net/core/somaxconn"),
        "oom_score_adj of this process": _read("/proc/self/oom_score_adj"),
        "clock source": _read("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
    }
