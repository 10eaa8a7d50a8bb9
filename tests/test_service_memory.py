"""Bounded memory per request (issue 38, finding 2): an office file whose XML would take gigabytes to parse is
refused from its zip directory, before parsing, and the memory a document's parse takes is handed back afterwards,
so eight documents later the process is where it started (a stand-in engine: no model)."""
import ctypes

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("docx")
from fastapi.testclient import TestClient  # noqa: E402

from pipeline.config import Config  # noqa: E402
from pipeline.service import ServiceSettings, create_app  # noqa: E402

from stand_ins import new_docx, rezipped  # noqa: E402

PAGE = 4096


def rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE


def empty_paragraphs_docx(megabytes: float) -> bytes:
    """A valid .docx whose body is `megabytes` of empty paragraphs: it zips to a few hundred kilobytes."""
    def padded(name: str, data: bytes) -> bytes:
        body = b"<w:p/>" * int(megabytes * 1_000_000 / 6)
        return data.replace(b"<w:body>", b"<w:body>" + body, 1) if name == "word/document.xml" else data
    return rezipped(new_docx(), padded)


class Echo:
    def __init__(self):
        self.config = Config()

    def translate(self, sentences, beam=None, batch_size=None, glossary=None):
        return list(sentences)


@pytest.fixture(params=[True, False], ids=["processes", "threads"])
def client(tmp_path, request):
    """Documents read in processes of their own (the default: their memory goes with the process) and in the
    service's threads (`--documents-in-threads`: handed back by `release_memory`)."""
    settings = ServiceSettings(beam=1, max_wait_ms=0, files_dir=str(tmp_path / "files"),
                               document_processes=request.param)
    with TestClient(create_app(Echo(), settings)) as test_client:
        yield test_client


def test_an_office_file_of_60_mb_of_xml_is_refused_before_parsing(client):
    bomb = empty_paragraphs_docx(60)
    assert len(bomb) < 1_000_000
    before = rss()
    response = client.post("/translate_document", files={"file": ("bomb.docx", bomb)})
    assert response.status_code == 400
    assert "bytes of XML unpacked, over the 12,000,000-byte limit" in response.json()["error"]
    assert rss() - before < 50_000_000                   # nothing was parsed (it took 1.3 GB before)


def test_memory_comes_back_after_documents(client):
    """Measured from before the first large parse, with this process's own free heap handed back first (in a
    suite, earlier tests leave some that a parse could reuse unseen): glibc keeps a parse's freed heap (about
    160 MB here) unless the service hands it back, so a missing hand-back fails here, as does a leak of more than
    about 10 MB a document."""
    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        pytest.skip("no glibc malloc_trim: the service has no heap to hand back here")
    small, document, bomb = empty_paragraphs_docx(0.01), empty_paragraphs_docx(8), empty_paragraphs_docx(60)
    assert client.post("/translate_document", files={"file": ("a.docx", small)}).status_code == 200   # imports
    trim(0)
    start = rss()
    for index in range(8):
        data, expected = (document, 200) if index % 2 else (bomb, 400)
        assert client.post("/translate_document", files={"file": ("a.docx", data)}).status_code == expected
    assert rss() - start < 40_000_000, (start, rss())


def test_an_office_file_whose_picture_unpacks_to_150_mb_is_refused_before_reading(client):
    picture = rezipped(new_docx(), added={"word/media/image1.png": bytes(150_000_000)})   # zeros: zipped, 150 KB
    assert len(picture) < 1_000_000
    before = rss()
    response = client.post("/translate_document", files={"file": ("picture.docx", picture)})
    assert response.status_code == 400, response.headers["content-type"]     # before: a 200, the file translated
    assert "over the 100,000,000-byte limit for one document" in response.json()["error"]
    assert rss() - before < 50_000_000                   # nothing was read (each part is held, about twice, before)
