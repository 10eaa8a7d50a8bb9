"""Documents and glossaries both ways (issue 39): a run translates English -> Italian or Italian -> English, and
the documents' door, its formats and the glossary files follow the run's direction. Italian -> English through
the tiny Italian -> English Keras engine (`tiny_it_en_engine`); what only the direction decides, through plain
callables with `direction=`."""
import io

import polib
import pytest

from pipeline.documents import open_document, run_direction, translate_document
from pipeline.documents import gettext
from pipeline.documents.encoding import Encoded
from pipeline.glossary import Glossary
from pipeline.language import Direction
from roundtrip import problems
from test_documents import docx_fixture

IT_EN = Direction("it", "en")


def upper(texts):
    return [text.upper() for text in texts]


# -- the door -----------------------------------------------------------------------------------------------------
def test_the_door_takes_an_engine_s_direction_else_the_keyword_else_english_italian(tiny_it_en_engine):
    assert tiny_it_en_engine.direction == IT_EN
    assert run_direction(tiny_it_en_engine) == IT_EN and run_direction(tiny_it_en_engine, IT_EN) == IT_EN
    assert run_direction(upper) == Direction("en", "it") and run_direction(upper, IT_EN) == IT_EN
    with pytest.raises(ValueError, match=r"^direction English -> Italian asked of an engine that translates "
                                         r"Italian -> English$"):
        translate_document(tiny_it_en_engine, b"Ciao.\n", name="a.txt", direction=Direction("en", "it"))


# -- gettext ------------------------------------------------------------------------------------------------------
ITALIAN_MSGIDS = rb'''# Un catalogo scritto in italiano.
msgid ""
msgstr ""
"Project-Id-Version: esempio\n"
"Content-Type: text/plain; charset=UTF-8\n"
"Content-Transfer-Encoding: 8bit\n"

#: app.py:3
msgid "Apri il file."
msgstr ""

#: app.py:5
msgid "Salva le modifiche prima di uscire."
msgstr ""

#: app.py:7
#, python-format
msgid "Il file %(name)s non esiste."
msgstr ""

#: app.py:9
#, python-format
msgid "Hai un messaggio nuovo."
msgid_plural "Hai %(count)d messaggi nuovi."
msgstr[0] ""
msgstr[1] ""
'''

ENGLISH_MSGIDS = rb'''msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\n"

msgid "Open the file."
msgstr ""

msgid "Save your changes before quitting."
msgstr ""

#, python-format
msgid "The file %(name)s does not exist."
msgstr ""
'''


def with_header(catalog: bytes, line: str) -> bytes:
    return catalog.replace(b'"Content-Type:', f'"{line}\\n"\n"Content-Type:'.encode(), 1)


def test_an_italian_catalog_through_the_italian_english_run_comes_back_english(tiny_it_en_engine):
    out = translate_document(tiny_it_en_engine, ITALIAN_MSGIDS, name="catalogo.pot", beam=1)
    assert problems("catalogo.pot", ITALIAN_MSGIDS, out) == []                 # msgfmt -c, placeholders, entries
    catalog = polib.pofile(out.decode())
    assert catalog.metadata["Language"] == "en"
    assert catalog.metadata["Plural-Forms"] == "nplurals=2; plural=(n != 1);"
    entries = [entry for entry in catalog if entry.msgid]
    assert len(entries) == 4 and all("fuzzy" in entry.flags for entry in entries)
    assert all(entry.msgstr.strip() for entry in entries if not entry.msgid_plural)
    plural = next(entry for entry in entries if entry.msgid_plural)
    assert all(form.strip() for form in plural.msgstr_plural.values()) and "%(count)d" in plural.msgstr_plural[1]
    assert next(e for e in entries if "%(name)s" in e.msgid).msgstr.count("%(name)s") == 1


def test_an_italian_source_catalog_is_redone_and_written_back_as_english():
    source = with_header(ITALIAN_MSGIDS, "Language: it_IT").replace(
        b'msgid "Apri il file."\nmsgstr ""', b'msgid "Apri il file."\nmsgstr "Apri il file."')
    out = polib.pofile(translate_document(upper, source, name="it.po", direction=IT_EN).decode())
    assert out.metadata["Language"] == "en"
    assert {entry.msgid: entry.msgstr for entry in out if not entry.msgid_plural}["Apri il file."] == "APRI IL FILE."
    # the same catalog on an English -> Italian run: a catalog for Italian, whose msgids are Italian
    with pytest.raises(ValueError, match=r"^it\.po: its msgids are Italian; this run translates English -> Italian; "
                                         r"use an Italian -> English run$"):
        translate_document(upper, source, name="it.po")


def test_an_english_catalog_on_the_italian_english_run_is_one_line(tiny_it_en_engine):
    message = (r"^catalog\.po: its msgids are English; this run translates Italian -> English; "
               r"use an English -> Italian run$")
    with pytest.raises(ValueError, match=message) as caught:
        translate_document(tiny_it_en_engine, ENGLISH_MSGIDS, name="catalog.po")
    assert "\n" not in str(caught.value)
    with pytest.raises(ValueError, match=message):                           # refused on opening, given the run
        open_document(ENGLISH_MSGIDS, name="catalog.po", direction=IT_EN)
    # and unchanged the other way
    out = polib.pofile(translate_document(upper, ENGLISH_MSGIDS, name="catalog.po").decode())
    assert out.metadata["Language"] == "it" and out[0].msgstr == "OPEN THE FILE."


def test_x_source_language_decides_over_detection():
    short = b'msgid ""\nmsgstr ""\n"X-Source-Language: it\\n"\n\nmsgid "Open"\nmsgstr ""\n'     # reads as English
    out = polib.pofile(translate_document(upper, short, name="a.po", direction=IT_EN).decode())
    assert out.metadata["Language"] == "en" and out[0].msgstr == "OPEN"
    with pytest.raises(ValueError, match=r"^a\.po: its msgids are Italian \(X-Source-Language\); this run "
                                         r"translates English -> Italian; use an Italian -> English run$"):
        translate_document(upper, short, name="a.po")
    german = short.replace(b"X-Source-Language: it", b"X-Source-Language: de")
    with pytest.raises(ValueError, match=r"^a\.po: its msgids are in 'de' \(X-Source-Language\); this run "
                                         r"translates Italian -> English, from Italian msgids$"):
        translate_document(upper, german, name="a.po", direction=IT_EN)


def test_without_lingua_msgids_are_taken_as_english(monkeypatch):
    monkeypatch.setattr(gettext, "catalog_detector", lambda: None)
    assert gettext.msgids_language(["Apri il file.", "Salva le modifiche prima di uscire."]) == "en"
    out = polib.pofile(translate_document(upper, ITALIAN_MSGIDS, name="a.pot").decode())
    assert out.metadata["Language"] == "it"                                 # translated as the convention says



@pytest.mark.parametrize("msgids", [["Username", "Password", "Login"], ["Hello", "Hello %s"], ["Pizza", "Camera"],
                                    ["Username", "Password", "Login", "Hello", "Hello %s", "Pizza", "Camera"],
                                    ["Apri il file", "Salva"]])
def test_a_short_catalog_is_not_taken_for_italian(msgids):
    pytest.importorskip("lingua")
    assert gettext.msgids_language(msgids) == "en"
    catalog = b'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n' + b"".join(
        b'\nmsgid "%s"\nmsgstr ""\n' % msgid.encode() for msgid in msgids)
    out = polib.pofile(translate_document(upper, catalog, name="short.po").decode())
    assert out.metadata["Language"] == "it"
    assert [e.msgstr for e in out] == [m.upper().replace("%S", "%s") for m in msgids]
    assert gettext.msgids_language(["Apri il file.", "Salva le modifiche prima di uscire.", "Il file non esiste."]) \
        == "it"

def test_a_catalog_opened_without_a_direction_follows_the_run_that_translates_it(tiny_it_en_engine):
    document = open_document(ITALIAN_MSGIDS, name="catalogo.pot")           # the CLI opens before it loads a run
    out = polib.pofile(translate_document(tiny_it_en_engine, document, name="catalogo.pot", beam=1).decode())
    assert out.metadata["Language"] == "en" and all(entry.msgstr or entry.msgstr_plural for entry in out)
    english = with_header(ENGLISH_MSGIDS, "Language: en")     # on this run: a finished English catalog's template
    document = open_document(english, name="catalog.po")
    with pytest.raises(ValueError, match=r"^catalog\.po: its msgids are English; this run translates Italian"):
        translate_document(tiny_it_en_engine, document, name="catalog.po")


def test_other_catalog_languages_are_refused_naming_the_run_s_languages():
    german = with_header(ITALIAN_MSGIDS, "Language: de")
    with pytest.raises(ValueError, match=r"^de\.po: a catalog for language 'de'; expected an English one "
                                         r"\(Language: en\), an Italian source catalog \(Language: it\) or a "
                                         r"template without a language$"):
        open_document(german, name="de.po", direction=IT_EN)


# -- subtitles, Markdown, HTML and office files ---------------------------------------------------------------------
SRT = """1
00:00:01,000 --> 00:00:03,500
Buongiorno, come stai?

2
00:00:04,000 --> 00:00:06,000
<i>Il treno parte alle otto.</i>

3
00:00:06,500 --> 00:00:09,000
- Dov'è la stazione?
- È vicino alla piazza.
"""

MARKDOWN = """# La mia casa

Questa è la **mia** casa. Vedi [il sito](https://example.org/casa) e `config.yaml`.

- Il gatto dorme.
- La cena è pronta.

```python
print("ciao")
```
"""

HTML = """<!DOCTYPE html>
<html lang="it-IT">
<head><meta charset="utf-8"><title>La stazione</title></head>
<body>
<h1 id="top">Benvenuti alla stazione</h1>
<p>Il treno parte <b>alle otto</b>. <img src="treno.png" alt="Un treno rosso"></p>
<p lang="fr">Bonjour à tous.</p>
<pre>non tradurre</pre>
</body>
</html>
"""


def docx_bytes() -> bytes:
    return docx_fixture("La stazione", ("Il treno parte ", "alle otto", " dalla stazione centrale."),
                        (("Il gatto dorme.", "La cena è pronta."),), header=None, footer=None)


def docx_texts(data: bytes) -> list[str]:
    import docx

    document = docx.Document(io.BytesIO(data))
    return [p.text for p in document.paragraphs] + [cell.text for table in document.tables for row in table.rows
                                                    for cell in row.cells]


@pytest.mark.parametrize("name", ["dialogo.srt", "casa.md", "stazione.html", "stazione.docx"])
def test_each_family_keeps_its_structure_through_the_italian_english_run(tiny_it_en_engine, name):
    original = {".srt": SRT.encode(), ".md": MARKDOWN.encode(), ".html": HTML.encode(),
                ".docx": docx_bytes()}[name[name.rindex("."):]]
    out = translate_document(tiny_it_en_engine, original, name=name, beam=1)
    expected = original.replace(b'<html lang="it-IT">', b'<html lang="en">')     # the page is English now
    assert problems(name, expected, out) == []
    if name.endswith(".docx"):
        assert docx_texts(out) != docx_texts(original) and all(text.strip() for text in docx_texts(out))
    else:
        assert out != expected
    if name.endswith(".html"):
        assert b'<html lang="en">' in out and b'<p lang="fr">' in out and b"<pre>non tradurre</pre>" in out
    if name.endswith(".md"):
        assert b"```python\nprint(\"ciao\")\n```" in out and b"https://example.org/casa" in out


def test_the_root_language_follows_the_direction_and_only_the_source_s():
    page = b'<html lang="en" xml:lang="en-GB"><body><p>Hello</p></body></html>'
    assert b'<html lang="it" xml:lang="it">' in translate_document(upper, page, name="a.html")
    assert b'<html lang="en" xml:lang="en-GB">' in translate_document(upper, page, name="a.html", direction=IT_EN)
    italian = page.replace(b'lang="en"', b'lang="it"')
    assert b'<html lang="en" xml:lang="en-GB">' in translate_document(upper, italian, name="a.html",
                                                                      direction=IT_EN)
    assert b"<html><body>" in translate_document(upper, b"<html><body><p>Hi</p></body></html>", name="a.html")


def test_a_legacy_italian_subtitle_reads_as_windows_1252_and_is_written_back_in_it(tiny_it_en_engine):
    data = SRT.replace("Buongiorno", "Perché la città").encode("cp1252")
    decoded = Encoded(data, "vecchio.srt", detect=True)
    assert decoded.codec == "cp1252" and "Perché la città" in decoded.text and "Dov'è" in decoded.text
    out = translate_document(tiny_it_en_engine, data, name="vecchio.srt", beam=1)
    assert problems("vecchio.srt", data, out, "cp1252") == []
    out.decode("cp1252")


# -- glossaries ---------------------------------------------------------------------------------------------------
TBX = """<?xml version="1.0" encoding="UTF-8"?>
<martif type="TBX" xml:lang="it"><text><body>
<termEntry id="t1">
  <langSet xml:lang="en"><tig><term>platform</term></tig></langSet>
  <langSet xml:lang="it"><tig><term>binario</term></tig><tig><term>banchina</term></tig></langSet>
</termEntry>
<termEntry id="t2">
  <langSet xml:lang="it-IT"><tig><term>Zorblax</term></tig></langSet>
  <langSet xml:lang="en-US"><tig><term>Zorblax</term></tig></langSet>
</termEntry>
<termEntry id="t3"><langSet xml:lang="it"><tig><term>solo</term></tig></langSet></termEntry>
</body></text></martif>
"""


@pytest.fixture
def copying(tiny_it_en_engine):
    """The Italian -> English engine over a model that copies what it reads (the tiny model copies no number,
    nor any word it was handed): the terms written into its input, and restored, show in the output. Yields
    (engine, what the model read); the engine is as it was afterwards."""
    seen = []

    def copy(sentences, **options):
        seen.extend(sentences)
        return list(sentences)
    tiny_it_en_engine.translate_sentences = copy
    yield tiny_it_en_engine, seen
    del tiny_it_en_engine.translate_sentences


def test_a_do_not_translate_term_of_an_italian_glossary_comes_out_verbatim(tiny_it_en_engine, tmp_path):
    path = tmp_path / "termini.tsv"
    path.write_text("source\ttarget\nZorblax\tZorblax\nstazione\tstation\n", encoding="utf-8")
    out = tiny_it_en_engine.translate(["Zorblax è arrivato alla stazione."], beam=1, glossary=path)
    assert "Zorblax" in out[0] and out != tiny_it_en_engine.translate(["Zorblax è arrivato alla stazione."], beam=1)


def test_a_tsv_glossary_of_italian_terms_goes_in_through_placeholders(copying, tmp_path):
    engine, seen = copying
    path = tmp_path / "termini.tsv"
    path.write_text("source\ttarget\nZorblax\tZorblax\nstazione centrale\tcentral station\n", encoding="utf-8")
    glossary = Glossary.load(path, direction=IT_EN)
    assert {t.source: t.target for t in glossary.terms.values()} == {"Zorblax": "Zorblax",
                                                                     "stazione centrale": "central station"}
    out = engine.translate(["Zorblax dorme.", "Dov'è la stazione centrale?"], glossary=path,
                           glossary_style="placeholder")
    assert seen == ["70 dorme.", "Dov'è la 70?"]                 # the model reads numbers for the Italian terms
    assert out == ["Zorblax dorme.", "Dov'è la central station?"]          # and they come back English


def test_a_tbx_glossary_gives_each_italian_term_its_english(copying, tmp_path):
    engine, seen = copying
    path = tmp_path / "termini.tbx"
    path.write_text(TBX, encoding="utf-8")
    glossary = Glossary.load(path, direction=IT_EN)
    assert {t.source: t.target for t in glossary.terms.values()} == {"binario": "platform", "banchina": "platform",
                                                                     "Zorblax": "Zorblax"}
    assert {t.source: t.target for t in Glossary.load(path).terms.values()} == {"platform": "binario",
                                                                                "Zorblax": "Zorblax"}
    out = engine.translate(["Il treno è sul binario tre.", "Aspetta sulla banchina."], glossary=path)
    assert out == ["Il treno è sul platform tre.", "Aspetta sulla platform."]


@pytest.mark.parametrize("header", ["en\tit", "english\titalian", "target\tsource"])
def test_a_header_naming_the_columns_the_other_way_swaps_them(copying, tmp_path, header):
    engine, _ = copying
    path = tmp_path / "terms.tsv"
    path.write_text(f"{header}\nplatform\tbinario\nZorblax\tZorblax\n", encoding="utf-8")
    glossary = Glossary.load(path, direction=IT_EN)
    assert {t.source: t.target for t in glossary.terms.values()} == {"binario": "platform", "Zorblax": "Zorblax"}
    assert {t.source: t.target for t in Glossary.load(path).terms.values()} == (      # read for English -> Italian
        {"binario": "platform", "Zorblax": "Zorblax"} if header == "target\tsource"
        else {"platform": "binario", "Zorblax": "Zorblax"})
    assert engine.translate(["Il treno è sul binario tre."], glossary=path) == ["Il treno è sul platform tre."]


def test_office_language_tags_follow_the_italian_english_run():
    """Italian -> English: a Word document's Italian tags name English (en-US) and its English ones, now the
    target's, stay; the same document through English -> Italian is the other way round."""
    import re
    import zipfile

    import docx
    from docx.oxml import parse_xml

    document = docx.Document(io.BytesIO(docx_bytes()))
    for run, tag in zip(document.paragraphs[1].runs, ("it-IT", "it-CH", "en-GB")):
        run.element.get_or_add_rPr().append(parse_xml(
            f'<w:lang xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" w:val="{tag}"/>'))
    data = io.BytesIO()
    document.save(data)

    def tags(out: bytes) -> list[str]:
        with zipfile.ZipFile(io.BytesIO(out)) as package:
            return re.findall(r'<w:lang w:val="([\w-]+)"', package.read("word/document.xml").decode())

    assert tags(data.getvalue()) == ["it-IT", "it-CH", "en-GB"]
    assert tags(translate_document(upper, data.getvalue(), name="a.docx", direction=IT_EN)) == ["en-US", "en-US", "en-GB"]
    assert tags(translate_document(upper, data.getvalue(), name="a.docx")) == ["it-IT", "it-CH", "it-IT"]


def test_markdown_front_matter_language_follows_the_italian_english_run():
    out = translate_document(upper, b"---\nlang: it-IT\n---\n\nCiao.\n", name="a.md", direction=IT_EN)
    assert out == b"---\nlang: en-US\n---\n\nCIAO.\n"
