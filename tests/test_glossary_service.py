"""Glossaries in the service (issue 26): the SQLite store, `/glossaries`, `glossary_id` and inline glossaries on both
APIs, keys, limits, and requests with and without glossaries sharing batches."""
import pytest
from fastapi.testclient import TestClient

from pipeline.service import ServiceSettings, create_app
from pipeline.service.glossary_store import MAX_ENTRIES

TBX = """<?xml version="1.0" encoding="UTF-8"?>
<martif type="TBX" xml:lang="en"><text><body>
<termEntry id="t1"><langSet xml:lang="en"><tig><term>account</term></tig></langSet>
<langSet xml:lang="it"><tig><term>conto</term></tig></langSet></termEntry>
</body></text></martif>
"""
LT = {"source": "en", "target": "it"}


def service(tiny_engine, path, **settings):
    return TestClient(create_app(tiny_engine, ServiceSettings(glossary_db=str(path), **settings)))


def test_store_upload_list_get_delete_and_survive_a_restart(tiny_engine, tmp_path):
    database = tmp_path / "state" / "glossaries.sqlite3"
    with service(tiny_engine, database) as client:
        assert client.get("/glossaries").json() == {"glossaries": []}
        made = client.post("/glossaries", json={"name": "house style", "entries": {"account": "conto",
                                                                                    "Pipeline": "Pipeline"}})
        assert made.status_code == 201
        summary = made.json()
        assert summary["name"] == "house style" and summary["entries"] == 2 and len(summary["id"]) == 32
        tsv = client.post("/glossaries", files={"file": ("cars.tsv", b"english\titalian\ncar\tautomobile\n")})
        tbx = client.post("/glossaries", files={"file": ("terms.tbx", TBX.encode())}, data={"name": "tbx",
                                                                                             "case_sensitive": "true"})
        assert tsv.status_code == tbx.status_code == 201
        assert tsv.json()["name"] == "cars.tsv" and tbx.json()["case_sensitive"] is True
        assert client.get(f"/glossaries/{tbx.json()['id']}").json()["terms"] == [["account", "conto"]]
        assert [g["name"] for g in client.get("/glossaries").json()["glossaries"]] == ["house style", "cars.tsv", "tbx"]
        assert client.delete(f"/glossaries/{tsv.json()['id']}").json() == {"deleted": tsv.json()["id"]}
        gone = client.get(f"/glossaries/{tsv.json()['id']}")
        assert gone.status_code == 404 and "no glossary with id" in gone.json()["error"]
    assert database.is_file()                                      # created on first use
    with service(tiny_engine, database) as client:                  # a restarted service still has them
        kept = client.get("/glossaries").json()["glossaries"]
        assert [g["id"] for g in kept] == [summary["id"], tbx.json()["id"]]
        assert client.get(f"/glossaries/{summary['id']}").json()["terms"] == [["account", "conto"],
                                                                                ["Pipeline", "Pipeline"]]


def test_translations_with_a_stored_or_inline_glossary_equal_the_python_api(tiny_engine, tmp_path):
    texts = ["Tom has a red car.", "I love you.", "The pipeline is slow."]
    entries = {"red car": "auto rossa", "pipeline": "Pipeline", "Tom": "Tom"}
    expected = tiny_engine.translate(texts, beam=1, glossary=entries)
    plain = tiny_engine.translate(texts, beam=1)
    assert expected[1] == plain[1]                                 # no term, no change
    with service(tiny_engine, tmp_path / "g.sqlite3", beam=1, max_wait_ms=50) as client:
        glossary_id = client.post("/glossaries", json={"name": "g", "entries": entries}).json()["id"]
        native = client.post("/translate", json={"text": texts, "glossary_id": glossary_id}).json()
        assert native["translations"] == expected
        assert client.post("/translate", json={"text": texts, "glossary": entries}).json()["translations"] == expected
        lt = client.post("/translate", json={"q": texts, **LT, "glossary_id": glossary_id}).json()
        assert lt["translatedText"] == expected
        form = client.post("/translate", data={"q": texts[0], **LT, "glossary_id": glossary_id}).json()
        assert form["translatedText"] == expected[0]
        inline = client.post("/translate", data={"q": texts[0], **LT, "glossary": '{"red car": "auto rossa", '
                                                 '"pipeline": "Pipeline", "Tom": "Tom"}'}).json()
        assert inline["translatedText"] == expected[0]
        assert client.post("/translate", json={"q": texts, **LT}).json()["translatedText"] == plain   # ignorable


def test_requests_with_and_without_glossaries_share_a_batch_and_keep_their_own(tiny_engine, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    texts = ["Tom has a red car.", "The pipeline is slow."]
    entries = {"red car": "auto rossa", "pipeline": "Pipeline"}
    expected = {True: tiny_engine.translate(texts, beam=1, glossary=entries), False: tiny_engine.translate(texts, beam=1)}
    with service(tiny_engine, tmp_path / "g.sqlite3", beam=1, max_wait_ms=200) as client:
        def ask(with_glossary: bool) -> tuple[bool, list[str]]:
            body = {"text": texts, **({"glossary": entries} if with_glossary else {})}
            return with_glossary, client.post("/translate", json=body).json()["translations"]
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(ask, [i % 2 == 0 for i in range(8)]))
        stats = client.get("/health").json()["batching"]
    assert all(out == expected[with_glossary] for with_glossary, out in answers)
    assert stats["largest_batch"] > len(texts)                     # some requests were decoded together


@pytest.mark.parametrize("request_kwargs,status,fragment", [
    ({"json": {"name": "x", "entries": {"car": ""}}}, 422, "empty Italian side"),
    ({"json": {"name": "x", "entries": [["car", "auto"], ["car", "macchina"]]}}, 422, "is already 'auto'"),
    ({"json": {"name": "", "entries": {"car": "auto"}}}, 422, "'name' must be 1 to 100 characters"),
    ({"json": {"name": "a\nb", "entries": {"car": "auto"}}}, 422, "without control characters"),
    ({"json": {"name": "x", "entries": "car=auto"}}, 422, "'entries' must be an object"),
    ({"json": {"name": "x", "entries": {}}}, 422, "at least one entry"),
    ({"json": {"name": "x", "entries": {"car": "auto"}, "case_sensitive": "yes"}}, 422, "'case_sensitive'"),
    ({"json": {"name": "x"}}, 422, "missing 'entries'"),
    ({"json": ["car", "auto"]}, 422, "must be a JSON object"),
    ({"content": b"{", "headers": {"content-type": "application/json"}}, 400, "invalid JSON body"),
    ({"content": b"car\tauto", "headers": {"content-type": "text/plain"}}, 415, "send JSON"),
    ({"files": {"file": ("t.xls", b"car\tauto\n")}}, 415, "expected a .tsv, .csv or .tbx file"),
    ({"files": {"file": ("t.tsv", b"car\tauto\tmacchina\n")}}, 422, "'t.tsv' line 1: 3 columns"),
    ({"files": {"file": ("t.tsv", "car\tautomòbile\n".encode("latin-1"))}}, 422, "'t.tsv' line 1: not valid UTF-8"),
    ({"files": {"file": ("t.tbx", b"<martif><unclosed>")}}, 422, "not a TBX file"),
    ({"files": {"other": ("t.tsv", b"car\tauto\n")}}, 422, "missing 'file'"),
    ({"files": [("file", ("a.tsv", b"car\tauto\n")), ("file", ("b.tsv", b"bus\tautobus\n"))]}, 400,
     "more than one 'file'"),                                                  # was: the last one, silently
    ({"json": {"name": "x", "entries": {f"t{i}": "x" for i in range(MAX_ENTRIES + 1)}}}, 413, "at most 20,000"),
])
def test_bad_uploads_are_4xx_with_the_reason(tiny_engine, tmp_path, request_kwargs, status, fragment):
    with service(tiny_engine, tmp_path / "g.sqlite3") as client:
        response = client.post("/glossaries", **request_kwargs)
        assert response.status_code == status and fragment in response.json()["error"], response.json()
        assert client.get("/glossaries").json() == {"glossaries": []}


def test_bad_or_unknown_glossary_ids_on_every_route(tiny_engine, tmp_path):
    unknown = "0" * 32
    with service(tiny_engine, tmp_path / "g.sqlite3") as client:
        for path in (f"/glossaries/{unknown}",):
            assert client.get(path).status_code == 404 and client.delete(path).status_code == 404
        assert client.get("/glossaries/..%2F..%2Fetc").status_code in (404, 422)
        assert client.get("/glossaries/ZZ").json()["error"].startswith("'glossary_id' must be a glossary id")
        assert client.post("/translate", json={"text": "Hi.", "glossary_id": unknown}).status_code == 404
        assert client.post("/translate", json={"text": "Hi.", "glossary_id": "x"}).status_code == 422
        both = client.post("/translate", json={"text": "Hi.", "glossary_id": unknown, "glossary": {"a": "b"}})
        assert both.status_code == 422 and "not both" in both.json()["error"]
        assert client.post("/translate", json={"q": "Hi.", **LT, "glossary_id": unknown}).status_code == 404
        bad = client.post("/translate", json={"q": "Hi.", **LT, "glossary": {"a": ""}})
        assert bad.status_code == 400 and bad.json()["error"].startswith("Invalid request: ")
        assert client.post("/translate", data={"q": "Hi.", **LT, "glossary": "{"}).status_code == 400


def test_keys_guard_the_glossary_routes(tiny_engine, tmp_path):
    with service(tiny_engine, tmp_path / "g.sqlite3", api_key="s3cret") as client:
        entries = {"name": "g", "entries": {"car": "auto"}}
        assert client.post("/glossaries", json=entries).status_code == 401
        assert client.get("/glossaries").status_code == 401
        key = {"Authorization": "Bearer s3cret"}
        glossary_id = client.post("/glossaries", json=entries, headers=key).json()["id"]
        assert client.delete(f"/glossaries/{glossary_id}").status_code == 401
        assert client.get(f"/glossaries/{glossary_id}", headers=key).status_code == 200
        keyed = client.post("/translate", json={"q": "A car.", **LT, "glossary_id": glossary_id, "api_key": "s3cret"})
        assert keyed.status_code == 200
        assert client.post("/translate", json={"q": "A car.", **LT, "glossary_id": glossary_id}).status_code == 403


def test_a_surrogate_name_a_tbx_without_its_reader_and_a_broken_store_are_not_5xx_from_the_client(
        tiny_engine, tmp_path, monkeypatch):
    import pipeline.glossary
    from pipeline.extras import MissingExtra
    from pipeline.service.glossary_store import GlossaryStore

    with service(tiny_engine, tmp_path / "g.sqlite3") as client:
        named = client.post("/glossaries", content=b'{"name": "\\ud800", "entries": {"a": "b"}}',
                            headers={"content-type": "application/json"})
        assert named.status_code == 422 and "surrogates" in named.json()["error"]

        def missing(module, extra):
            raise MissingExtra(f"translate is not installed; it comes with the '{extra}' extra")
        monkeypatch.setattr(pipeline.glossary, "require", missing)
        tbx = client.post("/glossaries", files={"file": ("terms.tbx", TBX.encode())})
        assert tbx.status_code == 415 and "cannot read .tbx files" in tbx.json()["error"]
    blocked = tmp_path / "file"
    blocked.write_text("")
    store = GlossaryStore(blocked / "sub" / "g.sqlite3")           # its parent is a file: cannot be created
    with pytest.raises(ValueError, match="cannot be opened"):
        store.check()
    with service(tiny_engine, blocked / "sub" / "g.sqlite3", timeout_s=300) as client:
        down = client.get("/glossaries")
        assert down.status_code == 503 and down.json()["error"].startswith("the glossary store is unavailable")
        assert client.post("/translate", json={"text": "Hi."}).status_code == 200     # translating goes on


def test_uploads_are_read_and_stored_off_the_event_loop(tiny_engine, tmp_path, monkeypatch):
    """A 1 MB upload takes a quarter of a second to read: on the event loop, every other request would wait."""
    import asyncio

    from pipeline.service import glossaries, glossary_store

    where = []

    def on_loop() -> bool:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        return True

    def watched(function):
        def call(*args, **kwargs):
            where.append((function.__name__, on_loop()))
            return function(*args, **kwargs)
        return call

    for name in ("glossary_from_file", "checked_glossary"):
        monkeypatch.setattr(glossaries, name, watched(getattr(glossary_store, name)))
    monkeypatch.setattr(glossary_store, "checked_glossary", watched(glossary_store.checked_glossary))
    for name in ("add", "get", "list", "delete", "glossary"):
        monkeypatch.setattr(glossary_store.GlossaryStore, name, watched(getattr(glossary_store.GlossaryStore, name)))
    with service(tiny_engine, tmp_path / "g.db") as client:
        made = client.post("/glossaries", files={"file": ("t.tbx", TBX.encode())}, data=LT)
        assert made.status_code == 201, made.text
        glossary_id = made.json()["id"]
        assert client.post("/glossaries", json={"name": "j", "entries": {"bank": "banca"}}).status_code == 201
        assert client.get(f"/glossaries/{glossary_id}").status_code == 200
        assert client.get("/glossaries").status_code == 200
        for answer in (client.post("/translate", json={"text": "My account.", "glossary_id": glossary_id}),
                       client.post("/translate", json={"text": "My bank.", "glossary": {"bank": "banca"}}),
                       client.post("/translate", data={"q": "My account.", **LT, "glossary_id": glossary_id}),
                       client.post("/translate_document", files={"file": ("a.txt", b"My account.")},
                                   data={"glossary_id": glossary_id})):
            assert answer.status_code == 200, answer.text
        assert client.delete(f"/glossaries/{glossary_id}").status_code == 200
    assert sorted({name for name, _ in where}) == ["add", "checked_glossary", "delete", "get", "glossary",
                                                    "glossary_from_file", "list"]
    assert not [name for name, looped in where if looped], where
