"""Documents: each format round-trips a fixture (tests/data/documents/, office files built here) with every tag,
placeholder, timing, code span and link of its input in its output, and opens again in its own library; bad
files give one clear error. Two stand-in models: one that keeps markup (the whole-segment pass is kept) and one
that mangles it, as a real model sometimes does (the text between the spans is translated piece by piece)."""
import io
import re
from collections import Counter
from pathlib import Path

import pytest

from pipeline.documents import (FORMATS, Segment, detect_format, open_document, translate_document,
                                translate_segments)

FIXTURES = Path(__file__).parent / "data" / "documents"
MARKUP = re.compile(r"[`*%{}<>_&\[\]()\\|!#]")


def faithful(texts):
    """A model that translates words and keeps every mark: "Word" -> "Word-it"."""
    return [re.sub(r"(?<![^\s(])([A-Za-z]{3,})(?=[\s.,;:?!)]|$)", r"\1-it", text) for text in texts]


def mangling(texts):
    """A model that loses markup: every mark dropped, letters upper-cased."""
    return [MARKUP.sub("", text).upper() for text in texts]


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def translated(name: str, translate, **kwargs) -> str:
    return translate_document(None, FIXTURES / name, translate=translate, **kwargs).decode("utf-8")


# -- the shared path -------------------------------------------------------------------------------------------
def test_a_segment_whose_spans_are_lost_is_translated_between_them():
    kept, lost, plain = (Segment("Open <b>%s</b> now.", ["<b>", "%s", "</b>"]),
                         Segment("Ask <i>Tom</i>.", ["<i>", "</i>"]), Segment("  Hello.  "))
    words = {"Open": "Apri", "now": "ora", "Ask": "Chiedi", "Hello": "Ciao"}
    calls = []

    def model(texts):                      # knows four words, and drops <i> tags
        calls.append(list(texts))
        return [re.sub(r"\w+", lambda m: words.get(m.group(0), m.group(0)), text).replace("<i>", "").replace("</i>", "")
                for text in texts]

    translate_segments([kept, lost, plain, Segment("...")], model)
    assert calls == [["Open <b>%s</b> now.", "Ask <i>Tom</i>.", "Hello."], ["Ask", "Tom"]]
    assert (kept.translation, kept.whole, kept.parts) == ("Apri <b>%s</b> ora.", True, None)
    assert (lost.translation, lost.whole) == ("Chiedi <i>Tom</i>.", False)
    assert lost.parts == ["Chiedi ", "<i>", "Tom", "</i>", "."]
    assert plain.translation == "  Ciao.  "                           # the spaces around a segment are kept


def test_numbered_spans_are_read_as_numbers_the_text_does_not_hold():
    segment = Segment("Copy %s to %(dir)s in 1970 (70 %%).", ["%s", "%(dir)s", "%%"], numbered=True)
    assert segment.first_text() == "Copy 71 to 72 in 1970 (70 73)."      # 70 is in the text: skipped
    seen = []

    def model(texts):
        seen.extend(texts)
        return [text.replace("Copy", "Copia").replace(" to ", " in ") for text in texts]

    translate_segments([segment], model)
    assert seen == ["Copy 71 to 72 in 1970 (70 73)."]
    assert (segment.translation, segment.whole) == ("Copia %s in %(dir)s in 1970 (70 %%).", True)
    assert segment.restored("Copia 71 e 71 in 72 (73).") is None           # a number twice: not trusted
    touching = Segment("Up 70%% today", ["%%"], numbered=True)              # "7070" would read as one number
    assert touching.stand_ins() is None and touching.first_text() == "Up 70%% today"


def test_detection_by_extension_then_content():
    assert detect_format(b"", "a.SRT") == "srt" and detect_format(b"", "x.pot") == "po"
    assert detect_format(fixture("talk.vtt")) == "vtt" and detect_format(fixture("talk.srt")) == "srt"
    assert detect_format(fixture("app.po")) == "po" and detect_format(fixture("page.html")) == "html"
    with pytest.raises(ValueError, match=r"^notes: cannot tell the document's format from its name or content; "
                                         r"expected one of .*\.docx"):
        detect_format(b"just some words", "notes")


# -- one invariant test per format -----------------------------------------------------------------------------
@pytest.mark.parametrize("model", [faithful, mangling], ids=["faithful", "mangling"])
def test_srt_keeps_numbers_timings_positions_and_tags(model):
    import srt

    source = fixture("talk.srt").decode()
    out = translated("talk.srt", model)
    cues = list(srt.parse(out))
    assert [(c.index, c.start, c.end, c.proprietary) for c in cues] == \
        [(c.index, c.start, c.end, c.proprietary) for c in srt.parse(source)]
    tags = re.compile(r"<[^>]+>|\{\\[^}]*\}")
    assert Counter(tags.findall(out)) == Counter(tags.findall(source))
    assert cues[0].content.startswith("<i>") and cues[0].content.endswith("</i>")
    assert cues[1].content.split("\n")[0].startswith("- ") and cues[1].content.count("\n") == 1   # one line a speaker
    for cue in (cues[0], cues[2], cues[3]):      # re-wrapped: lines of 42 characters, two where the text fits
        lines = tags.sub("", cue.content).split("\n")
        assert all(len(line) <= 42 for line in lines) and (len(lines) <= 2 or len(" ".join(lines)) > 84)
    assert "STATION" in out.upper() and ("station-it" in out or "STATION" in out)


@pytest.mark.parametrize("model", [faithful, mangling], ids=["faithful", "mangling"])
def test_vtt_keeps_header_blocks_identifiers_settings_and_tags(model):
    import webvtt

    source = fixture("talk.vtt").decode()
    out = translated("talk.vtt", model)
    before, after = webvtt.from_string(source), webvtt.from_string(out)
    assert [(c.identifier, c.start, c.end, str(c.settings)) for c in after.captions] == \
        [(c.identifier, c.start, c.end, str(c.settings)) for c in before.captions]
    for block in ("WEBVTT - A short talk\nKind: captions", "STYLE\n::cue { color: yellow }", "NOTE written for the tests"):
        assert block in out
    tags = re.compile(r"<[^>]+>")
    assert Counter(tags.findall(out)) == Counter(tags.findall(source))
    assert after.captions[0].raw_text.startswith("<v Roger>")


@pytest.mark.parametrize("model", [faithful, mangling], ids=["faithful", "mangling"])
def test_po_keeps_placeholders_accelerators_plurals_comments_and_old_translations(model):
    import polib

    out = translated("app.po", model)
    catalog, source = polib.pofile(out), polib.pofile(fixture("app.po").decode())
    placeholder = re.compile(r"%\(\w+\)[sd]|%[sd]|\{\w*\}")
    by_id = {(e.msgctxt, e.msgid): e for e in catalog}
    for old in source:
        new = by_id[(old.msgctxt, old.msgid)]
        assert (new.comment, new.tcomment, new.occurrences) == (old.comment, old.tcomment, old.occurrences)
        if old.msgstr or old.obsolete:                            # translated before: kept, not fuzzy
            assert new.msgstr == old.msgstr and "fuzzy" not in new.flags
            continue
        assert new.flags[0] == "fuzzy" and set(old.flags) <= set(new.flags)
        if old.msgid_plural:
            assert sorted(new.msgstr_plural) == [0, 1]
            assert Counter(placeholder.findall(new.msgstr_plural[1])) == Counter(placeholder.findall(old.msgid_plural))
        else:
            assert new.msgstr and Counter(placeholder.findall(new.msgstr)) == Counter(placeholder.findall(old.msgid))
            assert new.msgstr.endswith("\n") == old.msgid.endswith("\n")
            assert new.msgstr.count("\n") == old.msgid.count("\n")
    assert by_id[("menu", "_Save As…")].msgstr.count("_") == 1
    assert [e.msgid for e in catalog.obsolete_entries()] == ["Old message"]
    assert catalog.metadata["Plural-Forms"] == "nplurals=2; plural=(n != 1);"
    assert out.startswith("# Italian translation of the Example app.\n")


def test_po_overwrite_and_templates():
    import polib

    out = polib.pofile(translated("app.po", faithful, overwrite=True))
    assert next(e for e in out if e.msgid == "Quit").msgstr == "Quit-it"
    template = b'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=CHARSET\\n"\n' \
               b'"Plural-Forms: nplurals=INTEGER; plural=EXPRESSION;\\n"\n\nmsgid "Open"\nmsgstr ""\n'
    catalog = polib.pofile(translate_document(None, template, name="app.pot", translate=faithful).decode())
    assert catalog.metadata["Plural-Forms"] == "nplurals=2; plural=(n != 1);" and catalog.metadata["Language"] == "it"
    assert catalog.metadata["Content-Type"] == "text/plain; charset=UTF-8" and catalog[0].msgstr == "Open-it"


@pytest.mark.parametrize("model", [faithful, mangling], ids=["faithful", "mangling"])
def test_markdown_keeps_code_links_front_matter_and_structure(model):
    from markdown_it import MarkdownIt

    source = fixture("guide.md").decode()
    out = translated("guide.md", model)
    assert out.startswith(("---\ntitle: Getting-it started-it\ntags: [install, guide]\n---\n",     # a shown value
                           "---\ntitle: GETTING STARTED\ntags: [install, guide]\n---\n"))        # translated
    for kept in ("`pip install example`", "(https://example.org/manual \"The manual\")", "<https://example.org>",
                 "```bash\nexample --config ~/.example.yaml  # a comment that stays English\n```",
                 "`--quiet`", "`--help`", "![The main window](images/main-window.png)"):
        assert kept in out

    def shape(text):
        tokens = MarkdownIt("commonmark").enable("table").parse(text)
        return [(t.type, t.tag) for t in tokens if t.type != "inline"], \
            Counter(c.type for t in tokens if t.type == "inline" for c in t.children if c.type not in ("text", "softbreak"))
    assert shape(out) == shape(source)
    assert "# Installing-it the-it program-it\n" in out or "# INSTALLING THE PROGRAM\n" in out


@pytest.mark.parametrize("model", [faithful, mangling], ids=["faithful", "mangling"])
def test_html_keeps_tags_attributes_code_and_entities(model):
    from bs4 import BeautifulSoup

    source = fixture("page.html").decode()
    out = translated("page.html", model)

    def skeleton(text):
        soup = BeautifulSoup(text, "html.parser")
        return [(tag.name, {k: v for k, v in tag.attrs.items() if k not in ("alt", "title")}) for tag in soup.find_all(True)], \
            [tag.get_text() for tag in soup.find_all(["script", "style", "pre", "code"])]
    assert '<html lang="en">' in source and '<html lang="it">' in out          # the page is now Italian
    assert skeleton(out) == skeleton(source.replace('<html lang="en">', '<html lang="it">'))
    for entity in ("&mdash;", "&amp;", "&copy;"):
        assert out.count(entity) == source.count(entity) or model is mangling      # which drops "&" from text
    assert "<!-- a comment that stays -->" in out and out.startswith("<!DOCTYPE html>")
    soup = BeautifulSoup(out, "html.parser")
    assert soup.img["alt"] != "Books on the shelves" and soup.a["title"] != "Our opening hours"


@pytest.mark.parametrize("model", [faithful, mangling], ids=["faithful", "mangling"])
def test_txt_keeps_paragraphs_blank_lines_and_rewraps_wrapped_prose(model):
    source = fixture("notes.txt").decode()
    out = translated("notes.txt", model, format="txt")
    blocks = lambda text: [len(block.split("\n")) for block in re.split(r"\n\s*\n", text)]   # noqa: E731
    assert re.findall(r"\n\s*\n+", out) == re.findall(r"\n\s*\n+", source)                 # the blank lines
    assert blocks(out)[0] == 2 and blocks(out)[2:] == blocks(source)[2:]                      # lines kept
    wrapped = re.split(r"\n\s*\n", out)[1].split("\n")
    assert all(len(line) <= 82 for line in wrapped) and len(wrapped) >= 3                      # re-wrapped
    crlf = translate_document(None, source.replace("\n", "\r\n").encode("utf-8-sig"), "txt", translate=model)
    assert crlf.startswith(b"\xef\xbb\xbf") and b"\n" not in crlf.replace(b"\r\n", b"")


# -- office files, built here with their own libraries ------------------------------------------------------------
def docx_fixture(heading: str = "Saving your work", runs: tuple[str, str, str] = ("Press ", "Ctrl+S", " to save the file."),
                 table: tuple[tuple[str, str], ...] = (("Name", "The name of the file"), ("Size", "How big it is")),
                 header: str | None = "User guide", footer: str | None = "Page footer text") -> bytes:
    """A .docx built with python-docx: a heading, a paragraph whose middle run is bold, a two-column table, and
    optionally a header and a footer."""
    import docx

    document = docx.Document()
    document.add_heading(heading, level=1)
    before, bold, after = runs
    paragraph = document.add_paragraph(before)
    paragraph.add_run(bold).bold = True
    paragraph.add_run(after)
    cells = document.add_table(rows=len(table), cols=2)
    for row, (key, meaning) in enumerate(table):
        cells.cell(row, 0).text, cells.cell(row, 1).text = key, meaning
    section = document.sections[0]
    if header is not None:
        section.header.paragraphs[0].text = header
    if footer is not None:
        section.footer.paragraphs[0].text = footer
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_docx_keeps_structure_and_the_formatting_of_runs_that_map():
    import docx

    out = docx.Document(io.BytesIO(translate_document(None, docx_fixture(), name="guide.docx", translate=faithful)))
    heading, paragraph = out.paragraphs[0], out.paragraphs[1]
    assert heading.style.name == "Heading 1" and heading.text == "Saving-it your-it work-it"
    assert [(run.text, run.bold) for run in paragraph.runs] == [("Press-it ", None), ("Ctrl+S", True),
                                                                 (" to save-it the-it file-it.", None)]
    assert [[cell.text for cell in row.cells] for row in out.tables[0].rows] == \
        [["Name-it", "The-it name-it of the-it file-it"], ["Size-it", "How-it big-it it is"]]
    assert out.sections[0].header.paragraphs[0].text == "User-it guide-it"
    assert out.sections[0].footer.paragraphs[0].text == "Page-it footer-it text-it"


def test_docx_text_boxes_are_translated():
    import docx
    from docx.oxml import parse_xml

    document = docx.Document(io.BytesIO(docx_fixture()))
    box = parse_xml(
        '<w:r xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
        'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
        'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"><w:pict><w:txbxContent>'
        '<w:p><w:r><w:t>Inside the box</w:t></w:r></w:p></w:txbxContent></w:pict></w:r>')
    document.element.body.findall(box.tag.replace("}r", "}p"))[1].append(box)
    data = io.BytesIO()
    document.save(data)
    out = translate_document(None, data.getvalue(), "docx", translate=faithful)
    assert "<w:t xml:space=\"preserve\">Inside-it the-it box-it</w:t>" in docx.Document(io.BytesIO(out)).element.xml


def test_pptx_keeps_slides_tables_and_notes():
    import pptx
    from pptx.util import Inches

    presentation = pptx.Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[1])
    slide.shapes.title.text = "Quarterly results"
    slide.placeholders[1].text = "Sales grew this year"
    table = slide.shapes.add_table(1, 2, Inches(1), Inches(4), Inches(4), Inches(1)).table
    table.cell(0, 0).text, table.cell(0, 1).text = "Region", "North"
    slide.notes_slide.notes_text_frame.text = "Thank the team"
    data = io.BytesIO()
    presentation.save(data)
    out = pptx.Presentation(io.BytesIO(translate_document(None, data.getvalue(), name="talk.pptx", translate=faithful)))
    shapes = out.slides[0].shapes
    assert [s.text_frame.text for s in shapes if s.has_text_frame] == ["Quarterly-it results-it", "Sales-it grew-it this-it year-it"]
    table = next(s for s in shapes if s.has_table).table
    assert [table.cell(0, 0).text, table.cell(0, 1).text] == ["Region-it", "North-it"]
    assert out.slides[0].notes_slide.notes_text_frame.text == "Thank-it the-it team-it"


def test_odt_keeps_paragraphs_headings_and_spans():
    from odf import teletype
    from odf.opendocument import OpenDocumentText, load
    from odf.text import H, P, Span

    document = OpenDocumentText()
    document.text.addElement(H(outlinelevel=1, text="Getting started"))
    paragraph = P(text="Open the ")
    paragraph.addElement(Span(text="settings"))
    paragraph.addElement(Span(text=" window."))
    document.text.addElement(paragraph)
    data = io.BytesIO()
    document.write(data)
    out = load(io.BytesIO(translate_document(None, data.getvalue(), name="guide.odt", translate=faithful)))
    assert teletype.extractText(out.getElementsByType(H)[0]) == "Getting-it started-it"
    assert teletype.extractText(out.getElementsByType(P)[0]) == "Open-it the-it settings-it window-it."


# -- bad files: one clear line each ------------------------------------------------------------------------------
@pytest.mark.parametrize("name, data, message", [
    ("a.docx", b"not a zip", r"^a\.docx: not a \.docx file \(not a zip package\)$"),
    ("a.pptx", b"PK\x03\x04 broken", r"^a\.pptx: not a \.pptx file \(not a zip package\)$"),
    ("a.srt", b"1\nnot a timing\nHello\n", r"^a\.srt: not a SubRip file"),
    ("a.vtt", b"no header\n", r"^a\.vtt: not a WebVTT file"),
    ("a.po", b'msgid "a"\nmsgstr "b"\nnonsense here\n', r"^a\.po: not a gettext catalog"),
    ("a.md", b"\xff\xfe\x00\xd8", r"^a\.md: not UTF-8"),
    ("a.txt", b"caf\xe9\n", r"^a\.txt: not UTF-8 \(or UTF-16 with a byte-order mark\) text: byte 3"),
    ("a.srt", b"1\n99999999999:00:00,000 --> 99999999999:00:01,000\nHi\n", r"^a\.srt: not a SubRip file: a timing"),
    ("a.vtt", b"WEBVTT\n\n00:00:01,000 --> 00:00:02,000\nHi\n", r"^a\.vtt: not a WebVTT file: 1 of 1 cues cannot"),
    ("de.po", b'msgid ""\nmsgstr ""\n"Language: de\\n"\n\nmsgid "a"\nmsgstr ""\n', r"^de\.po: a catalog for language 'de'"),
])
def test_bad_files_give_one_line_naming_the_file(name, data, message):
    with pytest.raises(ValueError, match=message) as caught:
        open_document(data, name=name)
    assert "\n" not in str(caught.value)



@pytest.mark.parametrize("data, line", [(b'msgid "a"\nmsgstr "b"\n\nmsgid "Hello\nmsgstr ""\n', 4),
                                        (b'msgid "Hello"\nmsgstr "Ciao\n', 2),
                                        (b'msgid ""\n"Hello\nmsgstr ""\n', 2),
                                        (b'msgid "a"\nmsgstr "b"\n\nmsgid "Hi\\q"\nmsgstr ""\n', 4)])   # msgfmt: bad escape
def test_a_malformed_catalog_is_one_line_naming_the_file_and_line(data, line):
    with pytest.raises(ValueError, match=rf"^a\.po: not a gettext catalog: line {line}: expected ") as caught:
        open_document(data, name="a.po")
    assert "\n" not in str(caught.value)


LATIN_PO = ('# Catalogo\nmsgid ""\nmsgstr ""\n"Last-Translator: Jos\xe9 <j@example.com>\\n"\n"Language: it\\n"\n'
            '"Content-Type: text/plain; charset=ISO-8859-1\\n"\n\nmsgid "The coffee."\nmsgstr ""\n')


@pytest.mark.parametrize("translation, charset", [("Il caff\xe8.", "ISO-8859-1"),
                                                  ("Il caff\xe8 \u2014 \u20ac2.", "UTF-8")])     # no dash, no euro
def test_a_catalog_in_its_header_s_charset_comes_back_in_it_where_the_translation_fits(translation, charset):
    out = translate_document(None, LATIN_PO.encode("latin-1"), name="it.po", translate=lambda texts: [translation])
    text = out.decode("latin-1" if charset == "ISO-8859-1" else "utf-8")
    assert f"charset={charset}\\n" in text and "Jos\xe9" in text and f'msgstr "{translation}"' in text
    assert text.count("charset=") == 1

# -- what review found -------------------------------------------------------------------------------------------
def test_a_catalog_whose_text_is_a_path_is_never_read_as_that_file(tmp_path):
    secret = tmp_path / "secret.po"
    secret.write_text('# TOPSECRET\nmsgid "a"\nmsgstr ""\n', encoding="utf-8")
    with pytest.raises(ValueError, match="not a gettext catalog"):
        open_document(str(secret).encode(), name="upload.po")


def test_accelerators_inside_placeholders_are_not_accelerators():
    import polib

    data = b'msgid "Name: %(_name)s"\nmsgstr ""\n\nmsgid "New item {_id}"\nmsgstr ""\n\nmsgid "_Open"\nmsgstr ""\n'
    out = polib.pofile(translate_document(None, data, name="a.po", translate=lambda texts: texts).decode())
    assert [entry.msgstr for entry in out] == ["Name: %(_name)s", "New item {_id}", "_Open"]


def test_fuzzy_and_half_translated_entries_are_kept_unless_overwrite():
    import polib

    data = (b'#, fuzzy\nmsgid "Open"\nmsgstr "Apri"\n\nmsgid "One"\nmsgid_plural "Many"\nmsgstr[0] "Uno"\n'
            b'msgstr[1] ""\n\nmsgid "Close"\nmsgstr ""\n')
    kept = polib.pofile(translate_document(None, data, name="a.po", translate=faithful).decode())
    assert [(e.msgstr, e.msgstr_plural) for e in kept] == [("Apri", {}), ("", {0: "Uno", 1: ""}), ("Close-it", {})]
    redone = polib.pofile(translate_document(None, data, name="a.po", translate=faithful, overwrite=True).decode())
    assert [(e.msgstr, e.msgstr_plural) for e in redone][:2] == [("Open-it", {}), ("", {0: "One-it", 1: "Many-it"})]


def test_translate_must_give_one_output_per_text():
    with pytest.raises(ValueError, match="translate gave 0 outputs for 1 texts"):
        translate_segments([Segment("Hello.")], lambda texts: [])


def test_txt_keeps_its_last_line_end_after_rewrapping():
    text = b"Short.\n\nThis is a wrapped paragraph with enough words in it to\nlook like prose that was wrapped by an editor.\n"
    out = translate_document(None, text, "txt", translate=faithful)
    assert out.endswith(b"editor-it.\n") and out.count(b"\n\n") == 1


def test_markdown_reference_links_deep_nesting_and_empty_front_matter():
    source = (b"---\n---\nSee [the manual][man] and [x].\n\n[man]: https://example.org/Man \"T\"\n[x]: http://x.org\n\n"
              + b"> " * 25 + b"deep text\n")
    out = translate_document(None, source, name="a.md", translate=faithful).decode()
    assert out.startswith("---\n---\n") and "[man]: https://example.org/Man \"T\"" in out and "[x]: http://x.org" in out
    assert "See-it [the manual][man] and-it [x]." in out
    assert '[man]: https://example.org/Man "T"\n[x]: http://x.org\n\n' + "> " * 25 + "deep-it text-it" in out


def test_html_in_another_encoding_comes_back_in_it_and_says_so():
    source = '<html><head><meta charset="windows-1252"></head><body><p>Good caf\xe9 here</p></body></html>\r\n'
    out = translate_document(None, source.encode("cp1252"), name="a.html", translate=faithful)
    assert out.decode("cp1252") == source.replace("Good", "Good-it").replace("here", "here-it")
    deep = b"<div>" * 20000 + b"text" + b"</div>" * 20000
    assert translate_document(None, deep, name="deep.html", translate=faithful).count(b"text-it") == 1


def docx_with_breaks_tabs_links_and_fields() -> bytes:
    import docx
    from docx.oxml import parse_xml

    document = docx.Document()
    document.add_paragraph()
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    r = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
    for xml in (f'<w:r {w}><w:t>First line</w:t><w:br/><w:t>second line</w:t><w:tab/><w:t>after tab</w:t></w:r>',
                f'<w:hyperlink {w} {r} r:id="rId99"><w:r><w:t>the manual</w:t></w:r></w:hyperlink>',
                f'<w:r {w}><w:t xml:space="preserve"> page </w:t></w:r>',
                f'<w:r {w}><w:fldChar w:fldCharType="begin"/></w:r>',
                f'<w:r {w}><w:instrText>PAGE</w:instrText></w:r>',
                f'<w:r {w}><w:fldChar w:fldCharType="separate"/></w:r>',
                f'<w:r {w}><w:t>three</w:t></w:r>',
                f'<w:r {w}><w:fldChar w:fldCharType="end"/></w:r>'):
        document.element.body.findall(
            "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}p")[-1].append(parse_xml(xml))
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_docx_breaks_tabs_links_and_field_results_stay_where_they_are():
    import docx

    seen = []

    def model(texts):
        seen.extend(texts)
        return faithful(texts)

    out = docx.Document(io.BytesIO(translate_document(None, docx_with_breaks_tabs_links_and_fields(), "docx",
                                                      translate=model)))
    # never the field's "three"; the link is read within its sentence (here joined without a space, as written),
    # and the text around it again between its words, where the stand-in's sentence does not hold them
    assert seen == ["the manual", "First line", "second line", "after tabthe manual page", "after tab", "page"]
    xml = out.element.body.xml
    ts = re.findall(r"<w:t(?: [^>]*)?>([^<]*)</w:t>|<w:(br|tab)/>", xml)
    flat = [text or f"<{tag}>" for text, tag in ts if text or tag]
    assert flat == ["First-it line-it", "<br>", "second-it line-it", "<tab>", "after-it tab-it", "the-it manual-it",
                    " page-it ", "three"]
    assert '<w:hyperlink' in xml and "<w:instrText>PAGE</w:instrText>" in xml


def test_a_formatted_run_keeps_its_formatting_where_its_translation_alone_is_in_the_paragraph_s():
    import docx

    words = {"Choose": "Scegliete", "Print": "Stampa", "now": "ora", "and": "e", "wait": "aspettate"}

    def model(texts):
        return [re.sub(r"[A-Za-z]+", lambda m: words.get(m.group(0), m.group(0)), text) for text in texts]

    document = docx.Document()
    paragraph = document.add_paragraph("Choose ")
    paragraph.add_run("File - Print").bold = True
    paragraph.add_run(" now and ")
    paragraph.add_run("wait").italic = True
    data = io.BytesIO()
    document.save(data)
    out = docx.Document(io.BytesIO(translate_document(None, data.getvalue(), "docx", translate=model)))
    assert [(run.text, run.bold, run.italic) for run in out.paragraphs[0].runs] == [
        ("Scegliete ", None, None), ("File - Stampa", True, None), (" ora e ", None, None), ("aspettate", None, True)]


# -- language tags follow the run ---------------------------------------------------------------------------------
def parts_matching(data: bytes, pattern: str) -> dict[str, list[str]]:
    """Every match of `pattern` in each XML part of an office package, by part name."""
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as package:
        found = {name: re.findall(pattern, package.read(name).decode("utf-8")) for name in package.namelist()
                 if name.endswith(".xml")}
    return {name: matches for name, matches in found.items() if matches}


def test_office_language_tags_that_name_the_source_name_the_target():
    """English -> Italian: every tag naming English (any region) names Italian (it-IT; ODF it/IT), in every part
    (styles, their copies, the body, masters, layouts, the package's dc:language); tags naming another language,
    and Word's East Asian and bidirectional ones, stay as written; the files still open."""
    import docx
    import pptx
    from docx.oxml import parse_xml
    from odf import dc
    from odf.opendocument import OpenDocumentText, load
    from odf.style import Style, TextProperties
    from odf.text import P, Span
    from pptx.enum.lang import MSO_LANGUAGE_ID

    word = docx.Document(io.BytesIO(docx_fixture()))
    runs = word.paragraphs[1].runs
    for run, tag in ((runs[0], "en-GB"), (runs[2], "fr-FR")):
        run.element.get_or_add_rPr().append(parse_xml(
            f'<w:lang xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" w:val="{tag}"/>'))
    word.core_properties.language = "en-US"
    data = io.BytesIO()
    word.save(data)
    source = data.getvalue()
    assert parts_matching(source, r'w:val="en-US"') and "word/stylesWithEffects.xml" in parts_matching(source, r"en-US")
    out = translate_document(None, source, name="guide.docx", translate=faithful)
    assert parts_matching(out, r'w:val="en-[A-Z]+"') == {}
    assert parts_matching(out, r'<w:lang [^>]*>')["word/styles.xml"] == [
        '<w:lang w:val="it-IT" w:eastAsia="en-US" w:bidi="ar-SA"/>']
    assert set(parts_matching(out, r'w:lang w:val="[a-zA-Z-]+"')["word/document.xml"]) == {
        'w:lang w:val="it-IT"', 'w:lang w:val="fr-FR"'}
    assert docx.Document(io.BytesIO(out)).core_properties.language == "it-IT"
    assert docx.Document(io.BytesIO(out)).paragraphs[1].text == "Press-it Ctrl+S to save-it the-it file-it."

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Quarterly results"
    slide.shapes.title.text_frame.paragraphs[0].runs[0].font.language_id = MSO_LANGUAGE_ID.ENGLISH_UK
    slide.placeholders[1].text = "Ventes"
    slide.placeholders[1].text_frame.paragraphs[0].runs[0].font.language_id = MSO_LANGUAGE_ID.FRENCH
    data = io.BytesIO()
    deck.save(data)
    out = translate_document(None, data.getvalue(), name="talk.pptx", translate=faithful)
    assert parts_matching(out, r'[lL]ang="en-[A-Z]+"') == {}
    assert len(parts_matching(out, r'lang="it-IT"')) >= 12                 # presentation, master, 11 layouts, slide
    assert parts_matching(out, r'lang="[a-zA-Z-]+"')["ppt/slides/slide1.xml"] == ['lang="it-IT"', 'lang="fr-FR"']
    assert pptx.Presentation(io.BytesIO(out)).slides[0].shapes.title.text == "Quarterly-it results-it"

    text = OpenDocumentText()
    for name, language, country in (("English", "en", "GB"), ("French", "fr", "FR")):
        style = Style(name=name, family="text")
        style.addElement(TextProperties(language=language, country=country))
        text.automaticstyles.addElement(style)
    paragraph = P(text="Open the ")
    paragraph.addElement(Span(stylename="English", text="settings"))
    paragraph.addElement(Span(stylename="French", text=" (paramètres)"))
    text.text.addElement(paragraph)
    text.meta.addElement(dc.Language(text="en-US"))
    data = io.BytesIO()
    text.write(data)
    out = translate_document(None, data.getvalue(), name="guide.odt", translate=faithful)
    assert parts_matching(out, r'fo:language="\w+" fo:country="\w+"')["content.xml"] == [
        'fo:language="it" fo:country="IT"', 'fo:language="fr" fo:country="FR"']
    assert parts_matching(out, r"<dc:language>[^<]*</dc:language>") == {"meta.xml": ["<dc:language>it-IT</dc:language>"]}
    assert load(io.BytesIO(out)).getElementsByType(P)


def test_markdown_front_matter_language_follows_the_run():
    """The front matter's top-level lang/language/locale naming English name Italian, in their own form; nested
    keys, other languages, other keys and the body's text about languages are left as written."""
    source = ("---\ntitle: Notes\nlang: en-US\nlanguage: \"en\"  # the page's\nlocale: en_GB\nauthor:\n  lang: en\n"
              "alt: fr\n---\n\nThe lang: en key sets the language.\n")
    out = translate_document(None, source.encode(), name="notes.md", translate=faithful).decode()
    front, body = out.split("\n---\n", 1)
    assert front == ("---\ntitle: Notes-it\nlang: it-IT\nlanguage: \"it\"  # the page's\nlocale: it_IT\nauthor:\n  lang: en\n"
                     "alt: fr")
    assert body == "\nThe-it lang-it: en key-it sets-it the-it language-it.\n"
    toml = translate_document(None, b'+++\nlang = "en"\n[params]\nlang = "en"\n+++\n\nHello there.\n', name="a.md",
                              translate=faithful)
    assert toml.startswith(b'+++\nlang = "it"\n[params]\nlang = "en"\n+++\n')           # a table's key is not top-level
    other_keys = b"---\nLang: en\nlang: en#not-a-comment\n---\nHello there.\n"
    assert translate_document(None, other_keys, name="a.md", translate=faithful).startswith(other_keys[:40])
