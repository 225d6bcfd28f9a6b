"""Small functions to run under :func:`helpers.distributed.spawn` (they must live in a module
the child processes can import): a checked all-reduce, and ranks that fail or hang on purpose,
which the launcher's tests and the pages use."""

from __future__ import annotations

import time

__all__ = ["all_reduce_check", "raise_on_rank", "sleep_on_rank"]


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
