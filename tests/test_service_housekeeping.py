"""The service's housekeeping (issue 38, findings 4 and 6): translated files are swept on time with no request to
trigger it, directories a killed process left are removed at the next start (a live process's are not), and every
refusal of an oversized request head is the documented JSON, through a real uvicorn server; the access log stays
short. A stand-in translator: no model."""
import json
import logging
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

fcntl = pytest.importorskip("fcntl")
pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")
from fastapi.testclient import TestClient  # noqa: E402
from uvicorn.logging import AccessFormatter  # noqa: E402

from pipeline.service import ServiceSettings, create_app  # noqa: E402
from pipeline.service import file_store  # noqa: E402
from pipeline.service.server import AccessLogTrim, uvicorn_config  # noqa: E402

from test_documents_service import StandIn, upload  # noqa: E402

STORED = "0123456789abcdef0123456789abcdef.talk.it.srt"


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """tempfile's directory is `tmp_path`: the stores' parent (`nmt-files-<uid>`) is made there."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    return tmp_path / "tmp"


def settings(**changes):
    return ServiceSettings(beam=1, max_wait_ms=1, **changes)


def stored_files(directory: Path) -> list[Path]:
    return [path for path in directory.iterdir() if file_store.STORED_NAME.match(path.name)]


def sweepers() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "nmt-file-sweeper"]


# -- A. housekeeping ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("given", [True, False], ids=["files-dir", "temporary"])
def test_an_expired_file_is_deleted_on_time_without_another_request(tmp_path, private_tmp, given):
    files_dir = str(tmp_path / "files") if given else None
    with TestClient(create_app(StandIn(), settings(file_ttl_s=1, files_dir=files_dir))) as client:
        assert client.app.state.service.files.sweep_every_s == 0.25          # min(60 s, ttl / 4)
        assert upload(client, "talk.srt").status_code == 200
        stored_at = time.time()
        directory = client.app.state.service.files.directory
        [stored] = stored_files(directory)
        while stored.exists() and time.time() - stored_at < 3:               # no request meanwhile
            time.sleep(0.05)
        assert not stored.exists(), "a 1 s file still on disk 3 s later"
        assert time.time() - stored_at <= 2.0
        assert len(sweepers()) == 1
    assert sweepers() == []                                                  # stopped with the app
    assert directory.is_dir() if given else not directory.exists()           # a temporary one goes with it


def test_the_default_ttl_is_swept_every_minute():
    store = file_store.FileStore(None, 1800)
    assert store.sweep_every_s == 60


def test_the_store_keeps_at_most_max_bytes_deleting_the_oldest_first(tmp_path):
    store = file_store.FileStore(str(tmp_path / "files"), 1800, max_bytes=2500)
    names = []
    for index in range(5):
        names.append(store.put(bytes(1000), f"d{index}.txt"))
        os.utime(store.path(names[-1]), (time.time() + index, time.time() + index))     # distinct ages
    kept = [name for name in names if store.path(name) is not None]
    assert kept == names[-2:]                                   # 2,000 bytes: the newest two
    assert sum(path.stat().st_size for path in (tmp_path / "files").iterdir()) <= 2500
    big = store.put(bytes(4000), "big.txt")                     # alone over the limit: kept, the rest deleted
    assert store.path(big) is not None and [n for n in names if store.path(n)] == []


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def leftover(parent: Path, name: str) -> Path:
    directory = parent / name
    directory.mkdir(mode=0o700)
    (directory / STORED).write_text("a translated document")
    return directory


def test_directories_of_dead_processes_are_removed_at_start_and_live_ones_kept(private_tmp):
    parent = file_store.temporary_parent()
    parent.mkdir(mode=0o700)
    dead = leftover(parent, f"{dead_pid()}-k1ll3d_x")
    mine_but_not_held = leftover(parent, f"{os.getpid()}-0ld1nst")        # this pid, no store here holds it
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = leftover(parent, f"{sleeper.pid}-l1v3abc")
        locked = leftover(parent, f"{dead_pid()}-l0ck3d0")                  # pid gone, but its lock is held
        descriptor = os.open(locked / file_store.LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        other = leftover(parent, "not-a-store")
        with TestClient(create_app(StandIn(), settings())) as client:
            assert not dead.exists() and not mine_but_not_held.exists()       # before any request
            assert live.is_dir() and (live / STORED).exists() and locked.is_dir() and other.is_dir()
            assert upload(client, "talk.srt").status_code == 200
            directory = client.app.state.service.files.directory
            assert directory.parent == parent and directory.name.startswith(f"{os.getpid()}-")
            assert oct(directory.stat().st_mode & 0o777) == "0o700"
            assert file_store.leftover_directories(parent) == []               # its own is held: not a leftover
            os.close(descriptor)
            assert file_store.leftover_directories(parent) == [locked]
        assert not directory.exists() and live.is_dir()
    finally:
        sleeper.kill()
        sleeper.wait()
    file_store.remove_leftovers(parent)
    assert not live.exists() and not locked.exists() and other.is_dir()


def test_a_killed_service_s_files_are_removed_by_the_next_start(private_tmp):
    """A process that made its store's directory and a file, then died by SIGKILL."""
    script = ("import os, signal, sys, tempfile; sys.path.insert(0, sys.argv[1]); tempfile.tempdir = sys.argv[2]; "
              "from pipeline.service.file_store import FileStore; store = FileStore(None, 1800); "
              "print(store.directory / store.put(b'secret', 'talk.srt'), flush=True); "
              "os.kill(os.getpid(), signal.SIGKILL)")
    root = str(Path(__file__).resolve().parents[1])
    killed = subprocess.run([sys.executable, "-c", script, root, str(private_tmp)], capture_output=True, text=True,
                            timeout=60)
    assert killed.returncode == -9, killed.stderr
    left = Path(killed.stdout.strip())
    assert left.read_bytes() == b"secret"
    with TestClient(create_app(StandIn(), settings())):
        assert not left.parent.exists()


def test_an_operator_s_directory_adopts_live_files_and_drops_expired_ones_at_start(tmp_path):
    files = tmp_path / "files"
    files.mkdir()
    old = time.time() - 3600
    fresh, expired = files / STORED, files / ("f" * 32 + ".guide.it.md")
    stale_part, writing = files / f".{'e' * 32}.a.it.srt.part", files / f".{'d' * 32}.b.it.srt.part"
    for path in (fresh, expired, stale_part, writing, files / "notes.txt"):
        path.write_text("x")
    for path in (expired, stale_part, files / "notes.txt"):
        os.utime(path, (old, old))
    with TestClient(create_app(StandIn(), settings(files_dir=str(files), file_ttl_s=600))) as client:
        assert not expired.exists() and not stale_part.exists()              # at start, before any request
        assert writing.exists() and (files / "notes.txt").exists()           # a write in progress; not ours
        download = client.get(f"/download_file/{STORED}")
        assert download.status_code == 200 and download.content == b"x"       # adopted until its expiry
    assert fresh.exists()                                                     # a given directory outlives the app


# -- B. every refusal is the documented JSON, through uvicorn ------------------------------------------------------
class Server:
    """The app under uvicorn, configured as `serve` configures it, on a free loopback port, in a thread."""

    def __init__(self, service_settings: ServiceSettings):
        app = create_app(StandIn(), service_settings)
        self.config = uvicorn_config(app, service_settings, host="127.0.0.1", port=0, log_level="info")
        self.server = uvicorn.Server(self.config)
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True)

    def __enter__(self) -> "Server":
        self.thread.start()
        deadline = time.time() + 10
        while not self.server.started:
            assert time.time() < deadline and self.thread.is_alive(), "uvicorn did not start"
            time.sleep(0.01)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.socket.close()

    def exchange(self, head: bytes) -> tuple[int, dict[str, str], bytes]:
        """Send a raw request head; (status, headers, body) of the answer."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as connection:
            try:
                connection.sendall(head)
            except OSError:                       # refused before it was all sent: the answer is still there
                pass
            answer = b""
            try:
                while chunk := connection.recv(65536):
                    answer += chunk
            except OSError:
                pass
        head_part, _, body = answer.partition(b"\r\n\r\n")
        status_line, *lines = head_part.decode("latin-1").split("\r\n")
        headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
        return int(status_line.split()[1]), headers, body


def get(target: bytes, *extra_headers: bytes) -> bytes:
    return b"GET " + target + b" HTTP/1.1\r\nHost: test\r\n" + b"".join(h + b"\r\n" for h in extra_headers) + \
        b"Connection: close\r\n\r\n"


@pytest.fixture(scope="module")
def server():
    with Server(settings()) as running:
        yield running


URL_ERROR = {"error": "URL over 32,768 bytes (path and query string): send long texts in the request body"}
HEADERS_ERROR = {"error": "request headers over 32,768 bytes"}


@pytest.mark.parametrize("head, status, error", [
    (get(b"/languages?q=" + b"a" * 200_000), 414, URL_ERROR),             # past uvicorn's buffer
    (get(b"/languages?q=" + b"a" * 1_000_000), 414, URL_ERROR),
    (get(b"/languages?q=" + b"a" * 40_000), 414, URL_ERROR),              # within it: the app refuses
    (get(b"/" + b"a" * 40_000), 414, URL_ERROR),
    (get(b"/languages", b"X-Big: " + b"a" * 100_000), 431, HEADERS_ERROR),
    (get(b"/languages", *[b"X-Many-%d: %s" % (i, b"a" * 100) for i in range(400)]), 431, HEADERS_ERROR),
    (get(b"/languages", b"X-Big: " + b"a" * 1_000_000), 431, HEADERS_ERROR),
    (b"NOT HTTP AT ALL\r\n\r\n", 400, {"error": "invalid HTTP request"}),
], ids=["query-200KB", "query-1MB", "query-40KB", "path-40KB", "header-100KB", "headers-400x100B", "header-1MB",
        "garbage"])
def test_an_oversized_or_broken_head_gets_the_documented_json(server, head, status, error):
    started = time.time()
    got, headers, body = server.exchange(head)
    assert (got, headers["content-type"], json.loads(body)) == (status, "application/json", error)
    assert time.time() - started < 5


def test_a_head_within_the_limits_is_served(server):
    status, _, body = server.exchange(get(b"/languages?q=" + b"a" * 30_000, b"X-Big: " + b"a" * 30_000))
    assert status == 200 and b'"code":"en"' in body


def test_the_limits_are_settings_and_the_app_enforces_them_under_any_server():
    with TestClient(create_app(StandIn(), settings(max_url_bytes=1000, max_header_bytes=2000))) as client:
        assert client.get("/languages?q=" + "a" * 900).status_code == 200
        refused = client.get("/languages?q=" + "a" * 1000)
        assert refused.status_code == 414 and refused.json() == {
            "error": "URL over 1,000 bytes (path and query string): send long texts in the request body"}
        assert client.get("/languages", headers={"X-Big": "a" * 1500}).status_code == 200
        refused = client.get("/languages", headers={"X-Big": "a" * 2000})
        assert refused.status_code == 431 and refused.json() == {"error": "request headers over 2,000 bytes"}
        assert client.post("/translate", params={"q": "a" * 2000}, json={"text": "Hi"}).status_code == 414


def test_an_access_log_line_stays_short_for_a_100_kb_query():
    with Server(settings(max_url_bytes=200_000)) as running:     # a 100 KB query accepted, and so logged
        lines: list[str] = []
        handler = logging.Handler()
        formatter = AccessFormatter('%(client_addr)s - "%(request_line)s" %(status_code)s', use_colors=False)
        handler.emit = lambda record: lines.append(formatter.format(record))
        access = logging.getLogger("uvicorn.access")
        access.addHandler(handler)
        try:
            status, _, _ = running.exchange(get(b"/languages?x=" + b"a" * 100_000))
            deadline = time.time() + 5
            while not lines and time.time() < deadline:
                time.sleep(0.01)
        finally:
            access.removeHandler(handler)
    assert status == 200 and len(lines) == 1
    assert sum(isinstance(each, AccessLogTrim) for each in access.filters) == 1     # not one more per server
    assert len(lines[0]) <= 300 and "/languages?x=aaa" in lines[0] and "(+99,813 characters)" in lines[0], lines[0]
