"""What Word and OpenDocument files hold inside a sentence besides text, as real documents have it: fields whose
result is words (a link written as a HYPERLINK field, as files converted from .doc have them; a cross-reference; a
table of contents), footnote marks, symbols and pictures in line with the text, Word's hyphen elements, and
LibreOffice's marks that take no room (soft page breaks, bookmarks). The stand-in model adds `-it` to each word."""
import io
import re
import zipfile

import pytest

from pipeline.documents import translate_document
from stand_ins import docx_with, recording, saved, suffixed


def run(text: str, properties: str = "") -> str:
    return f'<w:r>{properties}<w:t xml:space="preserve">{text}</w:t></w:r>'


def char(kind: str) -> str:
    return f'<w:r><w:fldChar w:fldCharType="{kind}"/></w:r>'


def field(instruction: str, *result: str) -> str:
    """A complex field: begin, instruction, separate, `result` (runs), end."""
    return (char("begin") + f'<w:r><w:instrText xml:space="preserve">{instruction}</w:instrText></w:r>'
            + char("separate") + "".join(result) + char("end"))


def translated(body: str) -> tuple[list[str], str]:
    """(what the model read, the translated document's body) for a .docx whose body is `body`."""
    model, seen = recording(suffixed)
    out = translate_document(None, docx_with(body), name="manual.docx", translate=model)
    xml = zipfile.ZipFile(io.BytesIO(out)).read("word/document.xml").decode("utf-8")
    return seen, re.sub(r' xml:space="preserve"', "", xml[xml.index("<w:body>"):xml.index("<w:sectPr")])


def texts(xml: str) -> str:
    return "".join(re.findall(r"<w:t>([^<]*)</w:t>", xml))


def test_a_hyperlink_field_is_read_with_its_sentence_and_keeps_its_target():
    link = ' HYPERLINK "https://example.org/help" '
    for body in (f'<w:p>{run("Visit ")}{field(link, run("our website"))}{run(" for more information.")}</w:p>',
                 f'<w:p>{run("Visit ")}<w:fldSimple w:instr="{link}">{run("our website")}</w:fldSimple>'
                 f'{run(" for more information.")}</w:p>'):
        seen, xml = translated(body.replace('"https', '&quot;https').replace('help"', 'help&quot;'))
        assert seen == ["our website", "Visit our website for more information."]        # was left in English
        assert re.search(r'<w:fldSimple w:instr=" HYPERLINK &quot;https://example.org/help&quot; ">'
                         r'<w:r><w:t>our-it website-it</w:t></w:r></w:fldSimple>', xml)
        assert texts(xml) == "Visit-it our-it website-it for-it more-it information-it."


def test_a_table_of_contents_is_translated_from_its_first_entry_and_its_page_numbers_kept():
    def entry(anchor: str, title: str, page: str) -> str:
        return (f'<w:hyperlink w:anchor="{anchor}">{run(title)}<w:r><w:tab/></w:r>'
                f'{field(f" PAGEREF {anchor} ", run(page))}</w:hyperlink>')
    body = (f'<w:p>{char("begin")}<w:r><w:instrText> TOC \\o "1-3" \\h </w:instrText></w:r>{char("separate")}'
            f'{entry("_Toc1", "Installing the software", "3")}</w:p>'
            f'<w:p>{entry("_Toc2", "Running the tests", "4")}</w:p><w:p>{char("end")}</w:p>'
            f'<w:p>{run("Chapter one")}</w:p>')
    seen, xml = translated(body)
    assert seen == ["Installing the software", "Running the tests", "Chapter one"]   # the first entry was not read
    assert texts(xml) == "Installing-it the-it software-it3Running-it the-it tests-it4Chapter-it one-it"


def test_fields_whose_result_is_not_words_are_kept_as_they_are():
    seen, xml = translated(f'<w:p>{run("Page ")}{field(" PAGE ", run("3"))}{run(" of the manual")}'
                           f'{field(" DATE ", run("Monday"))}</w:p>')
    assert seen == ["Page", "of the manual"]
    assert texts(xml) == "Page-it 3 of the-it manual-itMonday"
    assert xml.count("<w:fldChar ") == 6                                  # still complex fields


def test_a_footnote_mark_a_symbol_and_a_picture_in_line_stay_between_their_words():
    mark = '<w:r><w:rPr><w:rStyle w:val="FootnoteReference"/></w:rPr><w:footnoteReference w:id="1"/></w:r>'
    seen, xml = translated(f'<w:p>{run("The Treaty of Rome")}{mark}{run(" established the community.")}</w:p>')
    assert seen == ["The Treaty of Rome", "established the community."]   # was one text, the mark moved first
    assert re.search(r"Rome-it</w:t></w:r><w:r><w:rPr><w:rStyle w:val=\"FootnoteReference\"/></w:rPr>"
                     r"<w:footnoteReference w:id=\"1\"/></w:r><w:r><w:t> established-it", xml)
    arrow = '<w:r><w:sym w:font="Wingdings" w:char="F0E0"/></w:r>'
    seen, xml = translated(f'<w:p>{run("Choose File ")}{arrow}{run(" Open to load the document.")}</w:p>')
    assert seen == ["Choose File", "Open to load the document."]
    assert texts(xml.split("<w:sym")[0]) == "Choose-it File-it "
    wp = 'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"'
    vml = 'xmlns:v="urn:schemas-microsoft-com:vml"'
    for kind, cut in (("inline", True), ("anchor", False), ("vml", True), ("vml absolute", False),
                      ("vml group", True)):
        picture = f'<w:r><w:drawing><wp:{kind} {wp}><wp:extent cx="1" cy="1"/></wp:{kind}></w:drawing></w:r>'
        if kind.startswith("vml"):                     # Word 2003's pictures, in line unless placed on the page
            style = "position:absolute;" if "absolute" in kind else ""
            picture = f'<w:r><w:pict><v:shape {vml} style="{style}width:20pt;height:20pt"/></w:pict></w:r>'
            if kind == "vml group":                    # its shapes are placed in the group, which is in line
                picture = (f'<w:r><w:pict><v:group {vml} style="width:100pt;height:50pt"><v:shape style="position:'
                           'absolute;left:0;top:0"/></v:group></w:pict></w:r>')
        seen, xml = translated(f'<w:p>{run("Click the ")}{picture}{run(" icon to save the document.")}</w:p>')
        assert (seen == ["Click the", "icon to save the document."]) == cut
        assert (texts(re.split(r"<w:(?:drawing|pict)", xml)[0]) == "Click-it the-it ") == cut   # else read whole


def test_word_hyphen_elements_are_read_as_the_text_they_show():
    seen, xml = translated(f'<w:p><w:r><w:t>Send an e</w:t><w:noBreakHyphen/><w:t>mail to the sup</w:t>'
                           f'<w:softHyphen/><w:t>port team.</w:t></w:r></w:p>')
    assert seen == ["Send an e-mail to the support team."]     # was "email" and "sup port", the hyphen first
    assert texts(xml) == "Send-it an e-mail to the-it support-it team-it." and "Hyphen" not in xml


def test_libreoffice_marks_that_take_no_room_do_not_cut_a_sentence():
    from odf.opendocument import OpenDocumentText
    from odf.text import BookmarkEnd, BookmarkStart, Note, NoteBody, NoteCitation, P, SoftPageBreak

    document = OpenDocumentText()
    page = P()
    page.addText("The quick brown fox jumps over ")
    page.addElement(SoftPageBreak())
    page.addText("the lazy dog in the yard.")
    marked = P()
    marked.addText("See the ")
    marked.addElement(BookmarkStart(name="cats"))
    marked.addText("section about cats")
    marked.addElement(BookmarkEnd(name="cats"))
    marked.addText(" for more information.")
    noted, note, body, inside = P(), Note(id="ftn1", noteclass="footnote"), NoteBody(), P()
    noted.addText("The Treaty of Rome")
    note.addElement(NoteCitation(text="1"))
    inside.addText("A note.")
    body.addElement(inside)
    note.addElement(body)
    noted.addElement(note)
    noted.addText(" established the community.")
    for paragraph in (page, marked, noted):
        document.text.addElement(paragraph)
    model, seen = recording(suffixed)
    out = translate_document(None, saved(document), name="manual.odt", translate=model)
    assert seen == ["The quick brown fox jumps over the lazy dog in the yard.",       # were cut at the marks
                    "See the section about cats for more information.",
                    "The Treaty of Rome", "established the community.", "A note."]     # a note still cuts
    xml = zipfile.ZipFile(io.BytesIO(out)).read("content.xml").decode("utf-8")
    assert "<text:soft-page-break/>" in xml and 'text:name="cats"' in xml
    assert re.search(r"Rome-it<text:note .*</text:note> established-it", xml)


def test_a_field_whose_end_is_missing_hides_nothing_past_its_paragraph():
    seen, _ = translated(f'<w:p>{run("First paragraph here.")}{char("begin")}<w:r><w:instrText> PAGE </w:instrText>'
                         f'</w:r>{char("separate")}{run("1")}</w:p><w:p>{run("Second paragraph here.")}</w:p>')
    assert seen == ["First paragraph here.", "Second paragraph here."]       # the rest of the part was kept


def test_a_comment_s_range_and_a_bookmark_stay_around_their_words_translation():
    body = (f'<w:p>{run("Please review the ")}<w:commentRangeStart w:id="0"/><w:proofErr w:type="spellStart"/>'
            f'{run("budget figures")}<w:commentRangeEnd w:id="0"/><w:r><w:commentReference w:id="0"/></w:r>'
            f'{run(" before Friday.")}</w:p>'
            f'<w:p>{run("See the ")}<w:bookmarkStart w:id="1" w:name="report"/>{run("annual report")}'
            f'<w:bookmarkEnd w:id="1"/>{run(" for details.")}</w:p>'
            f'<w:p><w:bookmarkStart w:id="2" w:name="_Toc1"/>{run("Whole heading")}<w:bookmarkEnd w:id="2"/></w:p>')
    seen, xml = translated(body)
    assert "Please review the budget figures before Friday." in seen          # one sentence, as before
    assert ('<w:r><w:t>Please-it review-it the-it </w:t></w:r><w:commentRangeStart w:id="0"/><w:proofErr '
            'w:type="spellStart"/><w:r><w:t>budget-it figures-it</w:t></w:r><w:commentRangeEnd w:id="0"/><w:r>'
            '<w:commentReference w:id="0"/></w:r><w:r><w:t> before-it Friday-it.</w:t></w:r>') in xml   # was empty
    assert ('<w:bookmarkStart w:id="1" w:name="report"/><w:r><w:t>annual-it report-it</w:t></w:r>'
            '<w:bookmarkEnd w:id="1"/>') in xml
    assert ('<w:bookmarkStart w:id="2" w:name="_Toc1"/><w:r><w:t>Whole-it heading-it</w:t></w:r>'
            '<w:bookmarkEnd w:id="2"/>') in xml
    assert "hyperlink" not in xml and "x-nmt-pipeline" not in xml


def test_a_range_whose_words_the_translation_does_not_hold_never_cuts_the_sentence():
    def rephrasing(texts: list[str]) -> list[str]:
        return ["Controlla le cifre prima di venerdì." if text.startswith("Please") else "numeri di bilancio"
                for text in texts]
    body = (f'<w:p>{run("Please review the ")}<w:commentRangeStart w:id="0"/>{run("budget figures")}'
            f'<w:commentRangeEnd w:id="0"/>{run(" before Friday.")}</w:p>')
    out = translate_document(None, docx_with(body), name="review.docx", translate=rephrasing)
    xml = zipfile.ZipFile(io.BytesIO(out)).read("word/document.xml").decode("utf-8")
    assert texts(re.sub(r' xml:space="preserve"', "", xml)) == "Controlla le cifre prima di venerdì."
    assert '<w:commentRangeStart w:id="0"/><w:commentRangeEnd w:id="0"/>' in xml      # empty, as it always was


def test_ranges_that_cover_a_tab_s_prose_never_cut_its_sentence():
    body = (f'<w:p>{run("Status:")}<w:r><w:tab/></w:r><w:commentRangeStart w:id="0"/>{run("The budget figures")}'
            f'<w:commentRangeEnd w:id="0"/>{run(", ")}<w:bookmarkStart w:id="1" w:name="plan"/>'
            f'{run("the annual plan")}<w:bookmarkEnd w:id="1"/>{run(".")}</w:p>')
    seen, xml = translated(body)
    assert "The budget figures, the annual plan." in seen, seen      # was: "The budget figures", "the annual plan"
    assert texts(xml) == "Status-it:The-it budget-it figures-it, the-it annual-it plan-it."
    assert "hyperlink" not in xml and "x-nmt-pipeline" not in xml


def test_more_ranges_in_a_sentence_than_groups_a_layout_holds_never_cut_it():
    words = "".join(f'<w:bookmarkStart w:id="{n}" w:name="b{n}"/>{run(f"word{n} ")}<w:bookmarkEnd w:id="{n}"/>'
                    for n in range(70))
    seen, xml = translated(f'<w:p>{run("Start here ")}{words}{run("and stop.")}</w:p>')
    assert seen[0].startswith("Start here word0 word1") and seen[0].endswith("word69 and stop."), seen[:3]
    assert "hyperlink" not in xml and "x-nmt-pipeline" not in xml and xml.count("<w:bookmarkStart") == 70


def test_a_package_whose_content_types_lie_is_one_line_naming_no_memory_address():
    import docx

    made = docx.Document()
    made.add_paragraph("Hello world.")
    buffer = io.BytesIO()
    made.save(buffer)
    lying, source = io.BytesIO(), zipfile.ZipFile(io.BytesIO(buffer.getvalue()))
    with zipfile.ZipFile(lying, "w") as out:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "[Content_Types].xml":             # says it holds a presentation
                data = data.replace(b"wordprocessingml.document.main", b"presentationml.presentation.main")
            out.writestr(item, data)
    with pytest.raises(ValueError) as caught:
        translate_document(None, lying.getvalue(), name="a.docx", translate=lambda texts: texts)
    assert str(caught.value).startswith("a.docx: not a readable .docx file: the file is not a Word file")
    assert "0x" not in str(caught.value)                          # was: '<_io.BytesIO object at 0x7ffa...>'
