"""Starting, waiting for and stopping a served app, for the benchmarks and the tests alike (tests/conftest.py puts
this folder on the path): a free loopback port, a server process whose output goes to a file, a wait for its
health route that fails with that output, a stop that ends in a kill, and the app under uvicorn in a thread."""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Iterator, Mapping, Sequence


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    return free_ports(1)[0]


def free_ports(n: int) -> list[int]:
    """`n` distinct TCP ports on 127.0.0.1 that nothing listens on now (all held open until all are chosen)."""
    sockets = [socket.socket() for _ in range(n)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def start_logged(command: Sequence[str], log: Path, env: Mapping[str, str] | None = None, **popen) -> subprocess.Popen:
    """`command` as a process whose output, stdout and stderr, goes to the file `log` line by line. Not a pipe: one
    nobody reads fills (64 KB, about a thousand access-log lines) and the server then blocks on its next line."""
    env = {**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"}
    with open(log, "w") as out:
        return subprocess.Popen(list(command), stdout=out, stderr=subprocess.STDOUT, text=True, env=env, **popen)


def log_tail(log: Path, characters: int = 3000) -> str:
    """The last lines a process started by `start_logged` wrote."""
    return log.read_text(errors="replace")[-characters:]


def wait_until_ready(url: str, process: subprocess.Popen, log: Path, seconds: float = 300,
                     headers: Mapping[str, str] | None = None) -> float:
    """Polls GET `url` until it answers 200; the seconds that took. Raises RuntimeError, with the end of the
    process's log, if the process exits first or `seconds` pass."""
    import httpx

    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if process.poll() is not None:
            raise RuntimeError(f"{url}: the server exited with {process.returncode}: {log_tail(log)}")
        try:
            if httpx.get(url, headers=headers, timeout=2).status_code == 200:
                return time.monotonic() - started
        except httpx.TransportError:
            pass
        time.sleep(0.25)
    raise RuntimeError(f"{url}: no answer within {seconds:.0f} s: {log_tail(log)}")


def stop_process(process: subprocess.Popen, seconds: float = 60) -> None:
    """SIGTERM (a server finishes what it holds), then a kill if it has not exited within `seconds`."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextlib.contextmanager
def served_in_thread(app, seconds: float = 30) -> Iterator[str]:
    """`app` under uvicorn on a free loopback port, in a thread of this process, while the block runs: its base
    URL. The server is told to exit, and joined, when the block ends."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + seconds
    try:
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(seconds)
