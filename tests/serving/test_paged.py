"""The block allocator: free list, block tables, reference counts and prefix sharing."""

import pytest

from helpers.serving.paged import BlockAllocator, BlockTable, KVPool, prefix_hashes
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
