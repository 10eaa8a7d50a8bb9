"""Word and OpenDocument files as real projects have them: tracked changes, smart tags, custom XML and content
controls around runs, runs of code, and runs of spaces. The stand-in model (`suffixed`, recorded) shows exactly
which texts the model is given."""
import io
import re
import zipfile

from pipeline.documents import translate_document
from stand_ins import docx_with, recording, suffixed

STAMP = 'w:author="A" w:date="2024-01-01T00:00:00Z"'


def part(package: bytes, name: str) -> str:
    return zipfile.ZipFile(io.BytesIO(package)).read(name).decode("utf-8")


def test_tracked_changes_are_read_as_the_current_sentence_and_accepted():
    import docx

    body = (f'<w:p><w:pPr><w:rPr><w:ins w:id="9" {STAMP}/></w:rPr></w:pPr>'
            '<w:r><w:t xml:space="preserve">The old </w:t></w:r>'
            f'<w:del w:id="1" {STAMP}><w:r><w:delText xml:space="preserve">broken </w:delText></w:r></w:del>'
            f'<w:ins w:id="2" {STAMP}><w:r><w:t xml:space="preserve">shiny new </w:t></w:r></w:ins>'
            '<w:r><w:t>house stands here.</w:t></w:r></w:p>'
            f'<w:p><w:moveFromRangeStart w:id="3" w:name="m" {STAMP}/><w:moveFrom w:id="4" {STAMP}><w:r>'
            '<w:t xml:space="preserve">Yesterday </w:t></w:r></w:moveFrom><w:moveFromRangeEnd w:id="3"/>'
            '<w:r><w:t xml:space="preserve">we met the team </w:t></w:r>'
            f'<w:moveToRangeStart w:id="5" w:name="m" {STAMP}/><w:moveTo w:id="6" {STAMP}><w:r>'
            '<w:t>yesterday.</w:t></w:r></w:moveTo><w:moveToRangeEnd w:id="5"/></w:p>')
    model, seen = recording(suffixed)
    out = translate_document(None, docx_with(body), name="tracked.docx", translate=model)
    assert seen == ["The old shiny new house stands here.", "we met the team yesterday."]   # was cut at each mark
    xml = part(out, "word/document.xml")
    assert "broken" not in xml and "Yesterday" not in xml          # deleted and moved-away text: gone, untranslated
    assert not re.search(r"<w:(?:del|moveFrom|moveTo|delText)\b|<w:ins w:id=\"2\"|RangeStart", xml)
    assert '<w:ins w:id="9"' in xml                                # a paragraph mark's own revision: left
    paragraphs = docx.Document(io.BytesIO(out)).paragraphs
    assert paragraphs[0].text == "The-it old-it shiny-it new-it house-it stands-it here-it."
    assert paragraphs[1].text == "we met-it the-it team-it yesterday-it."


def test_smart_tags_and_custom_xml_do_not_cut_the_sentence_and_a_content_control_keeps_its_text():
    import docx

    body = ('<w:p><w:r><w:t xml:space="preserve">Call the </w:t></w:r>'
            '<w:smartTag w:uri="urn:schemas" w:element="place"><w:r><w:t>London</w:t></w:r></w:smartTag>'
            '<w:r><w:t xml:space="preserve"> office and </w:t></w:r>'
            '<w:customXml w:element="desk"><w:r><w:t>the front desk</w:t></w:r></w:customXml>'
            '<w:sdt><w:sdtPr><w:alias w:val="When"/></w:sdtPr><w:sdtContent><w:r>'
            '<w:t xml:space="preserve"> before noon today please</w:t></w:r></w:sdtContent></w:sdt>'
            '<w:r><w:t>.</w:t></w:r></w:p>')
    model, seen = recording(suffixed)
    out = translate_document(None, docx_with(body), name="tags.docx", translate=model)
    # a content control (a form field, data-bound text) is a text of its own, written back inside it
    assert seen == ["Call the London office and the front desk", "before noon today please"]
    assert docx.Document(io.BytesIO(out)).paragraphs[0].text == \
        "Call-it the-it London-it office-it and-it the-it front-it desk-it."          # python-docx skips controls
    xml = part(out, "word/document.xml")
    assert re.search(r"<w:sdtContent><w:r><w:t[^>]*> before-it noon-it today-it please-it</w:t></w:r></w:sdtContent>",
                     xml)                                       # the control keeps its text, translated
    assert "<w:smartTag" in xml and "<w:customXml" in xml


def test_word_runs_of_code_are_kept_verbatim():
    import docx
    from docx.enum.style import WD_STYLE_TYPE

    document = docx.Document()
    listing = document.styles.add_style("Listing", WD_STYLE_TYPE.CHARACTER)
    listing.font.name = "Courier New"
    paragraph = document.add_paragraph("Run the ")
    paragraph.add_run("make install").font.name = "Consolas"
    paragraph.add_run(" command, then ")
    paragraph.add_run("print value", style="Listing")
    paragraph.add_run(" and ")
    paragraph.add_run("show tables", style=document.styles.add_style("HTML Code", WD_STYLE_TYPE.CHARACTER))
    paragraph.add_run(" in the shell.")
    document.add_paragraph("The ")
    document.paragraphs[1].add_run("fancy words").font.name = "Monotype Corsiva"     # "Mono" in it, not code
    document.paragraphs[1].add_run(" stay prose.")
    document.add_paragraph().add_run("git commit --amend").font.name = "JetBrains Mono"   # code alone: not sent
    source = io.BytesIO()
    document.save(source)
    model, seen = recording(suffixed)
    out = docx.Document(io.BytesIO(translate_document(None, source.getvalue(), name="code.docx", translate=model)))
    assert not any(code in text for text in seen for code in ("git commit", "--amend")) and \
        "make install" not in seen and "print value" not in seen        # no code translated alone
    first = out.paragraphs[0]
    assert first.text == "Run-it the-it make install command-it, then-it print value and-it show tables in the-it " \
        "shell-it."
    assert [run.text for run in first.runs if run.font.name == "Consolas"] == ["make install"]
    assert out.paragraphs[1].text == "The-it fancy-it words-it stay-it prose-it."
    assert out.paragraphs[2].text == "git commit --amend"


def test_slide_runs_in_a_code_font_are_kept_verbatim():
    import pptx

    deck = pptx.Presentation()
    shape = deck.slides.add_slide(deck.slide_layouts[5]).shapes.title
    paragraph = shape.text_frame.paragraphs[0]
    for text, font in (("Call ", None), ("read file", "Menlo"), (" to open the notes.", None)):
        run = paragraph.add_run()
        run.text = text
        if font:
            run.font.name = font
    source = io.BytesIO()
    deck.save(source)
    out = translate_document(None, source.getvalue(), name="deck.pptx", translate=suffixed)
    title = pptx.Presentation(io.BytesIO(out)).slides[0].shapes.title.text_frame.paragraphs[0]
    assert "".join(run.text for run in title.runs) == "Call-it read file to open-it the-it notes-it."


def odt(build) -> bytes:
    """An .odt whose body `build(document)` fills (odfpy)."""
    from odf.opendocument import OpenDocumentText

    document = OpenDocumentText()
    build(document)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_odt_spans_of_code_are_kept_verbatim():
    from odf.style import FontFace, Style, TextProperties
    from odf.text import P, Span

    def build(document):
        document.fontfacedecls.addElement(FontFace(name="Liberation Mono", fontfamily="'Liberation Mono'",
                                                   fontpitch="fixed"))
        mono = Style(name="T1", family="text")
        mono.addElement(TextProperties(fontname="Liberation Mono"))
        source = Style(name="Source_20_Text", displayname="Source Text", family="text")
        based = Style(name="T2", family="text", parentstylename="Source_20_Text")
        fancy = Style(name="T3", family="text")
        fancy.addElement(TextProperties(fontfamily="Monotype Corsiva"))
        document.styles.addElement(source)
        for style in (mono, based, fancy):
            document.automaticstyles.addElement(style)
        paragraph = P()
        for text, style in (("Run the ", None), ("make install", mono), (" command, then ", None),
                            ("ls -la", source), (" and ", None), ("git log", based), (" here, in ", None),
                            ("fancy words", fancy), (" too.", None)):
            holder = paragraph if style is None else Span(stylename=style)
            holder.addText(text)
            if style is not None:
                paragraph.addElement(holder)
        document.text.addElement(paragraph)

    model, seen = recording(suffixed)
    out = translate_document(None, odt(build), name="code.odt", translate=model)
    assert not any(text in ("make install", "ls -la", "git log") for text in seen)
    xml = part(out, "content.xml")
    assert '<text:span text:style-name="T1">make install</text:span>' in xml
    assert '<text:span text:style-name="Source_20_Text">ls -la</text:span>' in xml
    assert '<text:span text:style-name="T2">git log</text:span>' in xml
    assert '<text:span text:style-name="T3">fancy-it words-it</text:span>' in xml


def test_odt_runs_of_spaces_come_back_as_text_s_and_breaks_stay():
    from odf import teletype
    from odf.opendocument import load
    from odf.text import LineBreak, P, S, Tab

    def build(document):
        paragraph = P()
        paragraph.addText("Name:")
        paragraph.addElement(S(c=3))
        paragraph.addText("the big house stands.")
        document.text.addElement(paragraph)
        paragraph = P()
        paragraph.addText("Name")
        paragraph.addElement(Tab())
        paragraph.addText("the value here,")
        paragraph.addElement(LineBreak())
        paragraph.addText("on a new line.")
        document.text.addElement(paragraph)

    model, seen = recording(suffixed)
    out = translate_document(None, odt(build), name="spaces.odt", translate=model)
    assert "Name:   the big house stands." in seen                  # one sentence, spaces and all
    xml = part(out, "content.xml")
    assert '<text:p>Name-it: <text:s text:c="2"/>the-it big-it house-it stands-it.</text:p>' in xml   # was 3 spaces
    assert "<text:tab/>" in xml and "<text:line-break/>" in xml
    paragraphs = load(io.BytesIO(out)).text.childNodes
    assert teletype.extractText(paragraphs[0]) == "Name-it:   the-it big-it house-it stands-it."


def test_code_paragraph_styles_are_kept_and_a_document_set_in_courier_is_prose():
    import docx
    from docx.enum.style import WD_STYLE_TYPE

    document = docx.Document()
    block = document.styles.add_style("Listing Block", WD_STYLE_TYPE.PARAGRAPH)
    block.font.name = "Consolas"
    based = document.styles.add_style("Shell Block", WD_STYLE_TYPE.PARAGRAPH)
    based.base_style = block
    document.add_paragraph("Welcome to the guide, read it all the way through before you start.")
    document.add_paragraph("make all and then make install", style="Listing Block")
    document.add_paragraph("echo hello world", style="Shell Block")
    source = io.BytesIO()
    document.save(source)
    model, seen = recording(suffixed)
    out = docx.Document(io.BytesIO(translate_document(None, source.getvalue(), name="guide.docx", translate=model)))
    assert seen == ["Welcome to the guide, read it all the way through before you start."]
    assert [paragraph.text for paragraph in out.paragraphs][1:] == ["make all and then make install",
                                                                    "echo hello world"]

    screenplay = docx.Document()                        # every line in Courier New: its body font, not code
    for line in ("INT. KITCHEN - NIGHT", "Anna opens the fridge and finds nothing."):
        screenplay.add_paragraph().add_run(line).font.name = "Courier New"
    source = io.BytesIO()
    screenplay.save(source)
    out = docx.Document(io.BytesIO(translate_document(None, source.getvalue(), name="play.docx", translate=suffixed)))
    assert out.paragraphs[1].text == "Anna-it opens-it the-it fridge-it and-it finds-it nothing-it."


def test_odt_paragraphs_in_a_code_style_are_kept():
    from odf.style import Style, TextProperties
    from odf.text import P

    def build(document):
        pre = Style(name="Preformatted_20_Text", displayname="Preformatted Text", family="paragraph")
        pre.addElement(TextProperties(fontname="DejaVu Sans Mono"))
        document.styles.addElement(pre)
        document.text.addElement(P(text="Install the tools first, then build the whole project."))
        document.text.addElement(P(stylename=pre, text="cargo build --release"))

    model, seen = recording(suffixed)
    out = translate_document(None, odt(build), name="pre.odt", translate=model)
    assert seen == ["Install the tools first, then build the whole project."]
    assert ">cargo build --release</text:p>" in part(out, "content.xml")
