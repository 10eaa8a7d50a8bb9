"""The translation service (issue 12): API, batching, limits, auth, timeouts and SIGTERM."""
import os
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import keras
import pytest
from fastapi.testclient import TestClient

from pipeline.translate import open_translator
from pipeline.service import ServiceSettings, api_key_from_env, create_app
from pipeline.service.batcher import Batcher, BatcherClosed
from pipeline.rundir import run_path
from serving import free_port, log_tail, start_logged, wait_until_ready

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SENTENCES = ["I love you.", "Where is the station?", "Tom is my friend.", "It's raining.", "We have to go now.",
             "I don't know what to do.", "Is this your book?", "She is reading.", "Come here!", "He was late.",
             "The dog is sleeping.", "Thank you very much."]


@pytest.fixture(scope="module")
def client(tiny_engine):
    """Small limits so that each one is cheap to reach."""
    settings = ServiceSettings(max_sentences=4, max_chars=50, max_wait_ms=5, timeout_s=60)
    with TestClient(create_app(tiny_engine, settings)) as test_client:
        yield test_client


def assert_still_serving(client, tiny_engine):
    response = client.post("/translate", json={"text": "I love you.", "beam": 1})
    assert response.status_code == 200
    assert response.json()["translations"] == tiny_engine.translate(["I love you."], beam=1)


# -- results -----------------------------------------------------------------------------------------------------
def test_translations_equal_the_python_api(client, tiny_engine):
    response = client.post("/translate", json={"text": SENTENCES[:3] + [""], "beam": 2})
    assert response.status_code == 200
    body = response.json()
    assert body["translations"] == tiny_engine.translate(SENTENCES[:3] + [""], beam=2)
    assert body["translations"][3] == "" and body["beam"] == 2 and body["milliseconds"] >= 0
    one = client.post("/translate", json={"text": "Where is the station?"}).json()   # a string, default beam
    assert one["beam"] == tiny_engine.config.decode.beam_size
    assert one["translations"] == tiny_engine.translate(["Where is the station?"])


def test_concurrent_requests_share_batches_and_equal_the_python_api(tiny_engine):
    beams = [1 + i % 2 for i in range(len(SENTENCES))]
    expected = {beam: dict(zip(SENTENCES, tiny_engine.translate(SENTENCES, beam=beam))) for beam in (1, 2)}
    settings = ServiceSettings(max_batch=64, max_wait_ms=400)
    with TestClient(create_app(tiny_engine, settings)) as test_client:
        barrier = threading.Barrier(len(SENTENCES))

        def post(index):
            barrier.wait()
            return test_client.post("/translate", json={"text": SENTENCES[index], "beam": beams[index]})

        with ThreadPoolExecutor(len(SENTENCES)) as pool:
            responses = list(pool.map(post, range(len(SENTENCES))))
        stats = test_client.get("/health").json()["batching"]
    for sentence, beam, response in zip(SENTENCES, beams, responses):
        assert response.status_code == 200
        assert response.json() == {**response.json(), "translations": [expected[beam][sentence]], "beam": beam}
    assert stats["sentences"] == len(SENTENCES)
    assert stats["model_calls"] < len(SENTENCES) / 2      # merged: typically one call per beam size
    assert stats["largest_batch"] >= 3


def test_the_ctranslate2_engine_serves_the_same_translations_as_its_python_api(trained_tiny):
    pytest.importorskip("ctranslate2")
    engine = open_translator(run_path(trained_tiny), engine="ctranslate2")
    with TestClient(create_app(engine, ServiceSettings(max_wait_ms=50))) as test_client:
        with ThreadPoolExecutor(4) as pool:
            responses = list(pool.map(lambda s: test_client.post("/translate", json={"text": s, "beam": 2}),
                                      SENTENCES[:4]))
        health = test_client.get("/health").json()
    assert [r.json()["translations"][0] for r in responses] == engine.translate(SENTENCES[:4], beam=2)
    assert health["model"]["translator"] == "CTranslate2Engine"


def test_health_reports_model_config_and_backend(client, trained_tiny):
    health = client.get("/health").json()
    assert health["status"] == "ok"
    assert health["backend"] == keras.backend.backend()
    assert health["config"] == os.path.basename(trained_tiny.workdir)
    run = run_path(trained_tiny)                     # by its names: the server's paths are no client's business
    assert health["model"]["run"] == f"{run.parent.name}/{run.name}" and health["model"]["parameters"] > 0
    assert str(run.resolve().parent) not in str(health)
    assert health["limits"]["max_sentences"] == 4 and health["batching"]["max_batch"] == 64


def test_page_and_docs_are_served_without_any_cdn(client):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for element in ('id="english"', 'id="translate"', 'id="italian"', 'id="time"'):
        assert element in page.text
    assert "http://" not in page.text and "https://" not in page.text
    assert client.get("/docs").status_code == 200
    schema = client.get("/openapi.json").json()
    assert {"/translate", "/health"} <= set(schema["paths"])


# -- bad requests: a 4xx with a JSON error, then the service still serves ---------------------------------------
BAD_REQUESTS = [
    ("invalid JSON", {"content": b'{"text": ', "headers": {"Content-Type": "application/json"}}, 400, "invalid JSON"),
    ("empty body", {"content": b"", "headers": {"Content-Type": "application/json"}}, 400, "empty body"),
    ("not JSON", {"content": b"text=hi", "headers": {"Content-Type": "application/x-www-form-urlencoded"}}, 415,
     "application/json"),
    ("body is a list", {"json": ["I love you."]}, 422, "must be a JSON object, got an array"),
    ("missing text", {"json": {"beam": 1}}, 422, "missing 'text'"),
    ("text is a number", {"json": {"text": 3}}, 422, "'text' must be a string or a non-empty list of strings"),
    ("text holds a number", {"json": {"text": ["a", 3]}}, 422, "'text' must be a string"),
    ("empty list", {"json": {"text": []}}, 422, "'text' must be a string or a non-empty list of strings"),
    ("beam 0", {"json": {"text": "a", "beam": 0}}, 422, "'beam' must be an integer from 1 to 8"),
    ("beam 9", {"json": {"text": "a", "beam": 9}}, 422, "'beam' must be an integer from 1 to 8"),
    ("beam as a string", {"json": {"text": "a", "beam": "2"}}, 422, "'beam' must be an integer"),
    ("beam 1.5", {"json": {"text": "a", "beam": 1.5}}, 422, "'beam' must be an integer"),
    ("too many sentences", {"json": {"text": ["a"] * 5}}, 413, "5 texts in one request; the limit is 4"),
    ("sentence too long", {"json": {"text": ["a", "b" * 51]}}, 413, "text 1 has 51 characters; the limit is 50"),
    ("body over 1 MB", {"json": {"text": "a" * 1_000_001}}, 413, "request body over 1,000,000 bytes"),
    ("streamed body over 1 MB", {"content": iter([b'{"text": "', b"a" * 600_000, b"a" * 600_000, b'"}']),
                                 "headers": {"Content-Type": "application/json"}}, 413, "request body over"),
]


@pytest.mark.parametrize("kwargs,status,message", [case[1:] for case in BAD_REQUESTS],
                         ids=[case[0] for case in BAD_REQUESTS])
def test_bad_request_gets_a_json_4xx_and_the_service_keeps_serving(client, tiny_engine, kwargs, status, message):
    response = client.post("/translate", **kwargs)
    assert response.status_code == status
    assert message in response.json()["error"]
    assert_still_serving(client, tiny_engine)


def test_wrong_method_and_unknown_path_get_json_errors(client, tiny_engine):
    assert client.get("/translate").json() == {"error": "Method Not Allowed"}
    assert client.get("/nowhere").json() == {"error": "Not Found"}
    assert_still_serving(client, tiny_engine)


class GatedTranslator:
    """The real tiny_engine behind a gate the test opens: a model that is busy until then."""

    def __init__(self, tiny_engine):
        self.translator, self.config, self.gate = tiny_engine, tiny_engine.config, threading.Event()

    def translate(self, sentences, **kwargs):
        self.gate.wait(30)
        return self.translator.translate(sentences, **kwargs)


def test_a_request_waiting_past_the_timeout_gets_503_and_the_service_recovers(tiny_engine):
    gated = GatedTranslator(tiny_engine)
    with TestClient(create_app(gated, ServiceSettings(timeout_s=0.3, max_wait_ms=0))) as test_client:
        started = time.perf_counter()
        busy = test_client.post("/translate", json={"text": "I love you.", "beam": 1})   # holds the worker
        queued = test_client.post("/translate", json={"text": "It's raining.", "beam": 1})  # waits in the queue
        assert time.perf_counter() - started < 5
        for response in (busy, queued):
            assert response.status_code == 503 and response.headers["retry-after"] == "1"
            assert response.json()["error"] == "no translation within 0.3 s: the service is busy, try again later"
        gated.gate.set()
        assert_still_serving(test_client, tiny_engine)
        stats = test_client.get("/health").json()["batching"]
    assert stats["sentences"] == 2        # the held sentence finished; the queued one was skipped


class CudnnFailingTranslator(GatedTranslator):
    """The real tiny_engine, except where a sentence says "cudnn": there JAX's cuDNN attention runs where it
    cannot (this CPU), and fails in JAX's cuDNN code as a refusal on a GPU does."""

    def translate(self, sentences, **kwargs):
        if any("cudnn" in sentence for sentence in sentences):
            import jax
            import jax.numpy as jnp

            query = jnp.zeros((1, 8, 2, 64), jnp.bfloat16)
            jax.nn.dot_product_attention(query, query, query, implementation="cudnn")
        return self.translator.translate(sentences, **kwargs)


def test_a_cudnn_failure_is_a_500_that_says_the_way_round_it_and_the_service_keeps_serving(tiny_engine, caplog,
                                                                                         monkeypatch):
    jax = pytest.importorskip("jax")
    if jax.default_backend() == "gpu":
        pytest.skip("a GPU with cuDNN may run the attention that this test needs to fail")
    monkeypatch.delenv("NMT_ATTENTION", raising=False)
    with TestClient(create_app(CudnnFailingTranslator(tiny_engine), ServiceSettings(max_wait_ms=0)),
                    raise_server_exceptions=False) as test_client:
        failed = test_client.post("/translate", json={"text": "cudnn", "beam": 1})
        assert failed.status_code == 500
        assert failed.json() == {"error": "internal error: cuDNN's fused attention failed on this server; its "
                                          "operator can restart it with NMT_ATTENTION=xla"}
        assert any(record.levelname == "ERROR" and "cuDNN's fused attention failed (RuntimeError: cuDNN is not "
                   "detected.); NMT_ATTENTION=xla in the environment" in record.getMessage()
                   for record in caplog.records), [record.getMessage() for record in caplog.records]
        monkeypatch.setenv("NMT_ATTENTION", "xla")        # XLA's kernel in use already: no hint, a plain 500
        assert test_client.post("/translate", json={"text": "cudnn", "beam": 1}).json() == {
            "error": "internal error: RuntimeError"}
        assert_still_serving(test_client, tiny_engine)


def test_api_key_guards_the_api_but_not_the_static_pages(tiny_engine):
    settings = ServiceSettings(api_key="s3cret")
    with TestClient(create_app(tiny_engine, settings)) as test_client:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic s3cret"},
                        {"Authorization": "s3cret"}):
            for response in (test_client.post("/translate", json={"text": "Hi."}, headers=headers),
                             test_client.get("/health", headers=headers)):
                assert response.status_code == 401
                assert response.headers["www-authenticate"] == "Bearer"
                assert "Authorization: Bearer <key>" in response.json()["error"]
        # without the key, no body is read: a malformed one, an upload, an unknown glossary are all a 401
        json_type = {"Content-Type": "application/json"}
        for response in (test_client.post("/translate", content=b'{"text": ', headers=json_type),
                         test_client.post("/translate_document", files={"file": ("a.txt", b"Hi.")}),
                         test_client.get("/glossaries/no-such-one"), test_client.delete("/glossaries")):
            assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer", response.text
        good = test_client.post("/translate", json={"text": "Hi.", "beam": 1},
                                headers={"Authorization": "bearer s3cret"})     # the scheme in any case
        assert good.status_code == 200 and good.json()["translations"] == tiny_engine.translate(["Hi."], beam=1)
        assert test_client.get("/").status_code == 200 and test_client.get("/docs").status_code == 200
        assert test_client.get("/languages").status_code == 200


def test_settings_and_api_key_variable_are_checked(monkeypatch):
    with pytest.raises(ValueError, match="max_batch must be >= 1, got 0"):
        ServiceSettings(max_batch=0)
    with pytest.raises(ValueError, match="beam must be from 1 to 8, got 9"):
        ServiceSettings(beam=9)
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(ValueError, match="--api-key-env NO_SUCH_KEY_VAR: the environment variable is unset"):
        api_key_from_env("NO_SUCH_KEY_VAR")
    monkeypatch.setenv("SERVICE_KEY", "abc")
    assert api_key_from_env("SERVICE_KEY") == "abc" and api_key_from_env(None) is None


# -- the batcher alone -------------------------------------------------------------------------------------------
class Recorder:
    def __init__(self, fail_on: str | None = None):
        self.calls, self.fail_on, self.gate = [], fail_on, threading.Event()

    def __call__(self, sentences, beam):
        self.gate.wait(5)
        self.calls.append((list(sentences), beam))
        if self.fail_on in sentences:
            raise RuntimeError("model failed")
        return [f"{s}/{beam}" for s in sentences]


def test_batcher_merges_up_to_max_batch_without_splitting_requests():
    recorder = Recorder()
    batcher = Batcher(recorder, max_batch=4, max_wait_ms=50).start()
    first = batcher.submit(["hold"], 1)                  # the worker takes it and waits for the gate
    time.sleep(0.2)
    futures = [batcher.submit(s, b) for s, b in [(["a", "b"], 1), (["c"], 2), (["d", "e"], 1), (["big"] * 5, 1)]]
    recorder.gate.set()
    assert first.result(5) == ["hold/1"]
    assert [f.result(5) for f in futures] == [["a/1", "b/1"], ["c/2"], ["d/1", "e/1"], ["big/1"] * 5]
    batcher.close(5)
    # a,b + c fill 3; d,e would make 5 > 4, so they start the next batch; 5 sentences run alone
    assert recorder.calls == [(["hold"], 1), (["a", "b"], 1), (["c"], 2), (["d", "e"], 1), (["big"] * 5, 1)]
    assert batcher.stats()["largest_batch"] == 5 and batcher.stats()["model_calls"] == 5


def test_batcher_hands_model_errors_to_callers_and_keeps_serving():
    recorder = Recorder(fail_on="boom")
    recorder.gate.set()
    batcher = Batcher(recorder, max_batch=8, max_wait_ms=0).start()
    with pytest.raises(RuntimeError, match="model failed"):
        batcher.submit(["boom"], 1).result(5)
    assert batcher.submit(["ok"], 1).result(5) == ["ok/1"]
    batcher.close(5)
    with pytest.raises(BatcherClosed):
        batcher.submit(["late"], 1)


def test_batcher_close_finishes_queued_work():
    recorder = Recorder()
    batcher = Batcher(recorder, max_batch=1, max_wait_ms=0).start()
    futures = [batcher.submit([str(i)], 1) for i in range(3)]
    threading.Timer(0.2, recorder.gate.set).start()
    batcher.close(10)
    assert [f.result(0) for f in futures] == [["0/1"], ["1/1"], ["2/1"]]


TBX = """<?xml version="1.0" encoding="UTF-8"?>
<martif type="TBX" xml:lang="en"><text><body>
<termEntry id="t1"><langSet xml:lang="en"><tig><term>account</term></tig></langSet>
<langSet xml:lang="it"><tig><term>conto</term></tig></langSet></termEntry>
</body></text></martif>
"""


# -- a real server: scripts/serve.py under uvicorn ---------------------------------------------------------------
def test_sigterm_finishes_requests_in_flight_then_exits(trained_tiny, tiny_engine, tmp_path):
    """serve.py with an API key; SIGTERM arrives while a request is being translated: it is answered, then the
    server exits 0 and stops listening."""
    port, key, log = free_port(), {"Authorization": "Bearer k3y"}, tmp_path / "serve.log"
    url = f"http://127.0.0.1:{port}"
    process = start_logged(
        [sys.executable, os.path.join(ROOT, "scripts", "serve.py"), "--run", str(run_path(trained_tiny)), "--port",
         str(port), "--beam", "1", "--api-key-env", "TEST_SERVICE_KEY"], log,
        env={**os.environ, "TEST_SERVICE_KEY": "k3y"})
    try:
        wait_until_ready(url + "/health", process, log, 180, key)
        assert httpx.post(url + "/translate", json={"text": "Hi."}, timeout=10).status_code == 401
        # run as a user runs it, scripts/ first on sys.path: translate-toolkit (TBX) is not shadowed by translate.py
        tbx = httpx.post(url + "/glossaries", headers=key, files={"file": ("terms.tbx", TBX.encode())}, timeout=30)
        assert tbx.status_code == 201, tbx.text
        # a request long enough to be seen in flight (64 sentences); one that ends before the poll
        # sees it is sent again, so the test never races the translation
        sentences = (SENTENCES * 6)[:64]
        with ThreadPoolExecutor(1) as pool:
            for _ in range(5):
                in_flight = pool.submit(httpx.post, url + "/translate", json={"text": sentences},
                                        headers=key, timeout=120)
                while not in_flight.done():
                    try:
                        waiting = httpx.get(url + "/health", headers=key, timeout=30).json()["waiting_requests"]
                    except httpx.TransportError as exc:
                        raise AssertionError(f"/health did not answer ({exc!r}); serve.py printed:\n"
                                             f"{log_tail(log)}") from None
                    if waiting >= 1:
                        break
                    time.sleep(0.02)
                if not in_flight.done():
                    break
                assert in_flight.result().status_code == 200
            else:
                raise AssertionError("five requests ended before /health saw one in flight")
            process.send_signal(signal.SIGTERM)
            response = in_flight.result(120)
        assert response.status_code == 200, response.text
        assert response.json()["translations"][:2] == tiny_engine.translate(SENTENCES[:2], beam=1)
        assert len(response.json()["translations"]) == len(sentences)
        assert process.wait(30) == 0, log_tail(log)     # a graceful stop is a plain exit
        output = log.read_text()
        assert "Waiting for application shutdown" in output and "Finished server process" in output
        # the request was in flight: its answer was logged after the shutdown began
        assert output.index("Shutting down") < output.rindex('"POST /translate HTTP/1.1" 200'), output[-3000:]
        with pytest.raises(httpx.TransportError):
            httpx.get(url + "/health", headers=key, timeout=2)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_warming_up_every_option_leaves_nothing_to_compile_for_a_request(tiny_engine):
    from pipeline.service.server import warm_up, warmed

    assert warmed(4, 3, "default") == ([1, 4], [])
    assert warmed(4, 3, "all") == (list(range(1, 9)), [(4, 2), (4, 3), (4, 4)])   # LibreTranslate's alternatives
    assert warmed(6, 7, "all")[1][0] == (6, 2) and warmed(6, 7, "all")[1][-1] == (8, 8)
    warm_up(tiny_engine, [], [(3, 2)])                   # one n-best list (a few seconds), every input length
    traces = tiny_engine.decoder.traces
    for text in ("Hi.", "Tom is my friend and he lives in Rome.", " ".join(["word"] * 40)):
        tiny_engine.n_best([text], 2, beam=3)
    assert tiny_engine.decoder.traces == traces          # the first request at a new option compiled (2 s, all waiting)
