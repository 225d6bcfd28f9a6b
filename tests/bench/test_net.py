"""Tests of helpers.bench.net: the loopback server echoes, sinks, and survives many clients."""

import pytest

from helpers.bench import net


def test_echo_and_sink_round_trip():
    with net.LoopbackServer() as srv, net.Client(srv) as c:
        for n in (0, 1, 1000, 70_000, 1 << 20):
            assert c.round_trip(n) == c.expected(n)
            assert c.round_trip_split(n) == c.expected(n)
        assert c.stream(3 << 20, chunk=1 << 16) == 3 << 20
        c.check_echo(10, c.round_trip(10))
        with pytest.raises(ValueError, match="different"):
            c.check_echo(10, b"x" * 10)
        assert len(set(c.expected(5000))) > 100          # not a constant payload
        assert 0 not in c.expected(5000)
        with pytest.raises(ValueError):
            c.stream(1 << 31)


def test_several_clients_share_one_server():
    with net.LoopbackServer(nodelay=False) as srv:
        clients = [net.Client(srv, nodelay=False) for _ in range(3)]
        try:
            for i, c in enumerate(clients):
                assert c.round_trip(100 + i) == c.expected(100 + i)
        finally:
            for c in clients:
                c.close()
