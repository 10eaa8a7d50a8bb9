"""Hostile connections against the service's server: do they stay open, and is a polite client still served?

The service's app over an echo engine (no model), under uvicorn as `serve` configures it, in this process. A
hostile client on 127.0.0.1 opens `--connections` connections: three in four send nothing, one in four starts a
request head and then trickles a byte a second. A polite client on 127.0.0.2 asks `GET /languages` every 0.5 s for
`--seconds`. Reports the hostile connections still open at the end, the server's open connections, and the polite
client's answers and latency (p50, max).

usage: python bench/bench_connections.py [--connections 3000] [--seconds 30]
"""
from __future__ import annotations

import argparse
import logging
import socket
import statistics
import threading
import time

from common import emit, machine
from serving import free_port

from pipeline.service import ServiceSettings, create_app
from pipeline.service.server import uvicorn_config

REQUEST = b"GET /languages HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n"


class EchoEngine:
    """Translates each text to itself: the server, not a model, is what is measured."""

    def translate(self, sentences, beam=None, batch_size=None, glossary=None):
        return list(sentences)


def hostile(port: int, count: int, held: list[socket.socket], stop: threading.Event) -> None:
    for index in range(count):
        try:
            connection = socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError:
            continue
        held.append(connection)
        if index % 4 == 0:
            connection.sendall(b"GET / HTTP/1.1\r\n")
    while not stop.wait(1.0):
        for connection in held[::4]:
            try:
                connection.sendall(b"X")
            except OSError:
                pass


def polite(port: int) -> float | None:
    """Seconds for one answered `GET /languages` from 127.0.0.2; None when it failed."""
    started = time.perf_counter()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.0.2", 0)) as connection:
            connection.sendall(REQUEST)
            answer = b""
            while chunk := connection.recv(65536):
                answer += chunk
    except OSError:
        return None
    return time.perf_counter() - started if answer.startswith(b"HTTP/1.1 200") else None


def still_open(connection: socket.socket) -> bool:
    connection.setblocking(False)
    try:
        while connection.recv(65536):
            pass
        return False
    except BlockingIOError:
        return True
    except OSError:
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=3000)
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    import uvicorn

    settings = ServiceSettings(beam=1, max_wait_ms=1)
    port = free_port()
    server = uvicorn.Server(uvicorn_config(create_app(EchoEngine(), settings), settings, port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    held: list[socket.socket] = []
    stop = threading.Event()
    threading.Thread(target=hostile, args=(port, args.connections, held, stop), daemon=True).start()
    answered: list[float] = []
    failed = 0
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        seconds = polite(port)
        if seconds is None:
            failed += 1
        else:
            answered.append(seconds)
        time.sleep(0.5)
    server_open = len(server.server_state.connections)
    stop.set()
    hostile_open = sum(still_open(connection) for connection in held)
    for connection in held:
        connection.close()
    server.should_exit = True
    thread.join(10)
    p50 = statistics.median(answered) * 1000 if answered else float("nan")
    worst = max(answered) * 1000 if answered else float("nan")
    emit("hostile_connections_still_open", hostile_open, "connections", opened=len(held),
         server_open=server_open, seconds=args.seconds)
    emit("polite_p50", p50, "ms", answered=len(answered), failed=failed, max_ms=worst)
    print(f"{machine()}: {len(held):,} hostile connections, {hostile_open:,} still open after {args.seconds:g} s "
          f"(server: {server_open:,}); polite client {len(answered)} answered, {failed} failed, p50 {p50:.0f} ms, "
          f"max {worst:.0f} ms")


if __name__ == "__main__":
    main()
