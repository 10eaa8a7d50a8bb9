"""LibreTranslate's API in the service (issue 16, points 2-3): n-best, HTML, errors, key, CORS, rate
limit, and real clients (libretranslatepy, httpx) against a uvicorn server on 127.0.0.1."""
import json
import threading
import time
import urllib.error

import httpx
import pytest
from fastapi.testclient import TestClient

from pipeline.translate import open_translator
from pipeline.service import ServiceSettings, create_app
from pipeline.service.batcher import Batcher
from pipeline.documents.html import HtmlText
from pipeline.service.libretranslate import is_libretranslate_body
from pipeline.rundir import run_path
from serving import served_in_thread

SENTENCES = ["I love you.", "Where is the station?", "Tom is my friend."]
ORIGIN = "https://app.example"


@pytest.fixture(scope="module")
def beam(tiny_engine):
    return tiny_engine.config.decode.beam_size


@pytest.fixture(scope="module")
def client(tiny_engine):
    settings = ServiceSettings(max_sentences=4, max_chars=200, max_wait_ms=5, cors_origins=(ORIGIN,))
    with TestClient(create_app(tiny_engine, settings)) as test_client:
        yield test_client


def lt_translate(client, **kwargs):
    return client.post("/translate", **kwargs)


def assert_still_serving(client, tiny_engine, beam):
    response = client.post("/translate", data={"q": "I love you.", "source": "en", "target": "it"})
    assert response.status_code == 200
    assert response.json() == {"translatedText": tiny_engine.translate(["I love you."], beam=beam)[0]}


# -- n-best from the beam --------------------------------------------------------------------------------------
def test_n_best_lists_start_with_the_translation_and_are_distinct(tiny_engine):
    ranked = tiny_engine.n_best(SENTENCES + [""], 3, beam=4)
    assert [hypotheses[0] for hypotheses in ranked] == tiny_engine.translate(SENTENCES + [""], beam=4)
    for hypotheses in ranked[:3]:
        assert 1 <= len(hypotheses) <= 3 and len(set(hypotheses)) == len(hypotheses) and all(hypotheses)
    assert ranked[3] == [""]
    assert sum(len(hypotheses) for hypotheses in ranked[:3]) > 3          # the beam offers real alternatives
    ids = tiny_engine.source_ids(SENTENCES[:2])
    limits = tiny_engine.step_limits((ids != 0).sum(1))
    best, ranked_ids = tiny_engine.translate_ids(ids, limits, 4, 0.0), tiny_engine.translate_ids(ids, limits, 4, 0.0, n_best=3)
    assert ranked_ids.shape == (2, 3, best.shape[1]) and (ranked_ids[:, 0] == best).all()
    with pytest.raises(ValueError, match=r"n_best must be from 1 to the beam size \(2\) without sampling, got 3"):
        tiny_engine.translate_ids(ids, limits, 2, 0.0, n_best=3)


def test_ctranslate2_n_best_starts_with_its_translation(trained_tiny):
    pytest.importorskip("ctranslate2")
    engine = open_translator(run_path(trained_tiny), engine="ctranslate2")
    ranked = engine.n_best(SENTENCES + [""], 3, beam=4)
    assert [hypotheses[0] for hypotheses in ranked] == engine.translate(SENTENCES + [""], beam=4)
    assert all(1 <= len(set(h)) == len(h) <= 3 for h in ranked[:3]) and ranked[3] == [""]


# -- pieces without a model -------------------------------------------------------------------------------------
def test_html_text_nodes_are_replaced_and_markup_kept():
    markup = ('<!DOCTYPE html><p class="a" id="b">Tom &amp; Mary&nbsp;sing. <b>Hi</b> <br> <!-- a note -->'
              '<code>x = y</code><pre>keep me</pre><script>var s = "no";</script><style>p {}</style>'
              '<img src="c.png" alt="A cat"></p>\n<p>\u00a9 2024</p>')
    document = HtmlText(markup)
    # a sentence and the inline element in it: the element's text alone, then the sentence; then alt and title
    assert document.texts == ["Hi", "Tom & Mary\u00a0sing. Hi", "A cat"]
    assert document.render(["Ciao", "T <&> M Ciao", "Un gatto"]) == (
        '<!DOCTYPE html><p class="a" id="b">T &lt;&amp;&gt; M <b>Ciao</b> <br> <!-- a note -->'
        '<code>x = y</code><pre>keep me</pre><script>var s = "no";</script><style>p {}</style>'
        '<img src="c.png" alt="Un gatto"></p>\n<p>\u00a9 2024</p>')
    with pytest.raises(ValueError, match="3 texts, got 1 translations"):
        document.render(["one"])


def test_batcher_runs_n_best_jobs_apart_from_plain_ones():
    calls, entered, gate = [], threading.Event(), threading.Event()

    def translate(sentences, beam):
        if sentences == ["gate"]:         # holds the worker until the four jobs below are all queued
            entered.set()
            gate.wait(5)
            return ["GATE"]
        calls.append(("translate", sentences, beam))
        return [s.upper() for s in sentences]

    def n_best(sentences, beam, n):
        calls.append(("n_best", sentences, beam, n))
        return [[s, s + "!"][:n] for s in sentences]

    batcher = Batcher(translate, max_batch=8, max_wait_ms=200, n_best=n_best).start()
    held = batcher.submit(["gate"], 2)
    assert entered.wait(5)
    futures = [batcher.submit(["a"], 2), batcher.submit(["b"], 2, n_best=2), batcher.submit(["c", "d"], 2),
               batcher.submit(["e"], 2, n_best=2)]
    gate.set()
    assert held.result(5) == ["GATE"]
    assert [future.result(5) for future in futures] == [["A"], [["b", "b!"]], ["C", "D"], [["e", "e!"]]]
    batcher.close(5)
    assert calls == [("translate", ["a", "c", "d"], 2), ("n_best", ["b", "e"], 2, 2)]   # one call per kind
    with pytest.raises(ValueError, match="this batcher has no n-best function"):
        Batcher(translate).submit(["a"], 2, n_best=2)


@pytest.mark.parametrize("content_type,body,expected", [
    ("application/x-www-form-urlencoded", b"q=Hi&source=en&target=it", True),
    ("application/x-www-form-urlencoded", b"source=en", True),              # LibreTranslate's, missing q
    ("application/x-www-form-urlencoded", b"text=hi", False),               # ours: answered with a 415
    ("multipart/form-data; boundary=x", b"", True),
    ("application/json", b'{"q": "Hi"}', True),
    ("application/json; charset=utf-8", b'{"text": "Hi", "beam": 2}', False),
    ("application/json", b'{"text": "Ciao", "source": "it", "target": "en"}', False),   # ours, naming its pair
    ("application/json", b'{"q": "Ciao", "text": "x", "source": "it"}', True),
    ("application/json", b'["q"]', False),
    ("application/json", b'{"q": ', False),                                 # not JSON: ours says so
    ("text/plain", b"q=Hi", False),
])
def test_a_body_naming_a_libretranslate_field_is_libretranslate_s(content_type, body, expected):
    assert is_libretranslate_body(content_type, body) is expected


def test_our_body_is_ours_whatever_the_query_says(client):
    response = client.post("/translate?source=en", json={"text": "Hello."})
    assert response.status_code == 200 and len(response.json()["translations"]) == 1, response.text
    libretranslate = client.post("/translate?q=Hello.&source=en&target=it")      # LibreTranslate's, in the query
    assert libretranslate.status_code == 200 and "translatedText" in libretranslate.json(), libretranslate.text


# -- translate: bodies, q as a string or a list, auto, alternatives, html ----------------------------------------
def test_form_and_json_bodies_give_the_python_api_s_translations(client, tiny_engine, beam):
    expected = tiny_engine.translate(SENTENCES, beam=beam)
    form = lt_translate(client, data={"q": SENTENCES[0], "source": "en", "target": "it", "format": "text"})
    assert form.status_code == 200 and form.json() == {"translatedText": expected[0]}
    listed = lt_translate(client, json={"q": SENTENCES, "source": "en", "target": "it"})
    assert listed.json() == {"translatedText": expected}
    prefixed = client.post("/libretranslate/translate", json={"q": SENTENCES[1], "source": "en", "target": "it"})
    assert prefixed.json() == {"translatedText": expected[1]}
    ours = client.post("/translate", json={"text": SENTENCES[0], "beam": beam})     # the service's own API
    assert ours.json()["translations"] == expected[:1]


def test_auto_and_detect_name_the_language_for_real(client, tiny_engine, beam):
    one = lt_translate(client, json={"q": SENTENCES[0], "source": "auto", "target": "it"}).json()
    assert one["translatedText"] == tiny_engine.translate(SENTENCES[:1], beam=beam)[0]
    assert one["detectedLanguage"]["language"] == "en" and one["detectedLanguage"]["confidence"] > 50
    listed = lt_translate(client, json={"q": SENTENCES[:2], "source": "auto", "target": "it"}).json()
    assert [d["language"] for d in listed["detectedLanguage"]] == ["en", "en"]
    italian_text = lt_translate(client, json={"q": [SENTENCES[0], "Dov'è la stazione? È tardi."], "source": "auto",
                                              "target": "it"})         # was: read as English; no it -> it run
    assert italian_text.status_code == 400 and italian_text.json()["error"].startswith(
        "text 1 is detected as Italian (it, ") and italian_text.json()["error"].endswith(
        "), and there is no it -> it run; served pairs: en -> it")
    italian = client.post("/detect", data={"q": "Dove abita tua sorella adesso?"}).json()
    assert [d["language"] for d in italian] == ["it", "en"] and italian[0]["confidence"] > 80   # was: en, 100
    for unknown in ("Guten Morgen, wie geht es dir heute?", "12345 67890"):
        assert max(d["confidence"] for d in client.post("/detect", data={"q": unknown}).json()) < 30


def test_detect_keeps_the_text_limits_and_a_long_word_cannot_hold_the_service():
    from pipeline.language import LanguageDetector

    detector = LanguageDetector(("en", "it"))
    detector.detect("warm up")
    started = time.perf_counter()
    assert detector.detect("a" * 200_000)[0][1] < 100        # lingua: 9 s for this word before, holding the GIL
    assert time.perf_counter() - started < 1.0


def test_detect_refuses_texts_over_the_limits_as_translate_does(client):
    for body in ({"json": {"q": "a" * 201}}, {"data": {"q": "a" * 201}},      # the fixture's --max-chars 200
                 {"json": {"q": ["Hello."] * 5}}):                               # and --max-sentences 4
        response = client.post("/detect", **body)
        assert response.status_code == 400 and "exceeds text limit" in response.json()["error"], response.text
    assert client.post("/detect", json={"q": ["Hello there.", "How are you?"]}).status_code == 200


def test_alternatives_come_from_the_beam(client, tiny_engine, beam):
    ranked = tiny_engine.n_best(SENTENCES, 3, beam=max(beam, 3))
    one = lt_translate(client, json={"q": SENTENCES[0], "source": "en", "target": "it", "alternatives": 2}).json()
    assert one == {"translatedText": ranked[0][0], "alternatives": ranked[0][1:]}
    form = lt_translate(client, data={"q": SENTENCES[1], "source": "en", "target": "it", "alternatives": "2"})
    assert form.json() == {"translatedText": ranked[1][0], "alternatives": ranked[1][1:]}
    many = lt_translate(client, json={"q": SENTENCES, "source": "en", "target": "it", "alternatives": 2}).json()
    assert many == {"translatedText": [r[0] for r in ranked], "alternatives": [r[1:] for r in ranked]}


def test_html_keeps_the_markup(client, tiny_engine, beam):
    nodes = tiny_engine.translate(["I love you.", "Tom is my friend."], beam=beam)
    markup = '<p class="x">I love you. <b>Tom is my friend.</b></p><code>x = 1</code>'
    response = lt_translate(client, json={"q": [markup], "source": "en", "target": "it", "format": "html",
                                          "alternatives": 1})
    assert response.json() == {"translatedText": [f'<p class="x">{nodes[0]} <b>{nodes[1]}</b></p><code>x = 1</code>'],
                               "alternatives": [[]]}                    # LibreTranslate gives none for html


# -- errors: LibreTranslate's status and wording, then the service still serves ----------------------------------
FORM = {"source": "en", "target": "it"}
BAD_REQUESTS = [
    ("missing q (form)", {"data": FORM}, "Invalid request: missing q parameter"),
    ("empty q (JSON)", {"json": {"q": "", **FORM}}, "Invalid request: missing q parameter"),
    ("missing source", {"json": {"q": "Hi", "target": "it"}}, "Invalid request: missing source parameter"),
    ("missing target", {"data": {"q": "Hi", "source": "en"}}, "Invalid request: missing target parameter"),
    ("source zz", {"json": {"q": "Hi", "source": "zz", "target": "it"}}, "zz is not supported; served pairs: en -> it"),
    ("target zz", {"data": {"q": "Hi", "source": "en", "target": "zz"}}, "zz is not supported; served pairs: en -> it"),
    ("pair it -> en", {"json": {"q": "Ciao", "source": "it", "target": "en"}},
     "it is not supported; served pairs: en -> it"),
    ("format xml", {"json": {"q": "Hi", **FORM, "format": "xml"}}, "xml format is not supported"),
    ("alternatives x", {"json": {"q": "Hi", **FORM, "alternatives": "x"}},
     "Invalid request: alternatives parameter is not a number"),
    ("alternatives 1e999", {"content": b'{"q": "Hi", "source": "en", "target": "it", "alternatives": 1e999}',
                            "headers": {"Content-Type": "application/json"}},
     "Invalid request: alternatives parameter is not a number"),
    ("alternatives 4", {"json": {"q": "Hi", **FORM, "alternatives": 4}},
     "Invalid request: alternatives parameter must be <= 3"),
    ("q a number", {"json": {"q": 3, **FORM}}, "Invalid request: q must be a string or a list of strings"),
    ("too many texts", {"json": {"q": ["Hi"] * 5, **FORM}}, "Invalid request: request (5) exceeds text limit (4)"),
    ("text too long", {"data": {"q": "a" * 201, **FORM}}, "Invalid request: request (201) exceeds text limit (200)"),
    ("JSON array", {"content": b'["Hi"]', "headers": {"Content-Type": "application/json"},
                    "url": "/libretranslate/translate"}, "Invalid JSON format"),
    ("invalid JSON", {"content": b'{"q": ', "headers": {"Content-Type": "application/json"},
                      "url": "/libretranslate/translate"}, "Invalid JSON format"),
    ("detect without q", {"data": {"api_key": ""}, "url": "/detect"}, "Invalid request: missing q parameter"),
]


@pytest.mark.parametrize("kwargs,message", [case[1:] for case in BAD_REQUESTS], ids=[case[0] for case in BAD_REQUESTS])
def test_bad_request_gets_libretranslate_s_400_and_the_service_keeps_serving(client, tiny_engine, beam, kwargs,
                                                                             message):
    kwargs = dict(kwargs)
    response = client.post(kwargs.pop("url", "/translate"), **kwargs)
    assert response.status_code == 400 and response.json() == {"error": message}
    assert_still_serving(client, tiny_engine, beam)


class NoNBest:
    """A tiny_engine without `n_best` (e.g. a custom engine)."""

    def __init__(self, tiny_engine):
        self.config, self.translate = tiny_engine.config, tiny_engine.translate


def test_an_engine_without_n_best_refuses_alternatives_only(tiny_engine, beam):
    with TestClient(create_app(NoNBest(tiny_engine))) as test_client:
        response = lt_translate(test_client, json={"q": "Hi", **FORM, "alternatives": 1})
        assert response.status_code == 400
        assert response.json() == {"error": "Invalid request: alternatives are not supported by the NoNBest engine"}
        assert_still_serving(test_client, tiny_engine, beam)


def test_api_key_in_the_body_or_as_bearer_else_403(tiny_engine, beam):
    with TestClient(create_app(tiny_engine, ServiceSettings(api_key="s3cret"))) as test_client:
        missing = lt_translate(test_client, json={"q": "Hi", **FORM})
        assert missing.status_code == 403
        assert missing.json() == {"error": "Please contact the server operator to get an API key"}
        for kwargs in ({"json": {"q": "Hi", **FORM, "api_key": "wrong"}}, {"data": {"q": "Hi", **FORM, "api_key": "x"}},
                       {"json": {"q": "Hi", **FORM}, "headers": {"Authorization": "Bearer wrong"}}):
            wrong = lt_translate(test_client, **kwargs)
            assert wrong.status_code == 403 and wrong.json() == {"error": "Invalid API key"}
        assert test_client.post("/detect", data={"q": "Hi"}).status_code == 403
        expected = {"translatedText": tiny_engine.translate(["Hi"], beam=beam)[0]}
        assert lt_translate(test_client, data={"q": "Hi", **FORM, "api_key": "s3cret"}).json() == expected
        assert lt_translate(test_client, json={"q": "Hi", **FORM},
                            headers={"Authorization": "Bearer s3cret"}).json() == expected
        assert test_client.get("/languages").status_code == 200                   # public, as in LibreTranslate
        assert test_client.get("/frontend/settings").json()["keyRequired"] is True
        assert test_client.post("/translate", json={"text": "Hi"}).status_code == 401    # ours: Bearer only


def test_cors_preflight_and_headers_follow_the_allowed_origins(client):
    preflight = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}
    allowed = client.options("/translate", headers={"Origin": ORIGIN, **preflight})
    assert allowed.status_code == 200 and allowed.headers["access-control-allow-origin"] == ORIGIN
    assert "POST" in allowed.headers["access-control-allow-methods"]
    refused = client.options("/translate", headers={"Origin": "https://evil.example", **preflight})
    assert refused.status_code == 400 and refused.json() == {"error": "Disallowed CORS origin"}
    answer = client.get("/languages", headers={"Origin": ORIGIN})
    assert answer.headers["access-control-allow-origin"] == ORIGIN
    other = client.get("/languages", headers={"Origin": "https://evil.example"})
    assert other.status_code == 200 and "access-control-allow-origin" not in other.headers


def test_req_limit_answers_429_slowdown_per_client_address(tiny_engine, beam):
    app = create_app(tiny_engine, ServiceSettings(req_limit=2))
    second = TestClient(app, client=("10.0.0.2", 50000))          # no `with`: shares the first one's batcher
    with TestClient(app) as first:
        for _ in range(2):
            assert lt_translate(first, data={"q": "Hi", **FORM}).status_code == 200
        for response in (lt_translate(first, json={"q": "Hi", **FORM}), first.post("/translate", json={"text": "Hi"}),
                         first.post("/detect", data={"q": "Hi"})):
            assert response.status_code == 429 and response.json() == {"error": "Slowdown: 2 per 1 minute"}
            assert 1 <= int(response.headers["retry-after"]) <= 60
        assert first.get("/languages").status_code == 200 and first.get("/health").status_code == 200
        assert_still_serving(second, tiny_engine, beam)                             # another address


# -- real clients against uvicorn on 127.0.0.1 ------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(tiny_engine):
    """The app with an API key, served by uvicorn in a thread: (base URL, key)."""
    with served_in_thread(create_app(tiny_engine, ServiceSettings(api_key="k3y", max_wait_ms=5))) as url:
        yield url, "k3y"


def test_libretranslatepy_translates_lists_languages_and_detects(server, tiny_engine, beam):
    from libretranslatepy import LibreTranslateAPI

    url, key = server
    expected = tiny_engine.translate(SENTENCES[:1], beam=beam)[0]
    for base in (url, url + "/libretranslate/"):
        client = LibreTranslateAPI(base, api_key=key)
        assert client.translate(SENTENCES[0], "en", "it", timeout=30) == expected
        assert client.translate(SENTENCES[0], "auto", "it", timeout=30) == expected
        assert client.languages(timeout=30) == [{"code": "en", "name": "English", "targets": ["it"]},
                                                {"code": "it", "name": "Italian", "targets": []}]
        assert client.detect("Where is the station?", timeout=30)[0]["language"] == "en"
    with pytest.raises(urllib.error.HTTPError) as refused:
        LibreTranslateAPI(url, api_key="wrong").translate(SENTENCES[0], "en", "it", timeout=30)
    assert refused.value.code == 403 and json.loads(refused.value.read()) == {"error": "Invalid API key"}
    with pytest.raises(urllib.error.HTTPError) as unsupported:
        LibreTranslateAPI(url, api_key=key).translate(SENTENCES[0], "en", "es", timeout=30)
    assert unsupported.value.code == 400
    assert json.loads(unsupported.value.read()) == {"error": "es is not supported; served pairs: en -> it"}


def test_httpx_json_with_and_without_the_api_key(server, tiny_engine, beam):
    url, key = server
    body = {"q": SENTENCES, "source": "en", "target": "it", "format": "text"}
    without = httpx.post(url + "/translate", json=body, timeout=30)
    assert without.status_code == 403
    assert without.json() == {"error": "Please contact the server operator to get an API key"}
    expected = tiny_engine.translate(SENTENCES, beam=beam)
    in_body = httpx.post(url + "/translate", json={**body, "api_key": key}, timeout=30)
    assert in_body.status_code == 200 and in_body.json() == {"translatedText": expected}
    bearer = httpx.post(url + "/translate", json=body, headers={"Authorization": f"Bearer {key}"}, timeout=30)
    assert bearer.json() == {"translatedText": expected}
    ours = httpx.post(url + "/translate", json={"text": SENTENCES, "beam": beam},
                      headers={"Authorization": f"Bearer {key}"}, timeout=30)
    assert ours.json()["translations"] == expected


def test_deep_translator_s_query_string_requests_are_libretranslate_s(server, tiny_engine, beam):
    from deep_translator import LibreTranslator
    from deep_translator.exceptions import AuthorizationException

    url, key = server
    expected = tiny_engine.translate(SENTENCES[:1], beam=beam)[0]
    for base in (url + "/", url + "/libretranslate/"):       # fields in the query string, an empty body
        assert LibreTranslator(source="en", target="it", custom_url=base, api_key=key).translate(SENTENCES[0]) == expected
    with pytest.raises(AuthorizationException):
        LibreTranslator(source="en", target="it", custom_url=url + "/", api_key="wrong").translate(SENTENCES[0])


def test_curl_uploads_a_file_and_downloads_its_translation(server, tiny_engine, beam, tmp_path):
    """LibreTranslate's documented file flow, as curl sends it: `-F file=@...`, then GET the URL it answers."""
    import shutil
    import subprocess

    from pipeline.documents import translate_document

    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("curl not found")
    url, key = server
    page = tmp_path / "notes.html"
    page.write_text("<h1>Tom's notes</h1>\n<p>Where is the station? <b>It is late.</b></p>\n", encoding="utf-8")

    def run(*arguments):
        done = subprocess.run([curl, "-sS", "--max-time", "60", *arguments], capture_output=True, check=True)
        return done.stdout

    answer = json.loads(run("-F", f"file=@{page}", "-F", "source=en", "-F", "target=it", "-F", f"api_key={key}",
                            url + "/translate_file"))
    assert set(answer) == {"translatedFileUrl"} and answer["translatedFileUrl"].startswith(url + "/download_file/")
    saved = tmp_path / "saved.html"
    run("-o", str(saved), "--fail", answer["translatedFileUrl"])
    assert saved.read_bytes() == translate_document(tiny_engine, page, beam=beam)
    refused = json.loads(run("-F", f"file=@{page}", "-F", "source=en", "-F", "target=it", url + "/translate_file"))
    assert refused == {"error": "Please contact the server operator to get an API key"}


def test_a_field_given_twice_is_read_as_libretranslate_reads_it_the_first_and_the_query_string_s(client, tiny_engine,
                                                                                              beam):
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    twice = client.post("/translate", content=b"q=I+love+you.&q=Tom+is+my+friend.&source=en&target=it", headers=form)
    assert twice.json() == {"translatedText": tiny_engine.translate(["I love you."], beam=beam)[0]}   # was the last
    both = client.post("/translate?q=I+love+you.", content=b"q=Tom+is+my+friend.&source=en&target=it", headers=form)
    assert both.json() == {"translatedText": tiny_engine.translate(["I love you."], beam=beam)[0]}
