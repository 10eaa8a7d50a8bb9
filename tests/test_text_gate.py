"""One gate for incoming text (`text.gate_text`): a lone surrogate becomes U+FFFD identically on every door (the
Python API of both engines, the native and LibreTranslate routes in JSON, form and HTML, and the CLI's
arguments), so that the same input gives the same outcome everywhere and never a 5xx or a binding error."""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from pipeline.text import REPLACEMENT, gate_text, gate_texts
from pipeline.rundir import run_path

HOSTILE = ["lone \ud800 surrogate", "a \udfff", "\udc80\udcff", "mixed 😀 \ud83d and é"]
REPLACED = [text.replace("\ud800", REPLACEMENT).replace("\udfff", REPLACEMENT).replace("\udc80", REPLACEMENT)
            .replace("\udcff", REPLACEMENT).replace("\ud83d", REPLACEMENT) for text in HOSTILE]


def test_the_gate_replaces_exactly_the_code_points_utf8_cannot_encode():
    assert gate_texts(HOSTILE) == REPLACED
    assert gate_text("😀 é \ufffd \U0010ffff") == "😀 é \ufffd \U0010ffff"
    assert gate_text("a \ud83d\ude00 b") == "a 😀 b"              # a pair held as two code points is one character
    assert gate_text("\ud800\ud800\ude00\udfff") == "\ufffd\U00010200\ufffd"
    with pytest.raises(TypeError, match="expected a str"):
        gate_text(b"bytes")


@pytest.mark.parametrize("engine", ["tiny_engine_graph", "tiny_ct2_engine"])
def test_both_engines_translate_a_surrogate_as_the_replacement_character(engine, request):
    translator = request.getfixturevalue(engine)
    out = translator.translate(HOSTILE, beam=1)
    assert out == translator.translate(REPLACED, beam=1)
    for translation in out:
        translation.encode("utf-8")
    assert translator.n_best(HOSTILE, 2, beam=2) == translator.n_best(REPLACED, 2, beam=2)


def test_keras_and_ctranslate2_give_the_same_outcome(tiny_engine_graph, tiny_ct2_engine):
    assert tiny_engine_graph.translate(HOSTILE, beam=1) == tiny_ct2_engine.translate(HOSTILE, beam=1)


@pytest.fixture(scope="module")
def client(tiny_engine_graph):
    from fastapi.testclient import TestClient

    from pipeline.service import ServiceSettings, create_app

    with TestClient(create_app(tiny_engine_graph, ServiceSettings(max_wait_ms=1, beam=1))) as test_client:
        yield test_client


JSON = {"Content-Type": "application/json"}


def raw_json(value) -> str:
    """JSON with lone surrogates written as \\uXXXX escapes, as a hostile client sends them."""
    return json.dumps(value, ensure_ascii=True)


def test_native_route_translates_surrogates_like_the_python_api(client, tiny_engine_graph):
    response = client.post("/translate", content=raw_json({"text": HOSTILE}), headers=JSON)
    assert response.status_code == 200, response.text
    assert response.json()["translations"] == tiny_engine_graph.translate(REPLACED, beam=1)


@pytest.mark.parametrize("text_format", ["text", "html"])
def test_libretranslate_json_and_html_translate_surrogates(client, tiny_engine_graph, text_format):
    q = "<p title=\"\ud800\">lone \udfff here</p>" if text_format == "html" else HOSTILE[1]

    def translated(text):
        body = {"q": text, "source": "en", "target": "it", "format": text_format}
        response = client.post("/translate", content=raw_json(body), headers=JSON)
        assert response.status_code == 200, response.text
        return response.json()["translatedText"]
    assert translated(q) == translated(gate_text(q))
    if text_format == "text":
        assert translated(q) == tiny_engine_graph.translate([REPLACED[1]], beam=1)[0]
    else:
        assert translated(q).startswith(f'<p title="{REPLACEMENT}">')


@pytest.mark.parametrize("field", ["source", "target", "format", "alternatives", "api_key"])
def test_a_surrogate_in_any_libretranslate_field_is_a_4xx_not_a_5xx(client, field):
    body = {"q": "Hello.", "source": "en", "target": "it", field: "\ud800"}
    for path in ("/translate", "/libretranslate/translate", "/libretranslate/detect"):
        response = client.post(path, content=raw_json(body), headers=JSON)
        assert response.status_code in (200, 400), response.text
        response.json()


def test_a_keyed_service_compares_a_surrogate_key_without_crashing(tiny_engine_graph):
    from fastapi.testclient import TestClient

    from pipeline.service import ServiceSettings, create_app

    with TestClient(create_app(tiny_engine_graph, ServiceSettings(api_key="k\u00e9y", max_wait_ms=1))) as keyed:
        body = raw_json({"q": "Hello.", "source": "en", "target": "it", "api_key": "\udfff"})
        response = keyed.post("/translate", content=body, headers=JSON)
        assert response.status_code == 403 and response.json() == {"error": "Invalid API key"}


@pytest.mark.parametrize("depth", [50, 5000, 200_000])
def test_json_nested_too_deep_is_a_4xx_on_every_route(client, depth):
    for path in ("/translate", "/libretranslate/translate", "/libretranslate/detect"):
        for body in ("[" * depth + "]" * depth, '{"q": ' + "[" * depth + "]" * depth + "}",
                     '{"text": ' + "[" * depth + "]" * depth + "}"):
            response = client.post(path, content=body, headers=JSON)
            assert 400 <= response.status_code < 500, (path, depth, response.text[:200])
            assert set(response.json()) == {"error"}


def test_a_form_with_bytes_that_are_not_utf8_is_answered_not_crashed(client):
    response = client.post("/translate", content=b"q=caf%E9&source=en&target=it",
                           headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert response.status_code in (200, 400), response.text
    assert "error" in response.json() or "translatedText" in response.json()


def test_cli_arguments_with_invalid_bytes_translate_like_the_replacement_character(trained_tiny):
    """A shell hands Python invalid UTF-8 arguments as lone surrogates (surrogateescape)."""
    script = str(ROOT / "scripts" / "translate.py")
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    run = [sys.executable, script, "--run", str(run_path(trained_tiny)), "--beam", "1"]
    bad = subprocess.run(run + [os.fsencode("caf\udce9 au lait")], capture_output=True, timeout=300, env=env)
    good = subprocess.run(run + ["caf\ufffd au lait"], capture_output=True, timeout=300, env=env)
    assert bad.returncode == 0, bad.stderr.decode()[-2000:]
    assert bad.stdout == good.stdout and bad.stdout.strip()
