"""Each uploaded document is read and written in a process of its own (`pipeline.documents.sandbox`), forked from
a forkserver that has imported the readers: the same bytes as reading it here, and a reader that spins, eats memory
or crashes is stopped at `--file-timeout-s`, at `--max-document-memory-bytes`, or by its own death, with a JSON
4xx/503 while the service goes on answering; a client that disconnects stops its document's process at once.
Readers that misbehave on purpose: `hostile_readers` (a stand-in engine, no model)."""
import io
import os
import socket
import subprocess
import sys
import threading
import time
import zipfile

import pytest

from conftest import ROOT
from hostile_readers import FORMATS as HOSTILE
from pipeline.documents import Format, open_document, register, sandbox, translate_document, unregister
from pipeline.documents.sandbox import Refused, opening_text, translate_in_sandbox
from pipeline.language import Direction
from stand_ins import new_docx

pytestmark = pytest.mark.skipif(not sandbox.available() or not os.path.exists("/proc/self/limits"),
                                reason="no forkserver, or no /proc to watch processes, on this platform")


def unzipped(data: bytes):
    """A document's content: a zip package's members (their times differ by the second they were written)."""
    if not data.startswith(b"PK"):
        return data
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        return {name: package.read(name) for name in package.namelist()}


def upper(texts):
    return [text.upper() for text in texts]


def choose_upper(text):
    return upper, Direction()


@pytest.fixture
def hostile():
    for format in HOSTILE:
        register(format)
    yield
    for format in HOSTILE:
        unregister(format.name)


def pid_in(path, seconds: float = 20) -> int:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, "the reader never started"
        time.sleep(0.01)
    return int(path.read_text())


def ended(pid: int, seconds: float = 5) -> bool:
    """Whether process `pid` is gone (or a zombie, its parent yet to reap it) within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.02)
    return False


SAMPLES = [
    (b"Where is the station?\n\nI love you.\n", "txt", "a.txt"),
    (b"<html><body><p>Where is the <b>station</b>?</p><p>I love you.</p></body></html>", "html", "a.html"),
    (b"# Title\n\nWhere is the *station*?\n", "md", "a.md"),
    (b'msgid "Where is the station?"\nmsgstr ""\n', "po", "a.po"),
]


@pytest.mark.parametrize("data, format, name", SAMPLES + [(None, "docx", "a.docx")])
def test_a_document_read_in_its_own_process_comes_back_as_read_here(data, format, name):
    data = data if data is not None else new_docx()
    seen = []

    def choose(text):
        seen.append(text)
        return upper, Direction()

    assert unzipped(translate_in_sandbox(data, format, name, choose, deadline_s=60)) == \
        unzipped(translate_document(upper, data, format, name=name))
    assert seen == [opening_text(open_document(data, format, name))]


def test_a_registered_format_goes_to_the_process_as_registered(hostile, tmp_path):
    path = tmp_path / "pid"
    with pytest.raises(Refused, match=r"a\.crash: its reader stopped \(killed by SIGSEGV\)"):
        translate_in_sandbox(str(path).encode(), "crash", "a.crash", choose_upper, deadline_s=30)
    assert pid_in(path) != os.getpid() and ended(pid_in(path))


def test_a_reader_that_never_ends_is_killed_at_the_deadline(hostile, tmp_path):
    path = tmp_path / "pid"
    started = time.monotonic()
    with pytest.raises(TimeoutError, match=r"a\.spin: not translated within 1\.5 s"):
        translate_in_sandbox(str(path).encode(), "spin", "a.spin", choose_upper, deadline_s=1.5)
    assert 1.4 < time.monotonic() - started < 6
    assert ended(pid_in(path))


def test_the_process_s_cpu_time_is_capped_past_its_deadline(hostile, tmp_path):
    """Should the service die, a spinning reader's process is ended by the kernel soon after its deadline."""
    path = tmp_path / "pid"
    limits = []

    def check():
        if path.exists() and not limits:
            with open(f"/proc/{pid_in(path)}/limits") as table:
                limits.extend(line.split()[3:5] for line in table if line.startswith("Max cpu time"))
            raise ConnectionAbortedError("seen")

    with pytest.raises(ConnectionAbortedError):
        translate_in_sandbox(str(path).encode(), "spin", "a.spin", choose_upper, deadline_s=60, check=check)
    assert limits and limits[0][0] == "65"


def test_a_check_that_raises_stops_the_process(hostile, tmp_path):
    path = tmp_path / "pid"

    def check():
        if path.exists():
            raise ConnectionAbortedError("the client has gone")

    with pytest.raises(ConnectionAbortedError):
        translate_in_sandbox(str(path).encode(), "spin", "a.spin", choose_upper, deadline_s=60, check=check)
    assert ended(pid_in(path))


def test_a_reader_over_the_memory_cap_is_refused(hostile, tmp_path):
    path = tmp_path / "pid"
    with pytest.raises(Refused, match=r"a\.hungry: needs more than the 400,000,000 bytes of memory"):
        translate_in_sandbox(str(path).encode(), "hungry", "a.hungry", choose_upper, deadline_s=60,
                             memory_bytes=400_000_000)
    assert ended(pid_in(path))


@pytest.mark.parametrize("error", ["KeyError", "EOFError"])
def test_a_reader_s_bug_is_refused_with_its_last_line_and_logged_whole(hostile, tmp_path, caplog, error):
    """EOFError too: a reader's (a truncated stream), not the channel's."""
    path = tmp_path / "pid"
    with pytest.raises(Refused, match=rf"^a\.buggy: could not be read \({error}: '?w:val'?\)$"):
        translate_in_sandbox(f"{path}\n{error}".encode(), "buggy", "a.buggy", choose_upper, deadline_s=30)
    assert "Traceback" in caplog.text and "hostile_readers.py" in caplog.text
    assert ended(pid_in(path))


@pytest.mark.parametrize("said, refusal", [
    ("", r"its process said what it should not \('translate'\)"),       # before the document is open, numbers
    ('opened\\n7', r"its process said what it should not \('opened'\)"),
    ('bogus\\n"x"', r"its process said what it should not \('bogus'\)"),
    ('failed\\n"  "', r"a\.forging: could not be read \(a reader's error\)")])
def test_a_process_that_says_what_it_should_not_is_refused(hostile, tmp_path, said, refusal):
    """What a reader a crafted file took over could say: refused, never a 5xx, never unpickled."""
    path = tmp_path / "pid"
    with pytest.raises(Refused, match=refusal):
        translate_in_sandbox(f"{path}\n{said}".encode(), "forging", "a.forging", choose_upper, deadline_s=30)
    assert ended(pid_in(path))


def test_a_process_that_stalls_mid_message_is_killed_at_the_deadline(hostile, tmp_path):
    """The caller blocks reading the rest of a message that never comes: the deadline's timer kills the process."""
    path = tmp_path / "pid"
    started = time.monotonic()
    with pytest.raises(TimeoutError, match=r"a\.stalling: not translated within 1\.5 s"):
        translate_in_sandbox(str(path).encode(), "stalling", "a.stalling", choose_upper, deadline_s=1.5)
    assert time.monotonic() - started < 6
    assert ended(pid_in(path))


def test_a_format_whose_reader_is_in_main_is_read_by_the_caller():
    """The process does not run the caller's `__main__`, so it could not find such a reader: `sandboxed` says so."""
    class Reader:
        pass

    Reader.__module__ = "__main__"
    register(Format("mainly", (".mainly",), "text/plain", False, Reader))
    try:
        assert not sandbox.sandboxed("mainly") and sandbox.sandboxed("txt") and sandbox.sandboxed(None)
    finally:
        unregister("mainly")


def test_the_callers_main_script_is_not_run_again(tmp_path):
    """multiprocessing's children run the main script again (a service's, all its imports); these do not."""
    log, script = tmp_path / "imports.log", tmp_path / "main.py"
    script.write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n"
        f"with open({str(log)!r}, 'a') as log:\n    log.write('imported\\n')\n"
        "from pipeline.documents.sandbox import start, translate_in_sandbox\n"
        "from pipeline.language import Direction\n"
        "if __name__ == '__main__':\n"
        "    start()\n"
        "    for _ in range(2):\n"
        "        print(translate_in_sandbox(b'Hi.', 'txt', 'a.txt', lambda t: (lambda x: x, Direction()),\n"
        "                                   deadline_s=60))\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["b'Hi.'", "b'Hi.'"]
    assert log.read_text() == "imported\n"


# -- the service ------------------------------------------------------------------------------------------------
fastapi = pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from pipeline.config import Config  # noqa: E402
from pipeline.service import ServiceSettings, create_app  # noqa: E402


class Echo:
    def __init__(self):
        self.config = Config()

    def translate(self, sentences, beam=None, batch_size=None, glossary=None):
        return [sentence.upper() for sentence in sentences]


def service(tmp_path, **settings):
    return TestClient(create_app(Echo(), ServiceSettings(beam=1, max_wait_ms=0, files_dir=str(tmp_path / "files"),
                                                         **settings)))


def test_a_spinning_reader_gets_a_503_at_the_file_timeout_and_strings_are_answered_meanwhile(hostile, tmp_path):
    path = tmp_path / "pid"
    with service(tmp_path, file_timeout_s=3) as client:
        answer = {}
        thread = threading.Thread(daemon=True, target=lambda: answer.update(response=client.post(
            "/translate_document", files={"file": ("a.spin", str(path).encode())})))
        thread.start()
        pid = pid_in(path)
        latencies = []
        for _ in range(5):
            started = time.perf_counter()
            assert client.post("/translate", json={"text": "Good morning."}).json()["translations"] == [
                "GOOD MORNING."]
            latencies.append(time.perf_counter() - started)
        thread.join(30)
        response = answer["response"]
        assert response.status_code == 503
        assert response.json() == {"error": "no translation within 3 s: the service is busy, try again later"}
        assert ended(pid)
        assert max(latencies) < 2.5, latencies       # answered while it spins, not after its 503 at 3 s
        assert client.post("/translate_document", files={"file": ("a.txt", b"Hi.")}).content == b"HI."


@pytest.mark.parametrize("name, message", [
    ("a.hungry", "Invalid request: a.hungry: needs more than the 400,000,000 bytes of memory a document may take"),
    ("a.crash", "Invalid request: a.crash: its reader stopped (killed by SIGSEGV); nothing was translated"),
    ("a.buggy", "Invalid request: a.buggy: could not be read (KeyError: 'w:val')")])
def test_a_reader_over_the_memory_cap_that_crashes_or_fails_is_a_json_400(hostile, tmp_path, name, message):
    path = tmp_path / "pid"
    with service(tmp_path, max_document_memory_bytes=400_000_000) as client:
        response = client.post("/translate_file", files={"file": (name, str(path).encode())},
                               data={"source": "en", "target": "it"})
        assert response.status_code == 400 and response.json()["error"].startswith(message)
        assert ended(pid_in(path))
        assert client.post("/translate_document", files={"file": ("a.txt", b"Hi.")}).content == b"HI."


def test_a_client_that_disconnects_while_its_document_is_read_stops_its_process(hostile, tmp_path):
    """The client hangs up once its document's process has started (600 s to read): the process is gone soon."""
    pytest.importorskip("uvicorn")
    from serving import served_in_thread

    path = tmp_path / "pid"
    body = (b'--b\r\nContent-Disposition: form-data; name="file"; filename="a.spin"\r\n\r\n' + str(path).encode()
            + b"\r\n--b--\r\n")
    app = create_app(Echo(), ServiceSettings(beam=1, files_dir=str(tmp_path / "files")))
    with served_in_thread(app) as url:
        host, port = url.rsplit("/", 1)[1].split(":")
        with socket.create_connection((host, int(port))) as client:
            client.sendall(b"POST /translate_document HTTP/1.1\r\nHost: test\r\nContent-Type: multipart/form-data; "
                           b"boundary=b\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            pid = pid_in(path)
        assert ended(pid, seconds=5)


@pytest.mark.parametrize("processes", [True, False])
def test_both_ways_of_reading_give_the_same_file(tmp_path, processes):
    with service(tmp_path, document_processes=processes) as client:
        for data, format, name in SAMPLES + [(new_docx(), "docx", "a.docx")]:
            response = client.post("/translate_document", files={"file": (name, data)})
            assert response.status_code == 200
            assert unzipped(response.content) == unzipped(translate_document(upper, data, format, name=name))
