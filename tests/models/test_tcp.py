"""Tests of helpers.models.tcp: limits, an event-by-event simulation of Nagle and delayed ACK
as the oracle, the RFC and Linux numbers, and the errors."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.models import tcp

rtts = st.floats(min_value=1e-6, max_value=1.0, allow_nan=False)
acks = st.floats(min_value=0.0, max_value=0.5, allow_nan=False)


@given(rtts, acks)
def test_stall_only_with_nagle_and_a_delayed_ack(r, a):
    on = tcp.split_write_round_trip_s(r, delayed_ack_s=a, nagle=True)
    off = tcp.split_write_round_trip_s(r, delayed_ack_s=a, nagle=False)
    quick = tcp.split_write_round_trip_s(r, delayed_ack_s=a, nagle=True,
                                         receiver_delays_ack=False)
    assert off == r and quick == pytest.approx(2 * r)
    assert on == pytest.approx(2 * r + a) and on >= quick >= off


def simulate(rtt, delayed_ack, nagle, delays_ack):
    """Events on a link with one-way delay rtt/2. The client sends a header, then a body; the
    server replies once it has both; the server ACKs a lone segment after its timer unless it
    can piggyback the ACK on a reply (it cannot: it has no reply without the body)."""
    one_way = rtt / 2
    t_header_sent = 0.0
    t_header_arrives = t_header_sent + one_way
    if nagle:
        # The body waits for the header's ACK, which the server sends at once or on its timer.
        t_ack_sent = t_header_arrives + (delayed_ack if delays_ack else 0.0)
        t_body_sent = t_ack_sent + one_way
        t_body_arrives = t_body_sent + one_way
        t_reply_arrives = t_body_arrives + one_way
    else:
        t_body_arrives = t_header_arrives
        t_reply_arrives = t_body_arrives + one_way
    return t_reply_arrives


@pytest.mark.parametrize("rtt, ack", [(30e-6, 0.04), (1e-3, 0.2), (0.05, 0.04), (2e-4, 0.0)])
@pytest.mark.parametrize("nagle", [True, False])
@pytest.mark.parametrize("delays", [True, False])
def test_model_matches_the_event_simulation(rtt, ack, nagle, delays):
    model = tcp.split_write_round_trip_s(rtt, delayed_ack_s=ack, nagle=nagle,
                                         receiver_delays_ack=delays)
    assert model == pytest.approx(simulate(rtt, ack, nagle, delays), abs=1e-12)


def test_published_timeouts():
    # Linux: TCP_DELACK_MIN = HZ/25 = 40 ms; RFC 1122 4.2.3.2: the delay MUST be < 0.5 s.
    assert tcp.LINUX_DELACK_MIN_S == pytest.approx(1 / 25)   # HZ/25 ticks of 1/HZ s
    assert tcp.RFC1122_DELACK_LIMIT_S == 0.5
    t = tcp.split_write_round_trip_s(30e-6, delayed_ack_s=tcp.LINUX_DELACK_MIN_S, nagle=True)
    assert t == pytest.approx(0.04006)
    assert tcp.split_write_round_trip_s(30e-6, delayed_ack_s=0.5, nagle=True) < 0.5 + 1e-3


@pytest.mark.parametrize("kw, name", [
    (dict(round_trip_s=0.0), "round_trip_s"), (dict(round_trip_s=float("nan")), "round_trip_s"),
    (dict(delayed_ack_s=-0.01), "delayed_ack_s"),
])
def test_errors(kw, name):
    args = dict(round_trip_s=1e-4, delayed_ack_s=0.04) | kw
    r = args.pop("round_trip_s")
    with pytest.raises(ValueError, match=name):
        tcp.split_write_round_trip_s(r, nagle=True, **args)
