"""Measuring a TCP connection on this machine: round trips, streaming throughput, and Nagle's
algorithm, over the loopback interface.

:class:`LoopbackServer` runs a small server on a thread, on ``127.0.0.1`` and a free port, and
speaks one framed protocol: the client sends a 4-byte big-endian length and then that many
bytes; the server reads the whole message and answers with a message of the same length (an
echo) or, if the length has the top bit set, with a 1-byte acknowledgement (a sink, for
throughput). Nothing leaves the machine, so this works without a network.

Loopback shows the costs of the kernel's TCP stack and of the system calls, but no wire: no
serialisation delay of a network card, no propagation delay, no switches, no loss and no
congestion. Introduced in {ref}`sec-networking`.

Used by: foundations/networking.md.
"""

from __future__ import annotations

import socket
import struct
import threading

__all__ = ["LoopbackServer", "Client"]

_SINK = 1 << 31


def _recv_exact(sock: socket.socket, n: int, buf: bytearray | None = None) -> memoryview:
    out = bytearray(n) if buf is None or len(buf) < n else buf
    view = memoryview(out)[:n]
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise ConnectionError("connection closed mid-message")
        got += k
    return view


class LoopbackServer:
    """A threaded echo/sink server on the loopback interface; use it as a context manager."""

    def __init__(self, *, nodelay: bool = True):
        self.nodelay = nodelay
        self._lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._lsock.bind(("127.0.0.1", 0))
        self._lsock.listen(8)
        self.address = self._lsock.getsockname()
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self._acceptor = threading.Thread(target=self._accept_loop, daemon=True)

    def __enter__(self) -> "LoopbackServer":
        self._acceptor.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        try:
            socket.create_connection(self.address, timeout=1).close()  # wake accept()
        except OSError:
            pass
        self._lsock.close()
        self._acceptor.join(timeout=2)
        for t in self._threads:
            t.join(timeout=2)

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._lsock.accept()
            except OSError:
                return
            if self._stop.is_set():
                conn.close()
                return
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            t.start()
            self._threads.append(t)

    def _serve(self, conn: socket.socket) -> None:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, int(self.nodelay))
        buf = bytearray(1 << 20)
        with conn:
            try:
                while True:
                    (length,) = struct.unpack("!I", _recv_exact(conn, 4))
                    sink, n = bool(length & _SINK), length & ~_SINK
                    if sink:
                        left = n
                        while left:
                            k = conn.recv_into(buf, min(left, len(buf)))
                            if k == 0:
                                return
                            left -= k
                        conn.sendall(b"\x01")
                    else:
                        data = _recv_exact(conn, n, buf)
                        conn.sendall(struct.pack("!I", n) + bytes(data))
            except (ConnectionError, OSError, struct.error):
                return


class Client:
    """A connection to a :class:`LoopbackServer`.

    * :meth:`round_trip`: send ``n`` bytes, wait for the ``n``-byte echo (one request and its
      reply; header and payload in one write).
    * :meth:`round_trip_split`: the same, but the 4-byte header and the payload go out in two
      separate writes, the pattern that meets Nagle's algorithm.
    * :meth:`stream`: send ``n`` bytes in ``chunk``-byte writes, wait for the 1-byte
      acknowledgement (throughput).
    """

    def __init__(self, server: LoopbackServer, *, nodelay: bool = True):
        self.sock = socket.create_connection(server.address, timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, int(nodelay))
        self._payloads: dict[int, bytes] = {}
        self._buf = bytearray(1 << 20)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _payload(self, n: int) -> bytes:
        if n not in self._payloads:  # non-zero, position-dependent bytes
            self._payloads[n] = bytes((i * 131 + 7) % 251 + 1 for i in range(min(n, 4096))) \
                * (n // 4096 + 1)
            self._payloads[n] = self._payloads[n][:n]
        return self._payloads[n]

    def _reply(self, n: int) -> bytes:
        (m,) = struct.unpack("!I", _recv_exact(self.sock, 4))
        if m != n:
            raise ConnectionError(f"reply of {m} bytes to a message of {n}")
        return bytes(_recv_exact(self.sock, n, self._buf))

    def round_trip(self, n: int) -> bytes:
        self.sock.sendall(struct.pack("!I", n) + self._payload(n))
        return self._reply(n)

    def round_trip_split(self, n: int) -> bytes:
        self.sock.sendall(struct.pack("!I", n))
        self.sock.sendall(self._payload(n))
        return self._reply(n)

    def stream(self, n: int, *, chunk: int = 1 << 16) -> int:
        if n >= _SINK:
            raise ValueError(f"n must be < {_SINK}, got {n}")
        self.sock.sendall(struct.pack("!I", n | _SINK))
        data = self._payload(min(n, chunk))
        left = n
        view = memoryview(data)
        while left:
            k = min(left, len(data))
            self.sock.sendall(view[:k])
            left -= k
        ack = _recv_exact(self.sock, 1)
        return n if bytes(ack) == b"\x01" else -1

    def check_echo(self, n: int, reply: bytes) -> None:
        """Raise ``ValueError`` unless ``reply`` is the echo of an ``n``-byte message."""
        if reply != self._payload(n):
            raise ValueError(f"the echo of {n} bytes came back different")

    def expected(self, n: int) -> bytes:
        """The echo :meth:`round_trip` should return for ``n`` bytes (to check before timing)."""
        return self._payload(n)
