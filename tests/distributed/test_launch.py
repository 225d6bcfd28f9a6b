"""helpers.distributed.spawn: real gloo process groups on this CPU."""

from __future__ import annotations

import socket

import pytest

from helpers.distributed import WorkerError, WorkerTimeout, free_port, loopback_store, spawn
from helpers.distributed.demo import (all_reduce_check, listening_sockets, raise_on_rank,
                                      sleep_on_rank, store_listeners)

linux_proc = pytest.mark.skipif(listening_sockets() is None,
                                reason="needs Linux /proc/self/net/tcp to read listening sockets")
WILDCARD = {"0.0.0.0", "::"}


def test_gloo_two_ranks_all_reduce_is_correct_and_in_rank_order():
    out = spawn(all_reduce_check, 2, "gloo", args=(257,), timeout_s=120)
    assert [o["rank"] for o in out] == [0, 1]
    assert all(o["correct"] and o["world_size"] == 2 and o["backend"] == "gloo" for o in out)
    assert out[0]["first"] == 3.0  # 1 + 2


def test_a_failing_rank_is_named_with_its_error():
    with pytest.raises(WorkerError) as info:
        spawn(raise_on_rank, 2, "gloo", kwargs={"bad_rank": 1}, timeout_s=60)
    assert info.value.rank == 1
    assert "rank 1 of 2" in str(info.value) and "deliberate failure on rank 1" in str(info.value)
    assert "ArithmeticError" in str(info.value)


def test_a_hanging_rank_times_out_and_is_named():
    with pytest.raises(WorkerTimeout) as info:
        spawn(sleep_on_rank, 2, "gloo", kwargs={"slow_rank": 1, "sleep_s": 120}, timeout_s=1,
              startup_s=10)
    assert 1 in info.value.missing and "gave no result within 1 s" in str(info.value)


@pytest.mark.parametrize("kwargs, match", [
    ({"world_size": 0}, "world_size"),
    ({"world_size": 2.0}, "world_size"),
    ({"world_size": 2, "backend": "mpi"}, "backend"),
    ({"world_size": 2, "timeout_s": 0}, "timeout_s"),
    ({"world_size": 2, "startup_s": -1}, "startup_s"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        spawn(all_reduce_check, **kwargs)


def test_nccl_without_enough_gpus_says_so():
    import torch

    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    with pytest.raises(ValueError, match="one GPU per rank"):
        spawn(all_reduce_check, n + 1, "nccl")


def test_free_port_is_a_port():
    assert 0 < free_port() < 65536


# -- the rendezvous store listens on the loopback address only (issue 15, item 7) ---------------

@linux_proc
def test_listening_sockets_sees_a_wildcard_and_a_loopback_listener():
    """The reader the next tests rely on can tell 0.0.0.0 from 127.0.0.1 (psutil agrees)."""
    psutil = pytest.importorskip("psutil")
    with socket.socket() as anywhere, socket.socket() as local:
        anywhere.bind(("0.0.0.0", 0))
        local.bind(("127.0.0.1", 0))
        anywhere.listen()
        local.listen()
        got = listening_sockets()
        want = [("0.0.0.0", anywhere.getsockname()[1]), ("127.0.0.1", local.getsockname()[1])]
        assert set(want) <= set(got)
        seen = {(c.laddr.ip, c.laddr.port) for c in psutil.Process().net_connections("tcp")
                if c.status == psutil.CONN_LISTEN}
        assert set(got) == seen


@linux_proc
def test_loopback_store_listens_on_127_0_0_1_only():
    port = free_port()
    store = loopback_store(0, 1, port, timeout_s=10)
    store.set("k", "v")
    assert store.get("k") == b"v"
    on_port = [addr for addr, p in listening_sockets() if p == port]
    assert on_port == ["127.0.0.1"]
    del store


@linux_proc
def test_a_spawned_jobs_store_listens_on_127_0_0_1_only():
    """While a two-rank gloo group is up, rank 0 hosts the store on 127.0.0.1 alone (torch's
    env:// store listened on '::', every address)."""
    out = spawn(store_listeners, 2, "gloo", timeout_s=60)
    port = out[0]["store_port"]
    assert [addr for addr, p in out[0]["listening"] if p == port] == ["127.0.0.1"]
    assert not any(p == port for _, p in out[1]["listening"])  # rank 1 is a client
    for o in out:
        assert not WILDCARD & {addr for addr, _ in o["listening"]}, o
