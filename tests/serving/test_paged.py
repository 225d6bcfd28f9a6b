"""The block allocator: free list, block tables, reference counts and prefix sharing."""

from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.serving.paged import (BlockAllocator, BlockTable, KVPool, grow_or_preempt,
                                   prefix_hashes)
from helpers.nn.tinylm import BOOK_LM
from helpers.models.transformer import kv_cache_bytes


def test_grow_release_and_slots():
    a = BlockAllocator(3, 4)
    t = BlockTable(4)
    assert a.grow(t, 5) and t.blocks == [0, 1] and a.num_free == 1
    assert t.slots(3, 6) == [3, 4, 5]
    assert not a.grow(t, 13) and t.blocks == [0, 1]  # 4 blocks needed, 3 exist: no change
    a.release(t)
    assert a.num_free == 3 and t.blocks == []
    with pytest.raises(ValueError):
        t.slot(0)


def test_shared_prefix_blocks_are_reference_counted():
    a = BlockAllocator(8, 4, prefix_caching=True)
    toks = list(range(10))
    t1 = BlockTable(4)
    assert a.match_prefix(t1, toks) == 0
    a.grow(t1, 10)
    a.register_prefix(t1, toks, 10)          # two full blocks remembered
    t2 = BlockTable(4)
    assert a.match_prefix(t2, toks[:9] + [99]) == 8
    assert t2.blocks == t1.blocks[:2] and a.refs[t1.blocks[0]] == 3  # two tables + the cache
    a.release(t1)
    a.release(t2)
    assert a.num_used == 2 and a.evictable() == 2  # only the cache holds them now
    assert a.num_in_use == 0
    t3 = BlockTable(4)
    assert a.grow(t3, 32)                    # needs all 8: the cached blocks are evicted
    assert a.num_free == 0 and not a.cached


def test_a_prefix_never_covers_the_last_prompt_token():
    a = BlockAllocator(8, 4, prefix_caching=True)
    t = BlockTable(4)
    a.grow(t, 8)
    a.register_prefix(t, list(range(8)), 8)
    assert a.match_prefix(BlockTable(4), list(range(8))) == 4  # one token left to compute
    assert prefix_hashes([1, 2, 3], 4) == []


def test_pool_bytes_match_the_kv_cache_model():
    pool = KVPool(BOOK_LM, num_blocks=5, block_size=16)
    c = BOOK_LM
    assert pool.nbytes == kv_cache_bytes(batch=1, seq_len=80, n_layers=c.n_layers,
                                         n_kv_heads=c.n_kv_heads, head_dim=c.head_dim,
                                         bytes_per_element=4)


def test_slots_of_a_range_equal_slot_by_slot():
    t = BlockTable(4)
    t.blocks = [5, 1, 6]
    for a in range(13):
        for b in range(a, 13):
            assert t.slots(a, b) == [t.slot(p) for p in range(a, b)]
    with pytest.raises(ValueError):
        t.slots(0, 13)


def test_the_evictable_count_matches_a_recount():
    import random

    rng = random.Random(0)
    a = BlockAllocator(12, 4, prefix_caching=True)
    live = []
    for step in range(300):
        if live and rng.random() < 0.4:
            a.release(live.pop(rng.randrange(len(live))))
        else:
            toks = [rng.randrange(2)] * 8 + [rng.randrange(100) for _ in range(rng.randrange(1, 9))]
            t = BlockTable(4)
            done = a.match_prefix(t, toks)
            if a.grow(t, len(toks)):
                a.register_prefix(t, toks, len(toks))
                live.append(t)
            else:
                a.release(t)
            assert done <= len(toks) - 1
        recount = sum(1 for b in a.cached.values() if a.refs[b] == 1)
        assert a.evictable() == recount
        assert a.num_in_use == len({b for t in live for b in t.blocks})


@dataclass(eq=False)  # identity, as the engine's sequences: `in running` must not match a twin
class _Seq:
    name: str
    num_computed: int = 0
    table: BlockTable | None = field(default=None)
    preemptions: int = 0


def _running(alloc, tokens_by_name):
    """Sequences holding ``tokens`` computed tokens each, admitted in the order given."""
    out = []
    for name, tokens in tokens_by_name:
        s = _Seq(name, tokens, BlockTable(alloc.block_size))
        assert alloc.grow(s.table, tokens)
        out.append(s)
    return out


def test_grow_or_preempt_changes_nothing_when_all_fit():
    a = BlockAllocator(4, 4)
    running = _running(a, [("a", 3), ("b", 3)])
    work = [(running[0], 1), (running[1], 2)]
    reset = []
    assert grow_or_preempt(work, running, [], a, reset.append) == work
    assert reset == [] and [s.table.num_tokens for s in running] == [4, 5]
    assert a.num_free == 1


def test_grow_or_preempt_takes_the_youngest_victims_first():
    a = BlockAllocator(4, 4)
    old, mid, young = running = _running(a, [("old", 4), ("mid", 4), ("young", 4)])
    late = _Seq("late")
    waiting = [late]
    reset = []
    # the oldest needs 3 more blocks: one is free, the youngest then the middle one must go
    ready = grow_or_preempt([(old, 9)], running, waiting, a, reset.append)
    assert ready == [(old, 9)] and running == [old]
    assert reset == [young, mid]                       # once per victim, youngest first
    assert waiting == [mid, young, late]               # back at the head, oldest first
    for v in (mid, young):
        assert v.table is None and v.num_computed == 0 and v.preemptions == 1
    assert old.preemptions == 0 and len(old.table.blocks) == 4 and a.num_free == 0


def test_grow_or_preempt_drops_a_victim_that_already_had_its_blocks():
    a = BlockAllocator(3, 4)
    old, young = running = _running(a, [("old", 4), ("young", 4)])
    # the young decode is planned first and fits; the old one's chunk then needs its block
    ready = grow_or_preempt([(young, 1), (old, 8)], running, [], a, lambda s: None)
    assert ready == [(old, 8)] and running == [old] and young.preemptions == 1
    assert len(old.table.blocks) == 3 and a.num_free == 0


def test_grow_or_preempt_returns_nothing_when_nothing_can_make_room():
    a = BlockAllocator(2, 4)
    (s,) = running = _running(a, [("only", 4)])
    waiting, reset = [], []
    # the sequence alone needs more than the pool: it is its own (only) victim
    assert grow_or_preempt([(s, 8)], running, waiting, a, reset.append) == []
    assert running == [] and waiting == [s] and reset == [s] and s.preemptions == 1
    assert a.num_free == 2 and s.table is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 12), min_size=1, max_size=6),
       st.lists(st.integers(0, 12), min_size=1, max_size=6), st.randoms(use_true_random=False))
def test_grow_or_preempt_keeps_the_books(held, extra, rng):
    a = BlockAllocator(8, 4)
    running = []
    for i, n in enumerate(held):  # admit while the pool lasts
        t = BlockTable(4)
        if not a.grow(t, n):
            break
        running.append(_Seq(str(i), n, t))
    admitted = list(running)
    work = [(s, m) for s, m in zip(admitted, extra)]
    rng.shuffle(work)
    waiting, reset = [], []
    ready = grow_or_preempt(work, running, waiting, a, reset.append)
    # every sequence is either still running or back in waiting, never both
    assert sorted(running + waiting, key=admitted.index) == admitted
    assert not set(map(id, running)) & set(map(id, waiting))
    # victims are the youngest, each reset once, and their blocks are back in the pool
    assert running == admitted[:len(running)] and reset == admitted[len(running):][::-1]
    assert all(v.preemptions == 1 and v.table is None for v in waiting)
    assert a.num_used == len({b for s in running for b in s.table.blocks})
    # what is ready keeps the order of the work, and each table now holds its tokens
    assert ready == [(s, m) for s, m in work if s in running]
    assert all(s.table.capacity >= s.num_computed + m for s, m in ready)
