"""Documents over HTTP: LibreTranslate's /translate_file and /download_file, the service's /translate_document, the
formats in /frontend/settings, and every refusal a clear 4xx JSON error (a stand-in model: no training needed)."""
import os
import re
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from pipeline.documents import suffixes, translate_document  # noqa: E402
from pipeline.service import ServiceSettings, create_app  # noqa: E402

FIXTURES = Path(__file__).parent / "data" / "documents"


def faithful(texts):
    return [re.sub(r"(?<![^\s(])([A-Za-z]{3,})(?=[\s.,;:?!)]|$)", r"\1-it", text) for text in texts]


class StandIn:
    """Translates like `faithful`, records each batch it is given."""

    def __init__(self):
        self.batches = []

    def translate(self, sentences, beam=None, batch_size=None, glossary=None):
        self.batches.append(len(sentences))
        return faithful(sentences)


@pytest.fixture
def service(tmp_path):
    translator = StandIn()
    settings = ServiceSettings(beam=1, max_wait_ms=1, max_batch=4, files_dir=str(tmp_path / "files"))
    with TestClient(create_app(translator, settings)) as client:
        yield client, translator, tmp_path / "files"


def upload(client, name, data=None, path="/translate_file", **fields):
    data = (FIXTURES / name).read_bytes() if data is None else data
    return client.post(path, files={"file": (name, data)}, data={"source": "en", "target": "it", **fields})


def test_translate_file_then_download_gives_the_translated_document(service):
    client, translator, files = service
    for name in ("talk.srt", "app.po", "guide.md", "page.html", "talk.vtt"):
        for prefix in ("", "/libretranslate"):
            response = upload(client, name, path=prefix + "/translate_file")
            assert response.status_code == 200, response.text
            url = response.json()["translatedFileUrl"]
            stem, suffix = os.path.splitext(name)
            assert re.fullmatch(rf"http://testserver{prefix}/download_file/[0-9a-f]{{32}}\.{stem}\.it\{suffix}", url)
            download = client.get(url)
            assert download.status_code == 200
            assert download.headers["content-disposition"] == f'attachment; filename="{stem}.it{suffix}"'
            assert download.content == translate_document(None, FIXTURES / name, translate=faithful)
    assert max(translator.batches) <= 4                     # a document goes to the batcher in max_batch jobs
    assert oct(files.stat().st_mode & 0o777) == "0o700"     # made by the service: private


def test_native_route_answers_with_the_file(service):
    client, _, _ = service
    response = client.post("/translate_document", files={"file": ("app.po", (FIXTURES / "app.po").read_bytes())},
                           data={"overwrite": "true"})
    assert response.status_code == 200 and response.headers["content-disposition"] == 'attachment; filename="app.it.po"'
    assert b'msgid "Quit"\nmsgstr "Quit-it"' in response.content
    assert client.post("/translate_document", files={"file": ("a.po", b"x")}, data={"overwrite": "maybe"}).json() == \
        {"error": "Invalid request: overwrite must be true or false"}


def test_formats_are_listed_in_the_frontend_settings(service):
    client, _, _ = service
    settings = client.get("/frontend/settings").json()
    assert settings["filesTranslation"] is True and settings["supportedFilesFormat"] == list(suffixes())
    assert {".srt", ".vtt", ".po", ".pot", ".md", ".html", ".txt", ".docx", ".pptx", ".odt"} <= set(suffixes())
    assert {".txt", ".odt", ".odp", ".docx", ".pptx", ".epub", ".html"} <= set(suffixes())    # LibreTranslate's own


@pytest.mark.parametrize("request_kwargs, status, message", [
    (dict(name="virus.exe", data=b"MZ"), 400, "Invalid request: .exe format is not supported; supported: "),
    (dict(name="noextension", data=b"hello"), 400, "Invalid request: a file without an extension format is not"),
    (dict(name="talk.srt", data=b"1\nno timing\nhi\n"), 400, "Invalid request: talk.srt: not a SubRip file"),
    (dict(name="report.docx", data=b"plain text"), 400, "Invalid request: report.docx: not a .docx file"),
    (dict(name="talk.srt", target="de"), 400, "de is not supported"),
    (dict(name="talk.srt", source=""), 400, "Invalid request: missing source parameter"),
])
def test_refusals_are_4xx_json(service, request_kwargs, status, message):
    client, _, _ = service
    request_kwargs = dict(request_kwargs)
    name, data = request_kwargs.pop("name"), request_kwargs.pop("data", None)
    response = upload(client, name, data, **request_kwargs)
    assert response.status_code == status and response.json()["error"].startswith(message), response.text
    missing = client.post("/translate_file", data={"source": "en", "target": "it"})
    assert missing.status_code == 400 and missing.json() == {"error": "Invalid request: missing file parameter"}


def test_downloads_are_found_by_their_exact_name_only(service):
    client, _, files = service
    stored = upload(client, "talk.srt").json()["translatedFileUrl"].rsplit("/", 1)[1]
    (files / "secret.txt").write_text("not for download")
    token, rest = stored.split(".", 1)
    assert client.get(f"/download_file/{stored}").status_code == 200
    for name in (token.upper() + "." + rest, stored + "x", rest, f".{stored}.part", "secret.txt", "%2e%2e",
                 "..%2Fsecret.txt", "0" * 32 + ".talk.it.srt", "a" * 300):
        response = client.get(f"/download_file/{name}")
        assert response.status_code == 404 and response.json()["error"] in (
            "Invalid request: file not found (or expired)", "Not Found"), name      # no route for a "/" in it


def test_a_text_download_says_the_charset_its_bytes_are_in(service):
    client, _, _ = service
    cases = (("a.txt", "Hello world.\n".encode("utf-16"), "text/plain; charset=utf-16"),
             ("a.md", "# Hello world\n".encode("utf-8"), "text/markdown; charset=utf-8"),
             ("a.vtt", "WEBVTT\n\n00:00.000 --> 00:01.000\nCaf\xe9 time.\n".encode("cp1252"),
              "text/vtt; charset=windows-1252"),
             ("a.html", '<html><head><meta charset="iso-8859-15"></head><p>Caf\xe9 time, 5\u20ac.</p></html>'.encode(
                 "iso-8859-15"), "text/html; charset=iso-8859-15"),          # its own (the header wins over it)
             ("a.htm", "<p>Hello world.</p>".encode(), "text/html; charset=utf-8"),
             ("a.xhtml", '<?xml version="1.0" encoding="ISO-8859-1"?>\n<html xmlns="http://www.w3.org/1999/xhtml">'
                         '<body><p>Caf\xe9 time.</p></body></html>'.encode("latin-1"),
              "application/xhtml+xml; charset=iso-8859-1"),
             ("a.po", 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=ISO-8859-1\\n"\n\nmsgid "Caf\xe9 time."\n'
                      'msgstr ""\n'.encode("latin-1"), "text/x-gettext-translation; charset=iso-8859-1"),
             ("a.properties", b"greeting=Hello world.\n", "text/x-java-properties; charset=utf-8"))
    for name, data, expected in cases:
        native = client.post("/translate_document", files={"file": (name, data)})
        assert native.status_code == 200 and native.headers["content-type"] == expected, (name, native.headers)
        download = client.get(upload(client, name, data).json()["translatedFileUrl"])
        assert download.headers["content-type"] == expected, name                     # was: charset=utf-8


def test_head_is_answered_as_get_without_a_body(service):
    client, _, _ = service
    url = upload(client, "talk.srt").json()["translatedFileUrl"]
    for path in ("/languages", "/", url):
        got, head = client.get(path), client.head(path)
        assert head.status_code == 200 and head.content == b"", path             # was a 405
        assert head.headers["content-length"] == str(len(got.content)) and \
            head.headers["content-type"] == got.headers["content-type"], path
    missing = client.head("/no-such-page")
    assert missing.status_code == 404 and missing.content == b""


def test_an_error_quoting_what_a_client_sent_is_cut_short(service):
    client, _, _ = service
    for response in (upload(client, "talk.srt", source="x" * 100_000),
                     client.post("/translate", json={"text": "Hi.", "source": "x" * 100_000, "target": "it"}),
                     client.post("/translate", json={"q": "Hi.", "source": "x" * 100_000, "target": "it"})):
        assert response.status_code == 400 and len(response.content) < 1000, len(response.content)   # was 100 KB
        assert "xxx" in response.json()["error"] and "characters)" in response.json()["error"]


def test_a_bad_range_on_a_download_is_a_json_error_and_a_good_one_is_served(service):
    client, _, _ = service
    url = upload(client, "talk.srt").json()["translatedFileUrl"]
    for header, status, message in (("bytes=abc", 400, "Range header: range must be requested"),
                                    ("bytes=5-2", 400, "Range header: start must be less than end"),
                                    ("bytes=999999-", 416, "Requested Range Not Satisfiable")):
        response = client.get(url, headers={"Range": header})
        assert (response.status_code, response.json()) == (status, {"error": message}), header
    assert client.get(url, headers={"Range": "bytes=999999-"}).headers["content-range"].startswith("bytes */")
    part = client.get(url, headers={"Range": "bytes=0-1"})
    assert part.status_code == 206 and part.content == client.get(url).content[:2]


def test_an_operator_s_files_directory_keeps_what_is_not_ours(tmp_path):
    files = tmp_path / "files"
    (files / "old-directory").mkdir(parents=True)
    (files / "notes.txt").write_text("the operator's")
    old = time.time() - 86400
    os.utime(files / "notes.txt", (old, old))
    os.utime(files / "old-directory", (old, old))
    settings = ServiceSettings(beam=1, max_wait_ms=1, files_dir=str(files), file_ttl_s=1)
    with TestClient(create_app(StandIn(), settings)) as client:
        assert upload(client, "talk.srt").status_code == 200
    assert (files / "notes.txt").read_text() == "the operator's" and (files / "old-directory").is_dir()


def test_files_expire_and_the_size_limit_holds(tmp_path):
    settings = ServiceSettings(beam=1, max_wait_ms=1, file_ttl_s=0.5, max_file_bytes=2_000, max_body_bytes=500)
    with TestClient(create_app(StandIn(), settings)) as client:
        url = upload(client, "talk.srt").json()["translatedFileUrl"]
        assert client.get(url).status_code == 200
        time.sleep(0.6)
        assert client.get(url).status_code == 404
        big = upload(client, "big.srt", (FIXTURES / "talk.srt").read_bytes() * 10)
        assert big.status_code == 413 and big.json() == {"error": "request body over 2,000 bytes"}
        assert upload(client, "talk.srt").status_code == 200          # files have their own limit, over the body's
        directory = client.app.state.service.files.directory
    assert not directory.exists()                                     # the temporary directory goes with the app


def test_the_key_rules_are_translate_s(tmp_path):
    settings = ServiceSettings(beam=1, max_wait_ms=1, api_key="k3y")
    with TestClient(create_app(StandIn(), settings)) as client:
        assert upload(client, "talk.srt").json() == {"error": "Please contact the server operator to get an API key"}
        assert upload(client, "talk.srt", api_key="wrong").json() == {"error": "Invalid API key"}
        assert upload(client, "talk.srt", api_key="k3y").status_code == 200
        assert client.post("/translate_document", files={"file": ("talk.srt", b"")}).status_code == 401
        good = client.post("/translate_document", headers={"Authorization": "Bearer k3y"},
                           files={"file": ("talk.srt", (FIXTURES / "talk.srt").read_bytes())})
        assert good.status_code == 200 and b"00:01:02,345 --> 00:01:05,000" in good.content


def test_download_links_point_at_the_public_url_where_one_is_set_not_at_the_host_a_client_names(tmp_path):
    settings = ServiceSettings(beam=1, max_wait_ms=1, files_dir=str(tmp_path / "files"),
                               public_url="https://mt.example.org/")
    with TestClient(create_app(StandIn(), settings)) as client:
        response = client.post("/libretranslate/translate_file", files={"file": ("talk.srt", (FIXTURES / "talk.srt")
                                                                                  .read_bytes())},
                               data={"source": "en", "target": "it"}, headers={"Host": "attacker.example"})
        url = response.json()["translatedFileUrl"]
        assert re.fullmatch(r"https://mt\.example\.org/libretranslate/download_file/[0-9a-f]{32}\.talk\.it\.srt", url)
        assert client.get(url.replace("https://mt.example.org", "")).status_code == 200
    for wrong in ("mt.example.org", "ftp://mt.example.org", "https://mt.example.org/?a=1", "https://"):
        with pytest.raises(ValueError, match="public_url must be an http"):
            ServiceSettings(public_url=wrong)


def test_two_files_in_one_upload_are_a_400_not_a_guess(service):
    client, _, _ = service
    parts = [("file", ("a.txt", b"Hello.")), ("file", ("b.txt", b"Good night."))]
    for path in ("/translate_file", "/translate_document"):
        response = client.post(path, files=parts, data={"source": "en", "target": "it"})
        assert response.status_code == 400 and "more than one file" in response.json()["error"], path
