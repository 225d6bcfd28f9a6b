r"""Collective algorithms written out as point-to-point programs on ``torch.distributed`` ranks.

Each function below runs in every rank of an initialised process group (gloo on the CPU is
what the book uses) and builds its collective from ``isend``/``irecv`` pairs only, following
the schedules whose alpha-beta(-gamma) costs :mod:`helpers.models.collectives` states
(Thakur, Rabenseifner and Gropp 2005):

* all-reduce: :func:`ring_all_reduce`, :func:`recursive_doubling_all_reduce`,
  :func:`rabenseifner_all_reduce` (reduce-scatter by recursive halving, then all-gather by
  recursive doubling). On a rank count that is not a power of two the last two first fold the
  ``2r`` lowest ranks in pairs (``r = p - p'``, ``p'`` the largest power of two not above
  ``p``): each even rank of them sends its whole buffer to the odd rank above it and sits out;
  the result is sent back to it at the end (MPICH's handling);
* all-gather: :func:`ring_all_gather`, :func:`recursive_doubling_all_gather` (power of two
  only), :func:`bruck_all_gather` (any count);
* all-to-all: :func:`pairwise_all_to_all` and :func:`bruck_all_to_all` (any count).

Sizes follow nccl-tests: an all-reduce's buffer, an all-gather's *output*, an all-to-all's
whole send buffer. Every function returns a new tensor and leaves its input unchanged.

:func:`measure_rank` checks every algorithm exactly against a single-process reference
(integer-valued float32, so every order of summation gives the same bits) before it times
anything. The runner that sweeps rank counts and sizes and writes ``collective_algorithms.json``
is :mod:`helpers.labs.collectives_gloo_worker`.

Library only: no page imports it.
"""

from __future__ import annotations

import queue
import threading
from typing import NamedTuple

__all__ = ["ALGORITHMS", "ring_all_reduce", "recursive_doubling_all_reduce",
           "rabenseifner_all_reduce", "ring_all_gather", "recursive_doubling_all_gather",
           "bruck_all_gather", "pairwise_all_to_all", "bruck_all_to_all", "inputs", "reference",
           "allowed", "measure_rank", "sizes_bytes", "RANKS", "NAME", "run_in_threads",
           "Counts", "check_output"]

#: Name of the result file (``<NAME>.json``) and of the record inside it.
NAME = "collective_algorithms"
#: Rank counts measured: powers of two, then one count that is not.
RANKS = (2, 4, 8, 6)
FP32_BYTES = 4


_LOCAL = threading.local()


def _dist():
    """``torch.distributed``, or the in-process transport of :func:`run_in_threads`."""
    transport = getattr(_LOCAL, "transport", None)
    if transport is not None:
        return transport
    import torch.distributed as dist

    return dist


def _exchange(send, recv, peer: int) -> None:
    """Send ``send`` to ``peer`` and receive ``recv`` from it at once (both contiguous)."""
    dist = _dist()
    reqs = [dist.isend(send, peer), dist.irecv(recv, peer)]
    for r in reqs:
        r.wait()


def _shift(send, recv, to: int, frm: int) -> None:
    """Send ``send`` to ``to`` while receiving ``recv`` from ``frm``."""
    dist = _dist()
    reqs = [dist.isend(send, to), dist.irecv(recv, frm)]
    for r in reqs:
        r.wait()


def _bounds(n: int, parts: int) -> list[int]:
    """Element offsets of ``parts`` near-equal contiguous blocks of ``n`` elements."""
    q, rem = divmod(n, parts)
    out = [0]
    for i in range(parts):
        out.append(out[-1] + q + (1 if i < rem else 0))
    return out


def _pof2(p: int) -> int:
    return 1 << (p.bit_length() - 1)


# --- all-reduce -----------------------------------------------------------------------------

def ring_all_reduce(x, rank: int, p: int):
    """Ring all-reduce (sum): p-1 reduce-scatter steps, then p-1 all-gather steps."""
    import torch

    buf = x.clone()
    if p == 1:
        return buf
    b = _bounds(buf.numel(), p)
    right, left = (rank + 1) % p, (rank - 1) % p
    tmp = torch.empty(b[1] - b[0] + 1, dtype=buf.dtype)
    for s in range(p - 1):
        si, ri = (rank - s) % p, (rank - s - 1) % p
        recv = tmp[:b[ri + 1] - b[ri]]
        _shift(buf[b[si]:b[si + 1]], recv, right, left)
        buf[b[ri]:b[ri + 1]] += recv
    for s in range(p - 1):
        si, ri = (rank + 1 - s) % p, (rank - s) % p
        _shift(buf[b[si]:b[si + 1]], buf[b[ri]:b[ri + 1]], right, left)
    return buf


def _fold_in(buf, rank: int, p: int):
    """Non-power-of-two prologue: ranks below 2r pair up, even ones hand their buffer to the
    odd one above. Returns this rank's index among the p' active ranks, or -1 if it sits out."""
    import torch

    pof2 = _pof2(p)
    rem = p - pof2
    dist = _dist()
    if rank < 2 * rem:
        if rank % 2 == 0:
            dist.send(buf, rank + 1)
            return -1
        tmp = torch.empty_like(buf)
        dist.recv(tmp, rank - 1)
        buf += tmp
        return rank // 2
    return rank - rem


def _real(newrank: int, p: int) -> int:
    rem = p - _pof2(p)
    return newrank * 2 + 1 if newrank < rem else newrank + rem


def _fold_out(buf, rank: int, p: int) -> None:
    """Non-power-of-two epilogue: odd ranks below 2r send the result to the even rank below."""
    rem = p - _pof2(p)
    dist = _dist()
    if rank < 2 * rem:
        if rank % 2:
            dist.send(buf, rank - 1)
        else:
            dist.recv(buf, rank + 1)


def _folded(x, rank: int, p: int, body):
    """Copy ``x``; fold the extra ranks in (:func:`_fold_in`); run ``body(buf, newrank, p')``
    on the p' active ranks; send the result back to the folded ones (:func:`_fold_out`)."""
    buf = x.clone()
    if p == 1:
        return buf
    newrank = _fold_in(buf, rank, p)
    if newrank >= 0:
        body(buf, newrank, _pof2(p))
    _fold_out(buf, rank, p)
    return buf


def recursive_doubling_all_reduce(x, rank: int, p: int):
    """Recursive doubling all-reduce: lg p' steps, each exchanging the whole buffer."""
    import torch

    def body(buf, newrank, pof2):
        tmp = torch.empty_like(buf)
        mask = 1
        while mask < pof2:
            _exchange(buf, tmp, _real(newrank ^ mask, p))
            buf += tmp
            mask <<= 1
    return _folded(x, rank, p, body)


def rabenseifner_all_reduce(x, rank: int, p: int):
    """Rabenseifner all-reduce: reduce-scatter by recursive halving, all-gather by recursive
    doubling, both over the p' active ranks' blocks."""
    import torch

    def body(buf, newrank, pof2):
        b = _bounds(buf.numel(), pof2)
        lo, hi = 0, pof2  # blocks this rank is still responsible for
        mask = pof2 >> 1
        while mask:
            peer = newrank ^ mask
            mid = (lo + hi) // 2
            if newrank < peer:  # keep the lower half, send the upper
                keep, give = (lo, mid), (mid, hi)
            else:
                keep, give = (mid, hi), (lo, mid)
            recv = torch.empty(b[keep[1]] - b[keep[0]], dtype=buf.dtype)
            _exchange(buf[b[give[0]]:b[give[1]]], recv, _real(peer, p))
            buf[b[keep[0]]:b[keep[1]]] += recv
            lo, hi = keep
            mask >>= 1
        _doubling_gather(buf, b, newrank, pof2, lambda r: _real(r, p))
    return _folded(x, rank, p, body)


def _doubling_gather(buf, b, newrank: int, pof2: int, real) -> None:
    """All-gather by recursive doubling: block ``newrank`` of ``buf`` (offsets ``b``) is this
    rank's; after lg p' exchanges of doubling ranges every block is filled."""
    mask = 1
    while mask < pof2:
        base = newrank & ~(mask - 1)
        other = base ^ mask
        _exchange(buf[b[base]:b[base + mask]], buf[b[other]:b[other + mask]], real(newrank ^ mask))
        mask <<= 1


# --- all-gather -----------------------------------------------------------------------------

def ring_all_gather(x, rank: int, p: int):
    """Ring all-gather of equal blocks ``x``: p-1 steps of one block each."""
    import torch

    m = x.numel()
    out = torch.empty(m * p, dtype=x.dtype)
    out[rank * m:(rank + 1) * m] = x
    right, left = (rank + 1) % p, (rank - 1) % p
    for s in range(p - 1):
        si, ri = (rank - s) % p, (rank - s - 1) % p
        _shift(out[si * m:(si + 1) * m], out[ri * m:(ri + 1) * m], right, left)
    return out


def recursive_doubling_all_gather(x, rank: int, p: int):
    """Recursive doubling all-gather (``p`` a power of two): lg p steps, doubling blocks."""
    import torch

    if p & (p - 1):
        raise ValueError(f"recursive doubling all-gather needs a power-of-two rank count, got {p}")
    m = x.numel()
    out = torch.empty(m * p, dtype=x.dtype)
    out[rank * m:(rank + 1) * m] = x
    _doubling_gather(out, [i * m for i in range(p + 1)], rank, p, lambda r: r)
    return out


def bruck_all_gather(x, rank: int, p: int):
    """Bruck all-gather (any ``p``): ceil(lg p) steps; step k sends min(2^k, p-2^k) blocks to
    rank - 2^k, then a local rotation puts the blocks in rank order."""
    import torch

    m = x.numel()
    tmp = torch.empty(m * p, dtype=x.dtype)
    tmp[:m] = x  # block j of tmp holds rank (rank + j) mod p's data
    have, k = 1, 1
    while k < p:
        cnt = min(k, p - k)
        _shift(tmp[:cnt * m], tmp[have * m:(have + cnt) * m], (rank - k) % p, (rank + k) % p)
        have += cnt
        k <<= 1
    return torch.roll(tmp, rank * m)


# --- all-to-all -----------------------------------------------------------------------------

def pairwise_all_to_all(x, rank: int, p: int):
    """Pairwise-exchange all-to-all: p-1 steps, step s sends block (rank+s) to rank+s and
    receives block rank from rank-s. ``x`` holds ``p`` equal blocks, block j for rank j."""
    import torch

    m = x.numel() // p
    out = torch.empty_like(x)
    out[rank * m:(rank + 1) * m] = x[rank * m:(rank + 1) * m]
    for s in range(1, p):
        to, frm = (rank + s) % p, (rank - s) % p
        _shift(x[to * m:(to + 1) * m], out[frm * m:(frm + 1) * m], to, frm)
    return out


def bruck_all_to_all(x, rank: int, p: int):
    """Bruck all-to-all (any ``p``): rotate the blocks up by ``rank``; in step k (distance
    2^k) send every block whose index has bit k set to rank + 2^k and receive the same set from
    rank - 2^k; finally rotate and reverse so block j came from rank j."""
    import torch

    m = x.numel() // p
    blocks = x.view(p, m)
    tmp = torch.roll(blocks, -rank, dims=0).clone()  # tmp[i] = block (rank+i) mod p
    k = 1
    while k < p:
        idx = torch.tensor([i for i in range(p) if i & k])
        send = tmp[idx].contiguous()
        recv = torch.empty_like(send)
        _shift(send, recv, (rank + k) % p, (rank - k) % p)
        tmp[idx] = recv
        k <<= 1
    # tmp[i] now holds the block rank - i sent to this rank
    src = [(rank - i) % p for i in range(p)]
    out = torch.empty_like(blocks)
    out[src] = tmp
    return out.reshape(-1)


#: name -> (collective, function, rank counts it runs on: "any" or "pof2").
ALGORITHMS = {
    "ring_all_reduce": ("all_reduce", ring_all_reduce, "any"),
    "recursive_doubling_all_reduce": ("all_reduce", recursive_doubling_all_reduce, "any"),
    "rabenseifner_all_reduce": ("all_reduce", rabenseifner_all_reduce, "any"),
    "ring_all_gather": ("all_gather", ring_all_gather, "any"),
    "recursive_doubling_all_gather": ("all_gather", recursive_doubling_all_gather, "pof2"),
    "bruck_all_gather": ("all_gather", bruck_all_gather, "any"),
    "pairwise_all_to_all": ("all_to_all", pairwise_all_to_all, "any"),
    "bruck_all_to_all": ("all_to_all", bruck_all_to_all, "any"),
}


def allowed(name: str, p: int) -> bool:
    """Whether algorithm ``name`` runs on ``p`` ranks."""
    if name not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {tuple(ALGORITHMS)}, got {name!r}")
    return ALGORITHMS[name][2] == "any" or (p & (p - 1)) == 0


# --- an in-process transport that counts: the programs on threads -------------------------

class Counts(NamedTuple):
    """What :func:`run_in_threads` counted on the busiest rank: communication steps (a send,
    a receive, or a send and a receive waited on together) and the bytes of those steps
    (each step: the larger of the bytes it sends and receives)."""

    steps: int
    step_bytes: float
    per_rank: tuple  # per rank: tuple of (bytes sent, bytes received) per step


class _Done:
    def wait(self):
        return None


class _Recv:
    def __init__(self, transport, tensor, peer):
        self.transport, self.tensor, self.peer = transport, tensor, peer

    def wait(self):
        t = self.transport
        data = t.box(self.peer, t.rank).get(timeout=30)
        if data.shape != self.tensor.shape:
            raise AssertionError(f"rank {t.rank} expected {tuple(self.tensor.shape)} from "
                                 f"{self.peer}, got {tuple(data.shape)}")
        self.tensor.copy_(data)
        t.close_step(data.numel() * data.element_size())


class _Transport:
    """The four calls the programs make (``isend``, ``irecv``, ``send``, ``recv``), between
    threads: one FIFO queue per ordered pair, as gloo matches messages of one tag in order."""

    def __init__(self, rank: int, boxes: dict, lock):
        self.rank, self._boxes, self._lock = rank, boxes, lock
        self.steps: list[tuple[int, int]] = []
        self._pending = 0

    def box(self, src: int, dst: int):
        with self._lock:
            return self._boxes.setdefault((src, dst), queue.Queue())

    def close_step(self, received: int) -> None:
        self.steps.append((self._pending, received))
        self._pending = 0

    def isend(self, tensor, peer: int):
        self.box(self.rank, peer).put(tensor.detach().clone())
        self._pending += tensor.numel() * tensor.element_size()
        return _Done()

    def irecv(self, tensor, peer: int):
        return _Recv(self, tensor, peer)

    def send(self, tensor, peer: int):
        self.isend(tensor, peer)
        self.close_step(0)

    def recv(self, tensor, peer: int):
        _Recv(self, tensor, peer).wait()


def run_in_threads(name: str, p: int, n: int, seed: int = 7):
    """Run algorithm ``name`` on ``p`` threads standing in for ranks, ``n`` float32 elements
    in nccl-tests' size, over an in-process transport that counts every step. Returns the
    ``p`` outputs (rank order) and the :class:`Counts`; raises AssertionError if a rank's
    output differs from :func:`reference`. Used by the tests as the oracle of the cost models
    and by the page to show the counts."""
    if name not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {tuple(ALGORITHMS)}, got {name!r}")
    coll, fn, _ = ALGORITHMS[name]
    if not allowed(name, p):
        raise ValueError(f"{name} needs a power-of-two rank count, got {p}")
    import torch

    boxes, lock = {}, threading.Lock()
    transports = [_Transport(r, boxes, lock) for r in range(p)]
    outs, errors = [None] * p, []

    def body(r):
        _LOCAL.transport = transports[r]
        try:
            outs[r] = fn(inputs(coll, n, r, p, seed), r, p)
        except BaseException as exc:  # reported below, in the caller's thread
            errors.append((r, exc))
        finally:
            _LOCAL.transport = None

    threads = [threading.Thread(target=body, args=(r,), daemon=True) for r in range(p)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    if errors:
        r, exc = errors[0]
        raise AssertionError(f"{name} on rank {r} of {p}: {type(exc).__name__}: {exc}") from exc
    for r in range(p):
        if outs[r] is None:
            raise AssertionError(f"{name} on {p} ranks: rank {r} gave no output")
        check_output(name, inputs(coll, n, r, p, seed), outs[r], n, r, p, seed)
    per_rank = tuple(tuple(t.steps) for t in transports)
    steps = max(len(s) for s in per_rank)
    step_bytes = max(sum(max(a, b) for a, b in s) for s in per_rank)
    return outs, Counts(steps, float(step_bytes), per_rank)


# --- inputs and the single-process reference ------------------------------------------------

def inputs(collective: str, n: int, rank: int, p: int, seed: int):
    """Rank ``rank``'s input for ``collective`` with ``n`` elements in nccl-tests' size
    (all-gather: its n/p-element block). Small integers as float32, never all zero."""
    import torch

    g = torch.Generator().manual_seed(seed * 1009 + rank)
    if collective == "all_gather":
        n //= p
    return torch.randint(1, 64, (n,), generator=g, dtype=torch.float32)


def reference(collective: str, n: int, rank: int, p: int, seed: int):
    """What ``rank`` must hold after ``collective``, computed in one process from every rank's
    input (:func:`inputs`)."""
    import torch

    xs = [inputs(collective, n, r, p, seed) for r in range(p)]
    if collective == "all_reduce":
        out = xs[0].clone()
        for x in xs[1:]:
            out += x
        return out
    if collective == "all_gather":
        return torch.cat(xs)
    if collective == "all_to_all":
        m = n // p
        return torch.cat([x[rank * m:(rank + 1) * m] for x in xs])
    raise ValueError(f"collective must be all_reduce, all_gather or all_to_all, got {collective!r}")


def check_output(name: str, x, got, n: int, rank: int, p: int, seed: int) -> None:
    """Raise AssertionError unless ``got`` equals :func:`reference` exactly (same shape, same
    bits) and the input ``x`` is unchanged: the check every rank runs before timing."""
    import torch

    coll = ALGORITHMS[name][0]
    want = reference(coll, n, rank, p, seed)
    if got.shape != want.shape or not torch.equal(got, want):
        bad = int((got != want).sum()) if got.shape == want.shape else got.numel()
        raise AssertionError(f"{name} of {n * FP32_BYTES} bytes on rank {rank} of {p}: {bad} "
                             f"of {want.numel()} elements differ from the reference")
    if not torch.equal(x, inputs(coll, n, rank, p, seed)):
        raise AssertionError(f"{name} changed its input on rank {rank} of {p}")


def sizes_bytes() -> list[int]:
    """Message sizes (nccl-tests convention): 384 B to 6 MiB full, 384 B to 24 KiB small.

    Multiples of 4 bytes x 24 elements, so every block splits evenly on 2, 4, 6 and 8 ranks."""
    from helpers.bench.sizes import size_tier

    ks = (7, 10, 13, 16, 19, 21) if size_tier() == "full" else (7, 10, 13)
    return [3 << k for k in ks]


def _probe(rank: int, p: int, size: int, reps: int, seed: int) -> dict:
    """Pieces of the programs at ``size`` bytes, each timed alone (median s) by ranks paired
    as (0, 1), (2, 3), ...: one exchange of half the buffer and one of the whole buffer, each
    into a receive buffer allocated once (``*_reused``) or allocated anew for every call as
    the programs do (``*_fresh``); locally, allocating and writing half the buffer, a clone of
    it, and ``torch.roll`` of it. A rank without a partner (odd ``p``) times nothing."""
    import torch

    from helpers.bench import bench

    n = size // FP32_BYTES
    x = inputs("all_reduce", n, rank, p, seed)
    peer = rank ^ 1
    if peer >= p:
        return {}
    pre = {k: torch.empty(k) for k in (n // 2, n)}
    cases = {
        "exchange_half_reused": lambda: _exchange(x[:n // 2], pre[n // 2], peer),
        "exchange_half_fresh": lambda: _exchange(x[:n // 2], torch.empty(n // 2), peer),
        "exchange_full_reused": lambda: _exchange(x, pre[n], peer),
        "exchange_full_fresh": lambda: _exchange(x, torch.empty(n), peer),
        "alloc_write_half": lambda: torch.empty(n // 2).fill_(1.0),
        "clone": x.clone,
        "roll": lambda: torch.roll(x, n // 2),
    }
    out = {"message_bytes": size}
    for name, fn in cases.items():
        fn()
        r = bench(fn, device="cpu", name=f"probe_{name}", warmup_s=0.0, budget_s=1.0,
                  min_reps=reps, max_reps=reps, env=False)
        out[f"{name}_s"] = r.median_s
    return out


def measure_rank(rank: int, p: int, sizes: list[int], names=None, warmup: int = 2,
                 reps: int = 11, seed: int = 7, gamma_reps: int = 11, probe: bool = True) -> dict:
    """In every rank: for each algorithm and size, check the result exactly against
    :func:`reference` (raises AssertionError in the rank if it differs), then time ``reps``
    calls with :func:`helpers.bench.bench`. Also times the local reduction (``a += b``) per
    byte at each size, the gamma of the cost model, and a copy (``clone``) of each size, which
    the programs also do and the models leave out, while all ranks do the same; with
    ``probe``, the pieces the programs are made of at the largest size (:func:`_probe`).
    Returns this rank's medians, with rank 0's full summaries."""
    from helpers.bench import bench

    dist = _dist()
    names = [nm for nm in (names or ALGORITHMS) if allowed(nm, p)]
    out: dict = {"rank": rank, "ranks": p, "algorithms": {}, "gamma": [], "copy": []}
    for nm in names:
        coll, fn, _ = ALGORITHMS[nm]
        entries = []
        for size in sizes:
            n = size // FP32_BYTES
            if n % p:
                raise ValueError(f"size {size} bytes does not split into {p} float32 blocks")
            x = inputs(coll, n, rank, p, seed + size)
            check_output(nm, x, fn(x, rank, p), n, rank, p, seed + size)
            dist.barrier()
            for _ in range(warmup):
                fn(x, rank, p)
            r = bench(lambda: fn(x, rank, p), device="cpu", name=f"{nm}_{p}_{size}",
                      warmup_s=0.0, budget_s=1.0, min_reps=reps, max_reps=reps, env=False)
            e = {"message_bytes": size, "median_s": r.median_s, "checked": True}
            if rank == 0:
                e.update(p20_s=r.p20_s, p80_s=r.p80_s, spread=r.spread, n_reps=r.n_reps,
                         samples_s=list(r.samples_s))
            entries.append(e)
        out["algorithms"][nm] = entries
    dist.barrier()
    if probe and sizes:
        out["probe"] = _probe(rank, p, max(sizes), gamma_reps, seed)
    dist.barrier()
    for size in sizes:  # gamma: the local reduction a += b of `size` bytes, per byte
        a = inputs("all_reduce", size // FP32_BYTES, rank, p, seed)
        bb = inputs("all_reduce", size // FP32_BYTES, rank + 1, p, seed)

        def add():
            a.add_(bb)
            a.sub_(bb)
        r = bench(add, device="cpu", name=f"gamma_{size}", warmup_s=0.0, budget_s=1.0,
                  min_reps=gamma_reps, max_reps=gamma_reps, env=False)
        out["gamma"].append({"message_bytes": size, "median_s": r.median_s / 2,
                             "s_per_byte": r.median_s / 2 / size})
        r = bench(a.clone, device="cpu", name=f"copy_{size}", warmup_s=0.0, budget_s=1.0,
                  min_reps=gamma_reps, max_reps=gamma_reps, env=False)
        out["copy"].append({"message_bytes": size, "median_s": r.median_s})
    return out


