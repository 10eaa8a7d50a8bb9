"""The one registry of document formats: a toy format, added as one module (tests/toy_format.py) plus one
`register` line, reaches every door (the Python API, the CLI, the service's two file routes, its settings and its
page), and the registry refuses a name or extension twice."""
import runpy
import sys

import pytest

from conftest import ROOT
from pipeline.documents import (FORMATS, Format, by_extension, detect_format, format_names, register, suffixes,
                                translate_document, unregister)
from toy_format import ToyDocument

TOY = b"title = Where is the station?\n# not a text\ngreeting = I love you.\n"


def shout(texts):
    return [text.upper() for text in texts]


class Shouting:
    """A stand-in engine: what the doors hand a document's segments to."""
    glossary_style = "annotate"

    def __init__(self, config=None):
        self.config = config

    def translate(self, texts, beam=None, batch_size=None, glossary=None, progress=False, **options):
        return shout(texts)


@pytest.fixture
def toy():
    format = register(Format("toy", (".toy",), "text/x-toy; charset=utf-8", False, ToyDocument))   # the one line
    yield format
    unregister("toy")


def test_a_registered_format_is_known_to_the_library(toy):
    assert "toy" in format_names() and ".toy" in suffixes() and by_extension(".TOY") is toy
    assert detect_format(b"", "notes.toy") == "toy"
    assert translate_document(shout, TOY, name="a.toy") == (
        b"title = WHERE IS THE STATION?\n# not a text\ngreeting = I LOVE YOU.\n")
    assert translate_document(Shouting(), TOY, "toy") == translate_document(shout, TOY, name="a.toy")


def test_the_registry_refuses_a_name_or_an_extension_twice(toy):
    with pytest.raises(ValueError, match="already registered"):
        register(Format("toy2", (".srt",), "text/plain", False, ToyDocument))
    with pytest.raises(ValueError, match="already registered"):
        register(Format("toy", (".toy2",), "text/plain", False, ToyDocument))
    with pytest.raises(ValueError, match="lower case"):
        register(Format("toy3", ("TOY3",), "text/plain", False, ToyDocument))
    assert set(FORMATS) >= {"txt", "md", "html", "srt", "vtt", "po", "docx", "pptx", "odt", "toy"}


def test_the_cli_takes_a_registered_format(toy, tmp_path, monkeypatch, capsys):
    import pipeline.translate

    source, out = tmp_path / "strings.toy", tmp_path / "strings.it.toy"
    source.write_bytes(TOY)
    monkeypatch.setattr(pipeline.translate, "open_translator", lambda run, model, engine, target=None: Shouting())
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    for argv in (["--input", str(source)], ["--input", str(tmp_path / "x.txt"), "--format", "toy"]):
        (tmp_path / "x.txt").write_bytes(TOY)
        monkeypatch.setattr(sys, "argv", ["translate.py", "--run", "unused", *argv, "--output", str(out)])
        with pytest.raises(SystemExit) as exit:
            runpy.run_path(str(ROOT / "scripts" / "translate.py"), run_name="__main__")
        assert exit.value.code == 0, capsys.readouterr().err
        assert out.read_bytes() == translate_document(shout, TOY, "toy")


def test_the_service_takes_a_registered_format_on_every_file_route(toy, tmp_path):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from pipeline.config import Config
    from pipeline.service import ServiceSettings, create_app

    settings = ServiceSettings(beam=1, max_wait_ms=1, files_dir=str(tmp_path / "files"))
    with TestClient(create_app(Shouting(Config()), settings)) as client:
        assert ".toy" in client.get("/frontend/settings").json()["supportedFilesFormat"]
        assert ".toy" in client.get("/").text
        native = client.post("/translate_document", files={"file": ("a.toy", TOY)})
        assert native.status_code == 200, native.text
        assert native.content == translate_document(shout, TOY, "toy")
        assert native.headers["content-type"] == "text/x-toy; charset=utf-8"
        url = client.post("/translate_file", files={"file": ("a.toy", TOY)},
                          data={"source": "en", "target": "it"}).json()["translatedFileUrl"]
        download = client.get(url)
        assert download.content == native.content and download.headers["content-type"] == toy.media_type
    unregister("toy")
    with TestClient(create_app(Shouting(Config()), settings)) as client:
        refused = client.post("/translate_document", files={"file": ("a.toy", TOY)})
        assert refused.status_code == 400 and ".toy format is not supported" in refused.json()["error"]
