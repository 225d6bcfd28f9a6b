r"""What Nagle's algorithm and delayed acknowledgements do to a small request.

Nagle's algorithm (RFC 896) holds back a small TCP segment while earlier data are still
unacknowledged. Delayed acknowledgement (RFC 1122, section 4.2.3.2) lets a receiver wait
before acknowledging, hoping to piggyback the ACK on a reply; the delay must be under half a
second, and Linux uses at least ``TCP_DELACK_MIN`` = HZ/25, i.e. 40 ms
(``include/net/tcp.h``). A client that writes a request in two pieces (a header, then a body)
and then waits for the reply meets both: its body is held until the header is acknowledged,
and the server, which cannot reply before it has the body, sits on the ACK until its timer
fires.

Symbols (the page {ref}`sec-networking` uses the same): :math:`R` the round-trip time of the
request and its reply without the stall (``round_trip_s``), :math:`t_{\text{ack}}` the
receiver's delayed-ACK timeout (``delayed_ack_s``).

Used by: foundations/networking.md.
"""

from __future__ import annotations

from ._checks import positive
from . import _checks

__all__ = ["split_write_round_trip_s", "LINUX_DELACK_MIN_S", "RFC1122_DELACK_LIMIT_S"]

#: Linux's shortest delayed-ACK timeout, ``TCP_DELACK_MIN`` = HZ/25 (include/net/tcp.h).
LINUX_DELACK_MIN_S = 0.040
#: RFC 1122, section 4.2.3.2: an ACK must not be delayed by 0.5 s or more.
RFC1122_DELACK_LIMIT_S = 0.5


def split_write_round_trip_s(round_trip_s: float, *, delayed_ack_s: float, nagle: bool,
                             receiver_delays_ack: bool = True) -> float:
    r"""Seconds from a two-write request to its reply (write, write, read).

    .. math:: T = \begin{cases} R & \text{Nagle off} \\
              2R + t_{\text{ack}} & \text{Nagle on, ACK delayed} \\
              2R & \text{Nagle on, ACK at once} \end{cases}
              (the page labels this eq-net-nagle)

    With Nagle on, the body leaves only when the header's ACK has come back: one extra round
    trip, plus the receiver's timer if it delays that ACK.

    Parameters
    ----------
    round_trip_s : float
        :math:`R`, the request-reply time when nothing is held back (s), > 0.
    delayed_ack_s : float
        :math:`t_{\text{ack}}`, the receiver's delayed-ACK timeout (s), >= 0; Linux's minimum
        is 40 ms, RFC 1122 allows up to 500 ms.
    nagle : bool
        True if the sender leaves Nagle's algorithm on (no ``TCP_NODELAY``).
    receiver_delays_ack : bool
        False if the receiver acknowledges at once (Linux does at the start of a connection,
        in its "quick ACK" mode, and with ``TCP_QUICKACK``).

    Returns
    -------
    float
        :math:`T` (s).

    Assumptions
    -----------
    The header segment is sent at once (nothing unacknowledged before it); the body is
    smaller than one maximum segment, so Nagle holds it; the reply goes out as soon as the
    body arrives; the stall is exactly the timeout, ignoring timer granularity.

    References
    ----------
    Nagle, J. (1984), RFC 896, "Congestion Control in IP/TCP Internetworks"; Braden, R.
    (1989), RFC 1122, section 4.2.3.2 ("When to Send an ACK Segment"); Linux
    ``include/net/tcp.h``, ``TCP_DELACK_MIN``.

    Examples
    --------
    A 30-microsecond loopback round trip with Nagle on meets Linux's 40 ms timer:

    >>> round(split_write_round_trip_s(30e-6, delayed_ack_s=0.040, nagle=True), 5)
    0.04006
    >>> split_write_round_trip_s(30e-6, delayed_ack_s=0.040, nagle=False)
    3e-05
    """
    _checks.boolean("nagle", nagle)
    _checks.boolean("receiver_delays_ack", receiver_delays_ack)
    r = positive("round_trip_s", round_trip_s)
    t_ack = positive("delayed_ack_s", delayed_ack_s, allow_zero=True)
    if not nagle:
        return r
    return 2.0 * r + (t_ack if receiver_delays_ack else 0.0)
