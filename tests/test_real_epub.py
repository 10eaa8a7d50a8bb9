"""EPUB e-books (`.epub`): the chapters, the navigation and the NCX table of contents, and the book's title,
subject and description translated; its language relabelled; everything else byte for byte, `mimetype` first and
stored; a book that is not one, or whose chapters are encrypted, a one-line error; served like any document."""
import io
import zipfile

import pytest
from lxml import etree

from pipeline.documents import detect_format, open_document, translate_document

from stand_ins import recording, suffixed

CONTAINER = b"""<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>
"""
OPF = b"""<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id" xml:lang="en">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="id">urn:uuid:1234</dc:identifier>
    <dc:title>The Little House</dc:title>
    <dc:creator>Jane Doe</dc:creator>
    <dc:language>en-US</dc:language>
    <dc:description>&lt;p&gt;A story about a small house.&lt;/p&gt;</dc:description>
    <meta property="dcterms:modified">2024-01-01T00:00:00Z</meta>
  </metadata>
  <manifest>
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>
    <item id="c1" href="text/chapter%201.xhtml" media-type="application/xhtml+xml"/>
    <item id="css" href="style.css" media-type="text/css"/>
    <item id="img" href="cover.png" media-type="image/png"/>
  </manifest>
  <spine toc="ncx"><itemref idref="c1"/></spine>
</package>
"""
NAV = b"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang="en" xml:lang="en">
<head><title>Contents</title></head>
<body><nav epub:type="toc"><ol><li><a href="text/chapter%201.xhtml">The first chapter</a></li></ol></nav></body>
</html>
"""
CHAPTER = b"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en">
<head><title>The first chapter</title><link rel="stylesheet" href="../style.css"/></head>
<body>
<h1>The first chapter</h1>
<p>The house was small&nbsp;and white.<br/>It had a red door.</p>
<p><img src="../cover.png" alt="The red door"/></p>
<pre><code>print("hello world")</code></pre>
</body>
</html>
"""
NCX = b"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE ncx PUBLIC "-//NISO//DTD ncx 2005-1//EN" "http://www.daisy.org/z3986/2005/ncx-2005-1.dtd">
<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1" xml:lang="en">
  <head><meta name="dtb:uid" content="urn:uuid:1234"/></head>
  <docTitle><text>The Little House</text></docTitle>
  <navMap><navPoint id="n1" playOrder="1"><navLabel><text>The first chapter</text></navLabel>
  <content src="text/chapter%201.xhtml"/></navPoint></navMap>
</ncx>
"""
PICTURE = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


def book(mimetype_last: bool = False, **replaced: bytes) -> bytes:
    """A small EPUB 3 book (with an EPUB 2 NCX too); `replaced`: entries by name (`container`, `opf`, ...) or
    extra ones (a path with a slash)."""
    parts = {"mimetype": b"application/epub+zip", "META-INF/container.xml": CONTAINER, "OEBPS/content.opf": OPF,
             "OEBPS/nav.xhtml": NAV, "OEBPS/toc.ncx": NCX, "OEBPS/text/chapter 1.xhtml": CHAPTER,
             "OEBPS/style.css": b"p { margin: 0 }", "OEBPS/cover.png": PICTURE}
    names = {"container": "META-INF/container.xml", "opf": "OEBPS/content.opf", "chapter": "OEBPS/text/chapter 1.xhtml"}
    for key, data in replaced.items():
        parts[names.get(key, key)] = data
    order = [name for name in parts if name != "mimetype"] + ["mimetype"] if mimetype_last else list(parts)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        for name in order:
            stored = name in ("mimetype", "OEBPS/cover.png")
            package.writestr(zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0)), parts[name],
                             zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED)
    return out.getvalue()


def entries(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        return {name: package.read(name) for name in package.namelist()}


def test_chapters_tables_of_contents_and_metadata_are_translated():
    translate, seen = recording(suffixed)
    out = entries(translate_document(None, book(), name="house.epub", translate=translate))
    chapter = out["OEBPS/text/chapter 1.xhtml"].decode()
    assert "<h1>The-it first-it chapter-it</h1>" in chapter and 'alt="The-it red-it door-it"' in chapter
    assert "small-it&#160;and-it white-it.<br/>It had-it a red-it door-it.</p>" in chapter
    assert '<pre><code>print("hello world")</code></pre>' in chapter            # code is kept
    assert ">The-it first-it chapter-it</a>" in out["OEBPS/nav.xhtml"].decode()
    ncx = out["OEBPS/toc.ncx"].decode()
    assert "<docTitle><text>The-it Little-it House-it</text></docTitle>" in ncx
    assert "<navLabel><text>The-it first-it chapter-it</text></navLabel>" in ncx
    opf = out["OEBPS/content.opf"].decode()
    assert "<dc:title>The-it Little-it House-it</dc:title>" in opf
    assert "<dc:description>&lt;p&gt;A story-it about-it a small-it house-it.&lt;/p&gt;</dc:description>" in opf
    assert "<dc:creator>Jane Doe</dc:creator>" in opf and "urn:uuid:1234" in opf and "2024-01-01T00:00:00Z" in opf
    assert "Jane Doe" not in seen and not any("hello" in text for text in seen)


def test_the_book_says_it_is_in_the_target_language():
    out = entries(translate_document(None, book(), name="house.epub", translate=suffixed))
    opf = out["OEBPS/content.opf"].decode()
    assert "<dc:language>it</dc:language>" in opf and 'xml:lang="it"' in opf
    assert 'xml:lang="it"' in out["OEBPS/toc.ncx"].decode()
    assert 'xml:lang="it"' in out["OEBPS/text/chapter 1.xhtml"].decode()
    assert 'lang="it" xml:lang="it"' in out["OEBPS/nav.xhtml"].decode()


def test_everything_else_comes_back_byte_for_byte_with_mimetype_first_and_stored():
    source = book(mimetype_last=True)                 # a tool that wrote it last: the book is mended
    out = translate_document(None, source, name="house.epub", translate=suffixed)
    with zipfile.ZipFile(io.BytesIO(out)) as package:
        items = package.infolist()
        assert items[0].filename == "mimetype" and items[0].compress_type == zipfile.ZIP_STORED
        assert out[30:30 + len("mimetype")] == b"mimetype" and out[38:58] == b"application/epub+zip"   # OCF's rule
        with zipfile.ZipFile(io.BytesIO(source)) as original:
            assert [i.filename for i in items[1:]] == [i.filename for i in original.infolist()][:-1]
            assert [i.compress_type for i in items[1:]] == [i.compress_type for i in original.infolist()][:-1]
    translated, before = entries(out), entries(source)
    for name in ("META-INF/container.xml", "OEBPS/style.css", "OEBPS/cover.png", "mimetype"):
        assert translated[name] == before[name]
    for name in ("OEBPS/content.opf", "OEBPS/toc.ncx", "OEBPS/nav.xhtml", "OEBPS/text/chapter 1.xhtml"):
        etree.fromstring(translated[name])                         # still well-formed XML
        prolog = [line for line in before[name].split(b"\n") if line.startswith((b"<?xml", b"<!DOCTYPE"))]
        assert translated[name].split(b"\n")[:len(prolog)] == prolog                  # declaration, doctype


def test_an_epub_is_told_by_its_content():
    assert detect_format(book()) == "epub"
    translated = translate_document(None, book(), translate=suffixed)
    assert b"The-it first-it chapter-it" in entries(translated)["OEBPS/text/chapter 1.xhtml"]


ENCRYPTED = b"""<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container"
  xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>
  <enc:EncryptionMethod Algorithm="%s"/>
  <enc:CipherData><enc:CipherReference URI="%s"/></enc:CipherData></enc:EncryptedData></encryption>"""


@pytest.mark.parametrize("data, message", [
    (b"PK\x03\x04 not really a zip", r"^b\.epub: not an \.epub file \(not a zip package\)$"),
    (book(container=b"<container/>"), r"^b\.epub: META-INF/container\.xml names no package document in the book"),
    (book(opf=OPF.replace(b"</package>", b"")), r"^b\.epub: OEBPS/content\.opf line \d+: not well-formed XML"),
    (book(**{"META-INF/encryption.xml": ENCRYPTED % (b"http://www.w3.org/2001/04/xmlenc#aes256-cbc",
                                                     b"OEBPS/text/chapter%201.xhtml")}),
     r"^b\.epub: its chapters are encrypted \(DRM\)"),
])
def test_a_broken_or_encrypted_book_is_a_one_line_error(data, message):
    with pytest.raises(ValueError, match=message) as caught:
        open_document(data, name="b.epub")
    assert "\n" not in str(caught.value)


def test_obfuscated_fonts_are_no_obstacle_and_a_book_over_the_limit_is_refused():
    font = ENCRYPTED % (b"http://www.idpf.org/2008/embedding", b"OEBPS/font.otf")
    data = book(**{"META-INF/encryption.xml": font, "OEBPS/font.otf": b"\x00\x01" * 100})
    assert entries(translate_document(None, data, name="b.epub", translate=suffixed))["OEBPS/font.otf"] == \
        b"\x00\x01" * 100
    with pytest.raises(ValueError, match=r"^b\.epub: unpacks to [0-9,]+ bytes, over the 1,000-byte limit"):
        open_document(book(), name="b.epub", max_unpacked_bytes=1000)


def test_a_book_is_translated_over_http_as_libretranslate_clients_send_it():
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from pipeline.service import ServiceSettings, create_app

    class StandIn:
        def translate(self, sentences, beam=None, batch_size=None, glossary=None):
            return suffixed(sentences)

    with TestClient(create_app(StandIn(), ServiceSettings(beam=1, max_wait_ms=1))) as client:
        assert ".epub" in client.get("/frontend/settings").json()["supportedFilesFormat"]
        response = client.post("/translate_file", files={"file": ("house.epub", book())},
                               data={"source": "en", "target": "it"})
        assert response.status_code == 200, response.text
        download = client.get(response.json()["translatedFileUrl"])
        assert download.headers["content-type"] == "application/epub+zip"
        assert b"The-it first-it chapter-it" in entries(download.content)["OEBPS/text/chapter 1.xhtml"]


SIGIL_OPF = """<?xml version="1.0" encoding="utf-8"?>
<package version="3.0" unique-identifier="BookId" xmlns="http://www.idpf.org/2007/opf">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:opf="http://www.idpf.org/2007/opf">
    <dc:title>The Little House</dc:title>
    <dc:creator opf:role='aut'>Flann O&#8217;Brien</dc:creator>
    <dc:rights></dc:rights>
    <dc:language>en</dc:language>
    <meta name="cover" content="cover-image" />
  </metadata>
  <manifest>
    <item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>
    <item id="c1" href="text/chapter%201.xhtml" media-type="application/xhtml+xml"/>
  </manifest>
  <spine toc="ncx"><itemref idref="c1"/></spine>
</package>
"""


@pytest.mark.parametrize("encoding, mark", [("utf-8", b""), ("utf-8", b"\xef\xbb\xbf"), ("utf-16-le", b"\xff\xfe"),
                                            ("utf-16-be", b"\xfe\xff")])
def test_the_package_comes_back_as_written_but_for_its_translated_texts(encoding, mark):
    """lxml wrote the whole package anew (the namespace first, its own quotes, `<dc:rights/>`, the character
    reference as a character); with a byte-order mark it cut the declaration's `>` (the book no longer opened)."""
    source = SIGIL_OPF.replace('encoding="utf-8"', f'encoding="{encoding[:6]}"')
    out = entries(translate_document(None, book(opf=mark + source.encode(encoding)), name="b.epub",
                                     translate=suffixed))["OEBPS/content.opf"]
    assert out.startswith(mark)
    expected = source.replace("The Little House", "The-it Little-it House-it").replace(
        "<dc:language>en<", "<dc:language>it<")
    assert out[len(mark):].decode(encoding) == expected
    assert etree.fromstring(out).find(".//{http://purl.org/dc/elements/1.1/}title").text == "The-it Little-it House-it"


def test_the_ncx_author_is_a_name_and_is_not_translated():
    ncx = NCX.replace(b"</docTitle>", b"</docTitle>\n  <docAuthor><text>Baker, John</text></docAuthor>")
    translate, seen = recording(suffixed)
    out = entries(translate_document(None, book(**{"OEBPS/toc.ncx": ncx}), name="b.epub", translate=translate))
    assert b"<docAuthor><text>Baker, John</text></docAuthor>" in out["OEBPS/toc.ncx"]
    assert "Baker, John" not in seen and b"The-it Little-it House-it" in out["OEBPS/toc.ncx"]
