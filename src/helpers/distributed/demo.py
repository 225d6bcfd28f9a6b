"""Small functions to run under :func:`helpers.distributed.spawn` (they must live in a module
the child processes can import): a checked all-reduce, and ranks that fail or hang on purpose,
which the launcher's tests and the pages use; and where this process listens, which the
launcher's tests read while a store is up.

Library only: no page imports it.
"""

from __future__ import annotations

import os
import socket
import struct
import time

__all__ = ["all_reduce_check", "raise_on_rank", "sleep_on_rank", "listening_sockets",
           "store_listeners"]


def all_reduce_check(rank: int, world_size: int, n: int = 1024) -> dict:
    """Sum-all-reduce ``rank + 1 + arange(n)`` over the group and check it against the formula.

    Rank ``r`` contributes ``r + 1 + i`` at index ``i``, so the sum is
    ``p (p + 1) / 2 + p i``. Returns ``{"rank", "world_size", "backend", "correct", "first"}``.
    """
    import torch
    import torch.distributed as dist

    device = "cuda" if dist.get_backend() == "nccl" else "cpu"
    x = torch.arange(n, dtype=torch.float64 if device == "cpu" else torch.float32, device=device)
    x += rank + 1
    dist.all_reduce(x)
    i = torch.arange(n, dtype=x.dtype, device=device)
    want = world_size * (world_size + 1) / 2 + world_size * i
    return {"rank": rank, "world_size": world_size, "backend": dist.get_backend(),
            "correct": bool(torch.equal(x, want)), "first": float(x[0])}


def raise_on_rank(rank: int, world_size: int, bad_rank: int = 1) -> dict:
    """Rank ``bad_rank`` raises ``ArithmeticError``; the others wait at a barrier."""
    import torch.distributed as dist

    if rank == bad_rank:
        raise ArithmeticError(f"deliberate failure on rank {rank}")
    dist.barrier()
    return {"rank": rank}


def sleep_on_rank(rank: int, world_size: int, slow_rank: int = 1, sleep_s: float = 60.0) -> dict:
    """Rank ``slow_rank`` sleeps ``sleep_s`` seconds (a hang, for the timeout test)."""
    if rank == slow_rank:
        time.sleep(sleep_s)
    return {"rank": rank}


def _proc_address(hex_addr: str) -> tuple[str, int]:
    """``0100007F:1F90`` (a /proc/net/tcp{,6} local address) as ``("127.0.0.1", 8080)``.

    The kernel prints each 32-bit word of the address as a number in host byte order."""
    addr, port = hex_addr.split(":")
    raw = b"".join(struct.pack("=I", int(addr[i:i + 8], 16)) for i in range(0, len(addr), 8))
    family = socket.AF_INET if len(raw) == 4 else socket.AF_INET6
    return socket.inet_ntop(family, raw), int(port, 16)


def listening_sockets() -> list[tuple[str, int]] | None:
    """``(address, port)`` of every TCP socket this process listens on (Linux ``/proc``), or
    None where ``/proc/self/net/tcp`` is absent. A socket on every address reads ``0.0.0.0``
    or ``::``."""
    if not os.path.exists("/proc/self/net/tcp"):
        return None
    mine = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed meanwhile
            continue
        if link.startswith("socket:["):
            mine.add(link[8:-1])
    out = []
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        if not os.path.exists(table):
            continue
        with open(table) as f:
            next(f)
            for line in f:
                cols = line.split()
                if cols[3] == "0A" and cols[9] in mine:  # state LISTEN, inode ours
                    out.append(_proc_address(cols[1]))
    return sorted(out)


def store_listeners(rank: int, world_size: int) -> dict:
    """Run under :func:`helpers.distributed.spawn`: where this rank listens while the group
    (and so its store, hosted by rank 0 on ``MASTER_PORT``) is up. Returns ``{"rank",
    "store_port", "listening"}``, ``listening`` as :func:`listening_sockets`."""
    import torch.distributed as dist

    dist.barrier()  # every rank has joined: the store is up and in use
    return {"rank": rank, "store_port": int(os.environ["MASTER_PORT"]),
            "listening": listening_sockets()}
