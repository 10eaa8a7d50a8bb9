"""One service, several runs (issue 39, point 2): each run serves its own direction, and every route picks the run
by source and target. Both tiny runs, English -> Italian and Italian -> English, in one in-process app; then the real
scripts/serve.py with both, called by libretranslatepy and deep-translator."""
import json
import os
import subprocess
import sys

import httpx
import pytest
from fastapi.testclient import TestClient

from pipeline.service import ServiceSettings, create_app
from pipeline.translate import open_translator
from conftest import ROOT
from serving import free_port, start_logged, stop_process, wait_until_ready

ENGLISH, ITALIAN = ["Where is the station?", "I love you."], ["Dov'è la stazione?", "Ti amo."]
SERVED = "served pairs: en -> it, it -> en"
LANGUAGES = [{"code": "en", "name": "English", "targets": ["it"]}, {"code": "it", "name": "Italian", "targets": ["en"]}]
TBX = """<?xml version="1.0" encoding="UTF-8"?>
<martif type="TBX" xml:lang="en"><text><body>
<termEntry id="t1"><langSet xml:lang="en"><tig><term>station</term></tig></langSet>
<langSet xml:lang="it"><tig><term>stazione</term></tig></langSet></termEntry>
</body></text></martif>
"""


@pytest.fixture(scope="module")
def beams(tiny_engine, tiny_it_en_engine):
    """Each run's default beam (its decode.beam_size), by direction code."""
    return {"en-it": tiny_engine.config.decode.beam_size, "it-en": tiny_it_en_engine.config.decode.beam_size}


@pytest.fixture(scope="module")
def client(tiny_engine, tiny_it_en_engine, tmp_path_factory):
    settings = ServiceSettings(max_wait_ms=5, glossary_db=str(tmp_path_factory.mktemp("glossaries") / "g.sqlite3"),
                               files_dir=str(tmp_path_factory.mktemp("files") / "files"))
    with TestClient(create_app([tiny_engine, tiny_it_en_engine], settings)) as test_client:
        yield test_client


def lt(client, **fields):
    return client.post("/translate", json=fields)


# -- the pairs served ---------------------------------------------------------------------------------------------
def test_languages_list_exactly_the_served_pairs(client):
    assert client.get("/languages").json() == LANGUAGES
    assert client.get("/libretranslate/languages").json() == LANGUAGES
    settings = client.get("/frontend/settings").json()
    assert settings["language"] == {"source": {"code": "en", "name": "English"},
                                    "target": {"code": "it", "name": "Italian"}}
    assert [(p["source"]["code"], p["target"]["code"]) for p in settings["pairs"]] == [("en", "it"), ("it", "en")]
    chosen = client.get("/frontend/settings", params={"source": "it", "target": "en"}).json()["language"]
    assert chosen == {"source": {"code": "it", "name": "Italian"}, "target": {"code": "en", "name": "English"}}
    health = client.get("/health").json()
    assert health["directions"] == ["en-it", "it-en"] and [run["direction"] for run in health["runs"]] == health[
        "directions"]
    schema = client.get("/openapi.json").json()
    body = schema["paths"]["/libretranslate/translate"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body["properties"]["source"]["enum"] == ["en", "it", "auto"]
    assert body["properties"]["target"]["enum"] == ["it", "en"]
    assert "served pairs: en -> it, it -> en" in json.dumps(schema["paths"]["/libretranslate/translate"]["post"]
                                                            ["responses"]["400"])
    assert schema["info"]["title"] == "English → Italian, Italian → English translation"


def test_each_pair_is_translated_by_its_own_run(client, tiny_engine, tiny_it_en_engine, beams):
    to_english = tiny_it_en_engine.translate(ITALIAN, beam=beams["it-en"])
    to_italian = tiny_engine.translate(ENGLISH, beam=beams["en-it"])
    assert to_english != tiny_engine.translate(ITALIAN, beam=beams["en-it"])      # the runs do differ
    assert lt(client, q=ITALIAN[0], source="it", target="en").json() == {"translatedText": to_english[0]}
    assert lt(client, q=ITALIAN, source="it", target="en").json() == {"translatedText": to_english}
    assert lt(client, q=ENGLISH, source="en", target="it").json() == {"translatedText": to_italian}
    form = client.post("/translate", data={"q": ITALIAN[1], "source": "it", "target": "en"})
    assert form.json() == {"translatedText": to_english[1]}
    ranked = tiny_it_en_engine.n_best(ITALIAN[:1], 3, beam=max(beams["it-en"], 3))
    assert lt(client, q=ITALIAN[0], source="it", target="en", alternatives=2).json() == {
        "translatedText": ranked[0][0], "alternatives": ranked[0][1:]}
    html = lt(client, q=f"<p>{ITALIAN[0]} <b>{ITALIAN[1]}</b></p>", source="it", target="en", format="html").json()
    assert html == {"translatedText": f"<p>{to_english[0]} <b>{to_english[1]}</b></p>"}
    ours = client.post("/translate", json={"text": ITALIAN, "source": "it", "target": "en"}).json()
    assert ours["translations"] == to_english and ours["beam"] == beams["it-en"]
    assert client.post("/translate", json={"text": ENGLISH, "target": "it"}).json()["translations"] == to_italian
    assert client.post("/translate", json={"text": ITALIAN, "source": "it"}).json()["translations"] == to_english


def test_auto_detects_among_the_runs_into_the_target(client, tiny_engine, tiny_it_en_engine, beams):
    one = lt(client, q=ITALIAN[0], source="auto", target="en").json()
    assert one["translatedText"] == tiny_it_en_engine.translate(ITALIAN[:1], beam=beams["it-en"])[0]
    assert one["detectedLanguage"]["language"] == "it" and one["detectedLanguage"]["confidence"] > 50
    english = lt(client, q=ENGLISH, source="auto", target="it").json()
    assert english["translatedText"] == tiny_engine.translate(ENGLISH, beam=beams["en-it"])
    assert [d["language"] for d in english["detectedLanguage"]] == ["en", "en"]
    wrong = lt(client, q="Dove abita tua sorella adesso?", source="auto", target="it")
    assert wrong.status_code == 400
    assert wrong.json()["error"].startswith("the text is detected as Italian (it, ")
    assert wrong.json()["error"].endswith(f"), and there is no it -> it run; {SERVED}")
    mixed = lt(client, q=["Dove abita tua sorella adesso?", "Where does your sister live now?"], source="auto",
               target="en")
    assert mixed.status_code == 400 and mixed.json()["error"].startswith("text 1 is detected as English (en, ")
    for unsure in ("12345 67890", "Guten Morgen, wie geht es dir heute?"):    # nothing tells: a run into the target
        answer = lt(client, q=unsure, source="auto", target="en").json()
        assert answer["detectedLanguage"]["language"] == "it" and answer["detectedLanguage"]["confidence"] < 50
        detected = client.post("/detect", data={"q": "Dove abita tua sorella adesso?"}).json()
    assert [d["language"] for d in detected] == ["it", "en"]


@pytest.mark.parametrize("fields,message", [
    ({"source": "en", "target": "de"}, f"de is not supported; {SERVED}"),
    ({"source": "de", "target": "en"}, f"de is not supported; {SERVED}"),
    ({"source": "en", "target": "en"}, f"en -> en is not supported; {SERVED}"),
    ({"source": "it", "target": "it"}, f"it -> it is not supported; {SERVED}"),
    ({"source": "auto", "target": "de"}, f"de is not supported; {SERVED}"),
])
def test_a_pair_not_served_is_a_400_naming_the_served_pairs(client, tiny_engine, beams, fields, message):
    for response in (lt(client, q="Hi", **fields), client.post("/translate", data={"q": "Hi", **fields}),
                     client.post("/translate_file", files={"file": ("a.txt", b"Hi.")}, data=fields)):
        assert response.status_code == 400 and response.json() == {"error": message}
    if fields["source"] != "auto":
        ours = client.post("/translate", json={"text": "Hi", **fields})
        assert ours.status_code == 400 and ours.json() == {"error": message}
        assert client.get("/frontend/settings", params=fields).json() == {"error": message}
    still = lt(client, q=ENGLISH[0], source="en", target="it").json()
    assert still == {"translatedText": tiny_engine.translate(ENGLISH[:1], beam=beams["en-it"])[0]}


def test_without_a_pair_a_service_of_several_asks_for_one(client):
    asked = "give 'source' and 'target': this service serves several pairs (en -> it, it -> en)"
    for response in (client.post("/translate", json={"text": "Hi"}),
                     client.post("/translate_document", files={"file": ("a.txt", b"Hi.")}),
                     client.post("/glossaries", json={"name": "g", "entries": {"car": "auto"}})):
        assert response.status_code == 400 and response.json() == {"error": asked}


def test_documents_go_to_the_run_of_their_pair(client, tiny_it_en_engine, beams):
    from pipeline.documents import translate_document

    text = f"{ITALIAN[0]}\n\n{ITALIAN[1]}\n".encode()
    expected = translate_document(tiny_it_en_engine, text, "txt", beam=beams["it-en"])
    for source in ("it", "auto"):
        answer = client.post("/translate_file", files={"file": ("notes.txt", text)},
                             data={"source": source, "target": "en"}).json()
        assert answer["translatedFileUrl"].endswith(".notes.en.txt")
        assert client.get(answer["translatedFileUrl"]).content == expected
    native = client.post("/translate_document", files={"file": ("notes.txt", text)}, data={"source": "it"})
    assert native.content == expected
    assert native.headers["content-disposition"] == 'attachment; filename="notes.en.txt"'
    italian_to_italian = client.post("/translate_file", files={"file": ("notes.txt", text)},
                                     data={"source": "auto", "target": "it"})
    assert italian_to_italian.status_code == 400 and "there is no it -> it run" in italian_to_italian.json()["error"]


def test_a_glossary_belongs_to_the_pair_it_was_uploaded_for(client, tiny_it_en_engine, beams):
    tbx = client.post("/glossaries", files={"file": ("terms.tbx", TBX.encode())}, data={"source": "it", "target": "en"})
    assert tbx.status_code == 201 and (tbx.json()["source"], tbx.json()["target"]) == ("it", "en")
    glossary_id = tbx.json()["id"]
    assert client.get(f"/glossaries/{glossary_id}").json()["terms"] == [["stazione", "station"]]   # read it -> en
    expected = tiny_it_en_engine.translate(ITALIAN[:1], beam=beams["it-en"], glossary={"stazione": "station"})
    used = lt(client, q=ITALIAN[0], source="it", target="en", glossary_id=glossary_id)
    assert used.json() == {"translatedText": expected[0]}
    ours = client.post("/translate", json={"text": ITALIAN[0], "source": "it", "target": "en",
                                           "glossary_id": glossary_id})
    assert ours.json()["translations"] == expected
    refused = f"glossary {glossary_id} is it -> en, and this request translates en -> it"
    other = client.post("/translate", json={"text": "Hi", "source": "en", "target": "it", "glossary_id": glossary_id})
    assert other.status_code == 400 and other.json() == {"error": refused}
    libre = lt(client, q="Hi", source="en", target="it", glossary_id=glossary_id)
    assert libre.status_code == 400 and libre.json() == {"error": f"Invalid request: {refused}"}
    inline = lt(client, q=ITALIAN[0], source="it", target="en", glossary={"stazione": "station"})
    assert inline.json() == {"translatedText": expected[0]}
    tsv = client.post("/glossaries", files={"file": ("t.tsv", b"en\tit\nstation\tstazione\n")},
                      data={"source": "it", "target": "en"})                   # its header names the columns
    assert client.get(f"/glossaries/{tsv.json()['id']}").json()["terms"] == [["stazione", "station"]]
    unserved = client.post("/glossaries", json={"name": "g", "entries": {"a": "b"}, "source": "en", "target": "en"})
    assert unserved.status_code == 400 and unserved.json() == {"error": f"en -> en is not supported; {SERVED}"}
    english = client.post("/glossaries", json={"name": "en", "entries": {"car": "auto"}, "source": "en", "target": "it"})
    pairs = lambda **query: {(g["source"], g["target"]) for g in client.get("/glossaries", params=query).json()["glossaries"]}
    assert pairs() == {("it", "en"), ("en", "it")}
    assert pairs(source="it", target="en") == pairs(source="it") == pairs(target="en") == {("it", "en")}
    assert pairs(source="en") == {("en", "it")} and pairs(source="de") == set()
    bad = client.get("/glossaries", params={"source": "Italian"})
    assert bad.status_code == 422 and "source" in bad.json()["error"]
    client.delete(f"/glossaries/{english.json()['id']}")


def test_the_page_offers_the_served_pairs(client):
    page = client.get("/").text
    assert "<title>English → Italian, Italian → English</title>" in page
    assert '<p id="pair-row">' in page
    assert ('<option value="en-it">English → Italian</option><option value="it-en">Italian → English</option>'
            in page)
    assert '"source": "it", "target": "en", "sourceName": "Italian", "targetName": "English"' in page


# -- one run per direction; a service of one run as before ---------------------------------------------------------
def test_two_runs_with_the_same_direction_are_refused(tiny_engine, trained_tiny):
    from pipeline.rundir import run_path

    with pytest.raises(ValueError, match=r"^two translators both translate English -> Italian \(en-it\): serve one "
                                         r"run per direction$"):
        create_app([tiny_engine, tiny_engine])
    run = str(run_path(trained_tiny))
    with pytest.raises(ValueError, match=r"^runs .+ and .+ both translate English -> Italian"):
        create_app([tiny_engine, tiny_engine], model_info=[{"run": run}, {"run": run + "-copy"}])


def test_a_service_of_one_run_is_unchanged(tiny_engine, beams):
    with TestClient(create_app(tiny_engine, ServiceSettings(max_wait_ms=5))) as one:
        assert one.get("/languages").json() == [{"code": "en", "name": "English", "targets": ["it"]},
                                                {"code": "it", "name": "Italian", "targets": []}]
        assert one.get("/frontend/settings").json()["language"] == {"source": {"code": "en", "name": "English"},
                                                                    "target": {"code": "it", "name": "Italian"}}
        expected = tiny_engine.translate(ENGLISH, beam=beams["en-it"])
        assert one.post("/translate", json={"text": ENGLISH}).json()["translations"] == expected
        assert lt(one, q=ENGLISH, source="en", target="it").json() == {"translatedText": expected}
        assert lt(one, q=ENGLISH[0], source="auto", target="it").json()["detectedLanguage"]["language"] == "en"
        glossary = one.post("/glossaries", json={"name": "g", "entries": {"station": "stazione"}}).json()
        assert (glossary["source"], glossary["target"]) == ("en", "it")
        page = one.get("/").text
        assert "<title>English → Italian</title>" in page and '<p id="pair-row" hidden>' in page
        assert one.get("/openapi.json").json()["info"]["title"] == "English → Italian translation"


def test_a_glossary_database_from_before_directions_is_english_to_italian(tmp_path, tiny_engine):
    import sqlite3

    database = tmp_path / "old.sqlite3"
    with sqlite3.connect(database) as old:            # the table as it was before glossaries had directions
        old.execute("CREATE TABLE glossaries (id TEXT PRIMARY KEY, name TEXT NOT NULL, case_sensitive INTEGER NOT "
                    "NULL, entries INTEGER NOT NULL, created TEXT NOT NULL, terms TEXT NOT NULL)")
        old.execute("INSERT INTO glossaries VALUES (?, 'old', 0, 1, '2024-01-01T00:00:00Z', ?)",
                    ("a" * 32, json.dumps([["station", "stazione"]])))
    with TestClient(create_app(tiny_engine, ServiceSettings(glossary_db=str(database)))) as one:
        [kept] = one.get("/glossaries").json()["glossaries"]
        assert (kept["name"], kept["source"], kept["target"]) == ("old", "en", "it")
        assert one.post("/translate", json={"text": "The station.", "glossary_id": "a" * 32}).status_code == 200


# -- the real scripts/serve.py with both runs (CTranslate2), and real clients ---------------------------------------
def serve_script(*args: str) -> list[str]:
    return [sys.executable, os.path.join(ROOT, "scripts", "serve.py"), *args]


def test_serve_py_refuses_two_runs_with_the_same_direction_in_one_line(tiny_ct2_export):
    result = subprocess.run(serve_script("--run", str(tiny_ct2_export), "--run", str(tiny_ct2_export), "--engine",
                                         "ctranslate2", "--port", str(free_port())),
                            capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 2
    assert result.stderr.endswith(f"error: --run {tiny_ct2_export}: translates English -> Italian (en-it), as --run "
                                  f"{tiny_ct2_export} does; serve one run per direction\n")
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


@pytest.fixture(scope="module")
def both_served(tiny_ct2_export, tiny_it_en_ct2_export, tmp_path_factory):
    """scripts/serve.py --run <en-it> --run <it-en> --engine ctranslate2 on a free port: its base URL."""
    port, folder = free_port(), tmp_path_factory.mktemp("served")
    url, log = f"http://127.0.0.1:{port}", folder / "serve.log"
    process = start_logged(serve_script("--run", str(tiny_ct2_export), "--run", str(tiny_it_en_ct2_export),
                                        "--engine", "ctranslate2", "--port", str(port), "--glossary-db",
                                        str(folder / "g.sqlite3")), log, cwd=ROOT)
    try:
        wait_until_ready(url + "/health", process, log, 180)
        yield url
    finally:
        stop_process(process, 30)


def test_real_clients_translate_italian_to_english_through_serve_py(both_served, tiny_it_en_ct2_export):
    from deep_translator import LibreTranslator
    from libretranslatepy import LibreTranslateAPI

    url = both_served
    engine = open_translator(tiny_it_en_ct2_export, engine="ctranslate2")
    expected = engine.translate(["Dov'è la stazione?"], beam=engine.config.decode.beam_size)[0]
    client = LibreTranslateAPI(url)
    assert client.languages(timeout=30) == LANGUAGES
    assert client.translate("Dov'è la stazione?", "it", "en", timeout=30) == expected
    assert client.translate("Dov'è la stazione?", "auto", "en", timeout=30) == expected
    assert client.translate("Where is the station?", "en", "it", timeout=30).strip()
    for source in ("it", "auto"):
        translator = LibreTranslator(source=source, target="en", custom_url=url + "/", api_key="unused")  # needs one
        translated = translator.translate("Dov'è la stazione?")
        assert translated == expected and translated.strip()
    detected = httpx.post(url + "/translate", json={"q": "Dov'è la stazione?", "source": "auto", "target": "en"},
                          timeout=30).json()
    assert detected["detectedLanguage"]["language"] == "it"
    refused = httpx.post(url + "/translate", json={"q": "Hi", "source": "en", "target": "en"}, timeout=30)
    assert refused.status_code == 400 and refused.json() == {"error": f"en -> en is not supported; {SERVED}"}
    health = httpx.get(url + "/health", timeout=30).json()
    assert [run["model"]["translator"] for run in health["runs"]] == ["CTranslate2Engine"] * 2
