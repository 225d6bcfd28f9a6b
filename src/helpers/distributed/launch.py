"""Start ``world_size`` local processes as one ``torch.distributed`` job and gather their results.

What ``torchrun`` does for a job on one machine, cut down to what a page or a lab needs, and
callable from a notebook:

1. pick a free TCP port on localhost for the rendezvous store, which listens on the loopback
   address only (:func:`loopback_store`; torch's own ``env://`` store listens on every address);
2. start one process per rank with the *spawn* start method (a fresh interpreter: CUDA cannot
   be used in a forked child);
3. in each: pin the GPU (``torch.cuda.set_device(rank)``) for NCCL, ``init_process_group``
   over that store with a timeout, run ``fn(rank, world_size, *args)``, send its (picklable)
   return value to the parent, destroy the group;
4. in the parent: wait for every rank, and if one raises, dies or does not finish in time,
   stop the others and raise :class:`WorkerError` naming that rank.

The environment (for example ``NCCL_NVLS_ENABLE`` on the GPU machine) is inherited unchanged.
``fn`` must be importable by the child, i.e. defined at module level in the helper package, not
in a notebook cell.

Library only: no page imports it.
"""

from __future__ import annotations

import os
import queue as queue_mod
import socket
import time
import traceback
from datetime import timedelta

from helpers.bench.sizes import forced_tier, use_tier

__all__ = ["spawn", "free_port", "loopback_store", "WorkerError", "WorkerTimeout", "BACKENDS",
           "STORE_HOST"]

BACKENDS = ("gloo", "nccl")

#: The one address the rendezvous store listens on: the job never leaves this machine.
STORE_HOST = "127.0.0.1"


class WorkerError(RuntimeError):
    """A rank raised, died or hung; ``rank`` names it (the first one seen)."""

    def __init__(self, message: str, rank: int | None):
        super().__init__(message)
        self.rank = rank


class WorkerTimeout(WorkerError, TimeoutError):
    """No result from ``rank`` (the first of ``missing``) within the timeout."""

    missing: list = []


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free on ``host`` a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def loopback_store(rank: int, world_size: int, port: int, timeout_s: float = 300.0):
    """The job's ``torch.distributed.TCPStore``, its server listening on ``127.0.0.1`` only.

    Rank 0 hosts the server, the other ranks connect to it. ``TCPStore(host_name, ...,
    is_master=True)`` binds its server to *every* address (``::``) whatever ``host_name`` says,
    and so does the ``env://`` rendezvous with ``MASTER_ADDR=127.0.0.1`` (torch 2.13), which
    lets any host that can reach this one join or poison the job's store. So rank 0 binds the
    listening socket itself, to :data:`STORE_HOST` and ``port``, and hands it over with the
    documented ``master_listen_fd`` (the store takes the descriptor and closes it).

    Pass the result as ``init_process_group(..., store=...)``.
    """
    import torch.distributed as dist

    timeout = timedelta(seconds=float(timeout_s))
    if rank != 0:
        return dist.TCPStore(STORE_HOST, port, world_size, False, timeout)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((STORE_HOST, port))
    except OSError:
        sock.close()
        raise
    return dist.TCPStore(STORE_HOST, port, world_size, True, timeout,
                         master_listen_fd=sock.detach())


def _worker(rank, world_size, backend, port, fn, args, kwargs, results, timeout_s, threads,
            tier=None):
    os.environ.update(MASTER_ADDR=STORE_HOST, MASTER_PORT=str(port), RANK=str(rank),
                      LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size))
    import torch
    import torch.distributed as dist

    try:
        if threads is not None:
            torch.set_num_threads(int(threads))
        extra = {}
        if backend == "nccl":
            torch.cuda.set_device(rank)
            extra["device_id"] = torch.device("cuda", rank)  # binds the group to this GPU
        store = loopback_store(rank, world_size, port, timeout_s)
        dist.init_process_group(backend, store=store, rank=rank, world_size=world_size,
                                timeout=timedelta(seconds=timeout_s), **extra)
        with use_tier(tier):   # the parent's --size, which a fresh interpreter cannot see
            out = fn(rank, world_size, *args, **kwargs)
        results.put((rank, "ok", out))
    except BaseException as exc:  # report everything, including KeyboardInterrupt
        results.put((rank, "error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))
    finally:
        try:
            if dist.is_initialized():
                dist.destroy_process_group()
        except Exception:  # a failed peer can make teardown fail; the parent reports the cause
            pass


def _stop(procs, grace_s: float = 5.0) -> None:
    for p in procs:
        if p.is_alive():
            p.terminate()
    end = time.monotonic() + grace_s
    for p in procs:
        p.join(max(0.0, end - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join(1.0)


def spawn(fn, world_size: int, backend: str = "gloo", args: tuple = (), kwargs: dict | None = None,
          *, timeout_s: float = 300.0, startup_s: float = 30.0,
          threads_per_rank: int | None = None) -> list:
    """Run ``fn(rank, world_size, *args, **kwargs)`` in ``world_size`` processes; return the
    ``world_size`` results in rank order.

    Parameters
    ----------
    fn : callable
        A module-level function (it is pickled by reference); its return value must be
        picklable (a dict of floats and lists is best).
    world_size : int
        Number of processes (>= 1). For ``"nccl"`` at most ``torch.cuda.device_count()``.
    backend : {"gloo", "nccl"}
        ``"gloo"`` runs on CPUs; ``"nccl"`` pins rank ``r`` to GPU ``r``.
    args, kwargs
        Extra arguments for ``fn``.
    timeout_s : float
        Seconds the ranks' work may take; also the process group's timeout.
    startup_s : float
        Seconds allowed on top of ``timeout_s`` for starting the interpreters and importing
        torch.
    threads_per_rank : int or None
        ``torch.set_num_threads`` in each rank (None leaves torch's default).

    Raises
    ------
    ValueError
        Bad ``world_size``, ``backend`` or ``timeout_s``, or too few GPUs for NCCL.
    WorkerError
        A rank raised (its traceback is in the message), or exited without a result.
    WorkerTimeout
        Some ranks gave no result within ``timeout_s`` (they are named).
    """
    if isinstance(world_size, bool) or not isinstance(world_size, int) or world_size < 1:
        raise ValueError(f"world_size must be an integer >= 1, got {world_size!r}")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    for name, v in (("timeout_s", timeout_s), ("startup_s", startup_s)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
            raise ValueError(f"{name} must be a number > 0, got {v!r}")
    import torch
    import torch.multiprocessing as tmp

    if backend == "nccl":
        n_gpu = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if n_gpu < world_size:
            raise ValueError(f"backend 'nccl' needs one GPU per rank: world_size={world_size}, "
                             f"but {n_gpu} CUDA device(s) are visible")
    ctx = tmp.get_context("spawn")
    results = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=_worker, name=f"rank{r}", daemon=True,
                         args=(r, world_size, backend, port, fn, tuple(args), dict(kwargs or {}),
                               results, float(timeout_s), threads_per_rank, forced_tier()))
             for r in range(world_size)]
    out: dict[int, object] = {}
    dead_since: dict[int, float] = {}
    deadline = time.monotonic() + float(timeout_s) + float(startup_s)
    try:
        for p in procs:
            p.start()
        while len(out) < world_size:
            try:
                rank, status, value = results.get(timeout=0.2)
            except queue_mod.Empty:
                now = time.monotonic()
                for r, p in enumerate(procs):
                    if r not in out and not p.is_alive():
                        dead_since.setdefault(r, now)
                        if now - dead_since[r] > 3.0:  # its result, if any, would be here now
                            raise WorkerError(f"rank {r} of {world_size} ({backend}) exited with "
                                              f"code {p.exitcode} without a result", r) from None
                if now > deadline:
                    missing = [r for r in range(world_size) if r not in out]
                    err = WorkerTimeout(f"rank(s) {missing} of {world_size} ({backend}) gave no "
                                        f"result within {timeout_s:g} s", missing[0])
                    err.missing = missing
                    raise err from None
                continue
            if status == "error":
                raise WorkerError(f"rank {rank} of {world_size} ({backend}) failed:\n{value}", rank)
            out[rank] = value
        for p in procs:
            p.join(30.0)
    finally:
        _stop(procs)
        results.close()
    return [out[r] for r in range(world_size)]
