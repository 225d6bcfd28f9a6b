"""Paged KV cache: a pool of fixed-size blocks, a free list, block tables and shared prefixes.

The idea of PagedAttention (Kwon et al., 2023): instead of reserving one contiguous region of
``max_seq_len`` slots per sequence, the KV cache is cut into *blocks* of ``block_size`` token
slots. A sequence owns a *block table*, the list of its physical blocks in logical order; token
``p`` of the sequence lives in slot ``table[p // block_size] * block_size + p % block_size`` of
the pool. Blocks are handed out on demand from a free list, so at most ``block_size - 1`` slots
per sequence are unused, and a block full of a shared prompt prefix can appear in the tables of
many sequences at once (its reference count says how many; it is read-only once full, so no
copy-on-write is needed).

* :class:`BlockAllocator` is the bookkeeping alone (free list, reference counts, prefix cache);
  the simulator (:mod:`helpers.sim.serving`) uses it without any tensor;
* :class:`KVPool` adds the storage: per layer one preallocated tensor of
  ``num_blocks * block_size`` slots for the keys and one for the values;
* :class:`BlockTable` maps a sequence's positions to slots.

>>> a = BlockAllocator(num_blocks=4, block_size=16)
>>> t = BlockTable(16)
>>> a.grow(t, 20)            # 20 tokens need two blocks
True
>>> t.blocks, a.num_free, t.slot(17)
([0, 1], 2, 17)
>>> a.release(t); a.num_free
4

Library only: no page imports it.
"""

from __future__ import annotations

from ..models import kv_paging
from ..models._checks import positive_int

__all__ = ["BlockTable", "BlockAllocator", "KVPool", "prefix_hashes", "plan_step",
           "grow_or_preempt"]


class BlockTable:
    """A sequence's physical blocks in logical order, and how many tokens it holds."""

    def __init__(self, block_size: int):
        self.block_size = positive_int("block_size", block_size)
        self.blocks: list[int] = []
        self.num_tokens = 0

    @property
    def capacity(self) -> int:
        """Token slots the table's blocks hold."""
        return len(self.blocks) * self.block_size

    def slot(self, pos: int) -> int:
        """The pool slot of logical position ``pos`` (``0 <= pos < capacity``)."""
        if not 0 <= pos < self.capacity:
            raise ValueError(f"position {pos} is outside the table's {self.capacity} slots")
        return self.blocks[pos // self.block_size] * self.block_size + pos % self.block_size

    def slots(self, start: int, stop: int) -> list[int]:
        """Slots of positions ``start .. stop - 1``."""
        if not 0 <= start <= stop <= self.capacity:
            raise ValueError(f"positions {start}..{stop - 1} are outside the table's "
                             f"{self.capacity} slots")
        bs = self.block_size
        first = start // bs
        flat = [b * bs + o for b in self.blocks[first:-(-stop // bs)] for o in range(bs)]
        return flat[start - first * bs:stop - first * bs]


def prefix_hashes(tokens, block_size: int) -> list[int]:
    """One key per *full* block of ``tokens``: the hash of all tokens up to the block's end.

    Chaining makes a block's key depend on everything before it, so two sequences share block
    ``i`` only if their first ``(i + 1) * block_size`` tokens are equal (as in vLLM's prefix
    caching)."""
    toks = [int(t) for t in tokens]
    out, h = [], 0
    for i in range(len(toks) // block_size):
        h = hash((h, tuple(toks[i * block_size:(i + 1) * block_size])))
        out.append(h)
    return out


class BlockAllocator:
    """Free list and reference counts of ``num_blocks`` blocks of ``block_size`` slots.

    With ``prefix_caching`` it also remembers full prompt blocks by :func:`prefix_hashes` key:
    the cache holds one reference of its own to each remembered block, so a shared prefix
    outlives the requests that wrote it; such blocks are evicted (oldest first) only when the
    free list runs dry.
    """

    def __init__(self, num_blocks: int, block_size: int, *, prefix_caching: bool = False):
        self.num_blocks = positive_int("num_blocks", num_blocks)
        self.block_size = positive_int("block_size", block_size)
        self.prefix_caching = bool(prefix_caching)
        self.free: list[int] = list(range(num_blocks - 1, -1, -1))  # pop() gives block 0 first
        self.refs = [0] * num_blocks
        self.cached: dict[int, int] = {}  # prefix key -> block (insertion order = age)
        self._cached_blocks: set[int] = set()
        self._cache_only = 0  # cached blocks that no sequence references
        self.peak_used = 0

    # -- counts -------------------------------------------------------------------------------
    @property
    def num_free(self) -> int:
        """Blocks on the free list."""
        return len(self.free)

    @property
    def num_used(self) -> int:
        """Blocks referenced by a sequence or the prefix cache."""
        return self.num_blocks - len(self.free)

    def evictable(self) -> int:
        """Cached blocks that no sequence references (they can be reclaimed)."""
        return self._cache_only

    @property
    def num_in_use(self) -> int:
        """Blocks referenced by at least one sequence (the cache's idle blocks excluded)."""
        return self.num_used - self._cache_only

    def can_allocate(self, n: int) -> bool:
        """Whether ``n`` more blocks can be had (free or evictable)."""
        return n <= self.num_free + (self.evictable() if self.prefix_caching else 0)

    # -- allocation ---------------------------------------------------------------------------
    def _evict_one(self) -> bool:
        for key, b in self.cached.items():
            if self.refs[b] == 1:
                del self.cached[key]
                self._cached_blocks.discard(b)
                self._cache_only -= 1
                self._decref(b)
                return True
        return False

    def _take(self) -> int:
        if not self.free and not (self.prefix_caching and self._evict_one()):
            raise MemoryError("no free KV block")
        b = self.free.pop()
        self.refs[b] = 1
        self.peak_used = max(self.peak_used, self.num_used)
        return b

    def _decref(self, b: int) -> None:
        self.refs[b] -= 1
        if self.refs[b] < 0:
            raise RuntimeError(f"block {b} released more often than taken")
        if self.refs[b] == 1 and b in self._cached_blocks:
            self._cache_only += 1
        if self.refs[b] == 0:
            self.free.append(b)

    def grow(self, table: BlockTable, num_tokens: int) -> bool:
        """Give ``table`` enough blocks for ``num_tokens`` tokens; False (and no change) if the
        pool cannot supply them."""
        need = kv_paging.blocks_needed(num_tokens, self.block_size) - len(table.blocks)
        if need > 0:
            if not self.can_allocate(need):
                return False
            table.blocks.extend(self._take() for _ in range(need))
        table.num_tokens = max(table.num_tokens, num_tokens)
        return True

    def release(self, table: BlockTable) -> None:
        """Drop the sequence's references; blocks nobody else holds return to the free list."""
        for b in table.blocks:
            self._decref(b)
        table.blocks, table.num_tokens = [], 0

    # -- prefix sharing -----------------------------------------------------------------------
    def match_prefix(self, table: BlockTable, tokens) -> int:
        """Put the cached blocks of ``tokens``' longest cached prefix into the (empty) table;
        return how many tokens they hold. At least one token is always left to compute (the
        last prompt token's logits are needed)."""
        if not self.prefix_caching or table.blocks:
            return 0
        keys = prefix_hashes(list(tokens)[:max(len(tokens) - 1, 0)], self.block_size)
        for key in keys:
            b = self.cached.get(key)
            if b is None:
                break
            if self.refs[b] == 1:
                self._cache_only -= 1
            self.refs[b] += 1
            table.blocks.append(b)
        table.num_tokens = len(table.blocks) * self.block_size
        return table.num_tokens

    def register_prefix(self, table: BlockTable, tokens, num_computed: int) -> None:
        """Remember the table's full blocks among the first ``num_computed`` of ``tokens``."""
        if not self.prefix_caching:
            return
        full = min(num_computed, len(tokens)) // self.block_size
        for i, key in enumerate(prefix_hashes(list(tokens)[:full * self.block_size],
                                              self.block_size)):
            if key not in self.cached:
                b = table.blocks[i]
                self.cached[key] = b
                self._cached_blocks.add(b)
                self.refs[b] += 1


class KVPool:
    """Key and value storage for every layer: ``num_blocks * block_size`` slots each.

    ``k[layer]`` and ``v[layer]`` have shape ``(num_blocks * block_size, n_kv_heads,
    head_dim)``; a slot index from :class:`BlockTable` addresses one token's row.
    """

    def __init__(self, cfg, *, num_blocks: int, block_size: int, dtype=None, device=None):
        import torch

        dtype = dtype or torch.float32
        n = positive_int("num_blocks", num_blocks) * positive_int("block_size", block_size)
        shape = (n, cfg.n_kv_heads, cfg.head_dim)
        self.k = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(cfg.n_layers)]
        self.v = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(cfg.n_layers)]
        self.num_blocks, self.block_size = num_blocks, block_size

    @property
    def nbytes(self) -> int:
        """Bytes of the whole pool (keys and values of every layer)."""
        return sum(t.nbytes for t in self.k) + sum(t.nbytes for t in self.v)


def plan_step(running, token_budget: int) -> list:
    """One continuous-batching iteration's work, shared by the engine and its simulator:
    every decoding sequence gets one token, then sequences still in prefill get chunks of
    their prompt (``len(s.prompt) - s.num_computed`` tokens at most) until ``token_budget``
    tokens are planned. Returns ``[(sequence, n_tokens), ...]`` in that order."""
    budget, work = token_budget, []
    for s in [s for s in running if not s.in_prefill]:
        work.append((s, 1))
        budget -= 1
    for s in [s for s in running if s.in_prefill]:
        if budget <= 0:
            break
        n = min(len(s.prompt) - s.num_computed, budget)
        work.append((s, n))
        budget -= n
    return work


def grow_or_preempt(work, running: list, waiting: list, alloc, reset) -> list:
    """Give each planned sequence the blocks for its tokens, preempting the youngest running
    sequence (the last of ``running``) until they fit; shared by the engine and its simulator.

    ``work`` is :func:`plan_step`'s ``[(sequence, n_tokens), ...]``; each sequence's table is
    grown to ``num_computed + n_tokens`` tokens with ``alloc.grow``. While that fails, the
    youngest running sequence is the victim: it leaves ``running``, its blocks are released,
    its table and ``num_computed`` are cleared, its ``preemptions`` count goes up, ``reset``
    is called on it once (the caller clears what it had emitted, so it is recomputed from
    scratch) and it goes back to the head of ``waiting``. A victim that had already got its
    blocks this step is dropped from the result; the sequence being grown may be its own
    victim (when it is the youngest left).

    Returns the ``[(sequence, n_tokens), ...]`` of ``work`` still running, in order: all of
    ``work`` when nothing was preempted, and ``[]`` when not even the oldest sequence alone
    could be given its blocks (then every sequence of ``work`` is back in ``waiting``).
    """
    ready = []
    for s, n in work:
        while s in running and not alloc.grow(s.table, s.num_computed + n):
            victim = running[-1]
            running.remove(victim)
            alloc.release(victim.table)
            victim.table, victim.num_computed = None, 0
            reset(victim)
            victim.preemptions += 1
            waiting.insert(0, victim)
            ready = [(r, m) for r, m in ready if r is not victim]
        if s in running:
            ready.append((s, n))
    return ready
