"""The service, fair and bounded (issue 38): a document's pieces are bulk work that yields to every string request,
a lone request does not wait for company, a client that disconnects stops its document, and a stopping server
answers a document in flight with the documented JSON 503. A stand-in engine that takes a millisecond per sentence
(no model), so the timings are the scheduler's."""
import threading
import time

import httpx
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
from fastapi.testclient import TestClient  # noqa: E402

from pipeline.config import Config  # noqa: E402
from pipeline.service import ServiceSettings, create_app  # noqa: E402
from pipeline.service.batcher import Batcher  # noqa: E402
from pipeline.translate.splitting import split_text  # noqa: E402
from serving import served_in_thread  # noqa: E402


def wait_until(condition, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


class SlowEngine:
    """Translates by upper-casing, one millisecond per sentence per call; cuts texts into sentences as an engine
    does (`split`), in `translate` too. Counts the sentences it translated."""

    def __init__(self, per_sentence_s: float = 0.001):
        self.config, self.per_sentence_s, self.sentences, self.calls = Config(), per_sentence_s, 0, []
        self.lock = threading.Lock()

    def split(self, texts):
        return [split_text(text, lambda piece: len(piece.split()), 60) for text in texts]

    def translate(self, texts, beam=None, batch_size=None, glossary=None):
        layouts = self.split(texts)
        pieces = sum(len(layout.to_translate) for layout in layouts)
        time.sleep(self.per_sentence_s * pieces)
        with self.lock:
            self.sentences += pieces
            self.calls.append(pieces)
        return [layout.join(piece.upper() for piece in layout.to_translate) for layout in layouts]


def small_requests_during(client, send_heavy):
    """Send a heavy request (`send_heavy(client)`) in a thread and, once 64 sentences are done, 20 one-sentence
    `/translate`s: (the heavy response, their latencies, the sentences translated before the heavy one ended)."""
    heavy = {}
    thread = threading.Thread(target=lambda: heavy.update(response=send_heavy(client)))
    thread.start()
    wait_until(lambda: client.get("/health").json()["batching"]["sentences"] >= 64)
    latencies = []
    for _ in range(20):
        started = time.perf_counter()
        response = client.post("/translate", json={"text": "Good morning."}, timeout=30)
        latencies.append(time.perf_counter() - started)
        assert response.json()["translations"] == ["GOOD MORNING."]
    done_during = client.app.state.service.default.translator.sentences
    thread.join(60)
    return heavy["response"], latencies, done_during


def test_a_string_request_waits_behind_at_most_one_job_of_a_one_line_document(tmp_path):
    engine = SlowEngine()
    line = "Hello world. " * 3000                          # one line, one segment, 3,000 sentences: about 3 s
    settings = ServiceSettings(beam=1, max_batch=32, max_wait_ms=10, files_dir=str(tmp_path / "files"))
    with TestClient(create_app(engine, settings)) as client:
        document, latencies, done_during = small_requests_during(client, lambda c: c.post(
            "/translate_document", files={"file": ("l.txt", line.encode())}))
    assert document.status_code == 200
    assert document.content.decode() == line.upper().rstrip() or \
        document.content.decode().strip() == line.upper().strip()
    assert done_during < 3000                              # the strings were served while the document ran
    assert sorted(latencies)[18] < 0.5, latencies           # p95: behind one 32-sentence job, not 3,000 sentences
    assert max(engine.calls) <= 32                          # the one line went in bounded jobs


LONG_REQUESTS = {                # 64 texts of 60 sentences each: as our API's texts, and as LibreTranslate's HTML
    "texts": lambda paragraphs: {"text": paragraphs},
    "libretranslate html": lambda paragraphs: {"q": [f"<p>{p}<b>Bye.</b></p>" for p in paragraphs],
                                               "source": "en", "target": "it", "format": "html"},
}


def translated(response) -> list[str]:
    body = response.json()
    return body["translations"] if "translations" in body else body["translatedText"]


@pytest.mark.parametrize("kind", LONG_REQUESTS)
def test_a_string_request_waits_behind_at_most_one_job_of_a_request_of_long_paragraphs(tmp_path, kind):
    engine = SlowEngine()
    paragraphs = [f"Hello world {i}. " * 60 for i in range(64)]     # 3,840 sentences: about 4 s
    sent = LONG_REQUESTS[kind](paragraphs)
    settings = ServiceSettings(beam=1, max_batch=32, max_wait_ms=10, files_dir=str(tmp_path / "files"))
    with TestClient(create_app(engine, settings)) as client:
        heavy, latencies, done_during = small_requests_during(client, lambda c: c.post(
            "/translate", json=sent, timeout=60))
    assert heavy.status_code == 200
    expected = [p.upper().strip() for p in paragraphs] if kind == "texts" else \
        [f"<p>{p.upper()}<b>BYE.</b></p>" for p in paragraphs]
    assert translated(heavy) == expected
    assert done_during < 3840                              # the small requests were served while it ran
    assert sorted(latencies)[18] < 0.5, latencies           # p95: behind one 32-sentence job, not 3,840 sentences
    assert max(engine.calls) <= 32                          # the request went in bounded jobs


@pytest.mark.parametrize("kind", LONG_REQUESTS)
def test_a_client_that_disconnects_stops_its_request_of_long_paragraphs(tmp_path, kind):
    engine = SlowEngine(0.002)
    app = create_app(engine, ServiceSettings(beam=1, max_batch=16, files_dir=str(tmp_path / "files")))
    with served_in_thread(app) as url:
        paragraphs = ["Good night. " * 80] * 64                  # 5,120 sentences: about 10 s
        with pytest.raises(httpx.TimeoutException):
            httpx.post(url + "/translate", json=LONG_REQUESTS[kind](paragraphs), timeout=0.5)
        time.sleep(0.5)                                           # the server notices within one job
        started = time.perf_counter()
        assert httpx.post(url + "/translate", json={"text": "Hello."}, timeout=30).json()["translations"] == ["HELLO."]
        assert time.perf_counter() - started < 1.0                # behind at most the job that was running
        assert engine.sentences < 2000                            # the rest of the request was never translated


def test_documents_take_turns_and_a_full_line_is_a_json_503(tmp_path):
    engine = SlowEngine(0.002)
    settings = ServiceSettings(beam=1, max_batch=16, max_documents=1, max_waiting_documents=1,
                               files_dir=str(tmp_path / "files"))
    app = create_app(engine, settings)
    with served_in_thread(app) as url:
        answers = {}

        def upload(name):
            answers[name] = httpx.post(url + "/translate_document", timeout=60,
                                       files={"file": (f"{name}.txt", f"Good night {name}. ".encode() * 300)})
        first = threading.Thread(target=upload, args=("a",))
        first.start()
        wait_until(lambda: engine.sentences >= 16)                  # a has its turn
        second = threading.Thread(target=upload, args=("b",))
        second.start()
        wait_until(lambda: httpx.get(url + "/health").json()["waiting_documents"] == 1)
        during_a = engine.sentences
        third = httpx.post(url + "/translate_document", files={"file": ("c.txt", b"Hello.")}, timeout=30)
        assert third.status_code == 503 and "waiting for their turn" in third.json()["error"]
        assert third.headers["retry-after"] == "5"
        first.join(60)
        second.join(60)
        assert httpx.post(url + "/translate", json={"text": "Hello."}, timeout=30).json()["translations"] == ["HELLO."]
    assert answers["a"].status_code == answers["b"].status_code == 200
    assert answers["b"].content.decode().strip() == ("Good night b. " * 300).upper().strip()
    assert during_a < 300 + 16                                   # b waited: it was not translated beside a


def test_a_lone_request_does_not_wait_for_company():
    calls = []
    batcher = Batcher(lambda sentences, beam: calls.append(time.perf_counter()) or sentences, max_batch=8,
                      max_wait_ms=2000).start()
    started = time.perf_counter()
    assert batcher.submit(["alone"], 1).result(5) == ["alone"]
    assert calls[0] - started < 0.5                          # not the 2 s batching window
    batcher.close(5)


def test_queued_requests_go_before_bulk_work():
    order, gate = [], threading.Event()

    def translate(sentences, beam):
        gate.wait(5)
        order.append(sentences[0])
        return sentences
    batcher = Batcher(translate, max_batch=4, max_wait_ms=0).start()
    first = batcher.submit(["bulk-0"], 1, bulk=True)
    time.sleep(0.1)                                          # the worker holds bulk-0 at the gate
    bulk = [batcher.submit([f"bulk-{i}"], 1, bulk=True) for i in (1, 2)]
    strings = [batcher.submit([f"string-{i}"], 1) for i in (1, 2)]
    gate.set()
    for future in [first, *bulk, *strings]:
        future.result(5)
    batcher.close(5)
    assert order == ["bulk-0", "string-1", "bulk-1", "bulk-2"]     # both strings in one batch, before any bulk


def test_a_client_that_disconnects_stops_its_document(tmp_path):
    engine = SlowEngine(0.002)
    app = create_app(engine, ServiceSettings(beam=1, max_batch=16, files_dir=str(tmp_path / "files")))
    with served_in_thread(app) as url:
        data = ("Good night. " * 2000).encode()                  # 2,000 sentences: about 4 s
        with pytest.raises(httpx.TimeoutException):
            httpx.post(url + "/translate_document", files={"file": ("l.txt", data)}, timeout=0.5)
        time.sleep(0.5)                                           # the server notices within one job
        after_disconnect = engine.sentences
        time.sleep(1.0)
        assert engine.sentences - after_disconnect <= 16          # at most the job that was running
        assert engine.sentences < 1000


def test_a_document_in_flight_when_the_server_stops_gets_a_json_503(tmp_path):
    engine = SlowEngine(0.002)
    app = create_app(engine, ServiceSettings(beam=1, max_batch=16, files_dir=str(tmp_path / "files")))
    with served_in_thread(app) as url:
        answer = {}
        client = threading.Thread(target=lambda: answer.update(response=httpx.post(
            url + "/translate_document", files={"file": ("l.txt", ("Good night. " * 2000).encode())}, timeout=30)))
        client.start()
        wait_until(lambda: engine.sentences >= 32)
        app.state.service.shutting_down.set()                    # what the server's signal handler sets
        client.join(30)
        response = answer.get("response")
        assert response is not None
        assert response.status_code == 503 and response.json() == {"error": "the service is shutting down"}
        assert engine.sentences < 1000


def test_a_string_request_in_flight_when_the_server_stops_is_finished(tmp_path):
    engine = SlowEngine(0.002)
    app = create_app(engine, ServiceSettings(beam=1, max_batch=16, files_dir=str(tmp_path / "files")))
    paragraphs = ["Good night. " * 20] * 40                       # 800 sentences in 50 jobs: about 2 s
    with served_in_thread(app) as url:
        answer = {}
        client = threading.Thread(target=lambda: answer.update(response=httpx.post(
            url + "/translate", json={"text": paragraphs}, timeout=30)))
        client.start()
        wait_until(lambda: engine.sentences >= 32)
        app.state.service.shutting_down.set()                    # what the server's signal handler sets
        client.join(30)
        response = answer.get("response")
        assert response is not None and response.status_code == 200, response and response.text
        assert response.json()["translations"] == [p.upper().strip() for p in paragraphs]


def test_the_server_tells_the_service_when_it_begins_to_stop():
    import signal

    uvicorn = pytest.importorskip("uvicorn")
    from pipeline.service.server import StoppingServer

    stopping = threading.Event()
    server = StoppingServer(uvicorn.Config(lambda scope, receive, send: None), stopping)
    server.handle_exit(signal.SIGTERM, None)              # what uvicorn calls on SIGTERM or Ctrl-C
    assert stopping.is_set() and server.should_exit
