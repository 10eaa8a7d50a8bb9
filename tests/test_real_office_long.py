"""A paragraph of very many formatted runs (a generated report, a glossary written as one paragraph, a hostile
upload) is read in windows of at most `MAX_GROUPS` formatted groups, cut at sentence ends: placing groups in a
translation costs the square of their count, and one such paragraph held a worker for minutes."""
import io
import re
import zipfile

from pipeline.documents import translate_document
from pipeline.documents.runs import MAX_GROUPS
from stand_ins import docx_with, recording, saved, suffixed

SENTENCES = 200                              # each with one bold word: 200 groups, so four windows


def check(seen: list[str], bold: list[str], at_sentence_ends: bool) -> None:
    """The paragraph was read in windows of at most MAX_GROUPS bold words, whole, in order (in Word, each window
    ending a sentence: there a run ends with each sentence); every bold word came back bold, in its place."""
    chunks = [text for text in seen if not text.startswith("bold") or " " in text]
    assert len(chunks) == -(-SENTENCES // MAX_GROUPS)                 # was one text of 200 groups
    assert all(len(re.findall(r"bold[0-9]", chunk)) <= MAX_GROUPS for chunk in chunks)
    assert all(chunk.endswith("done.") for chunk in chunks) == at_sentence_ends
    assert " ".join(chunks) == " ".join(f"Sentence {i} has bold{i} done." for i in range(SENTENCES))
    assert bold == [f"bold{i}" for i in range(SENTENCES)]


def test_a_word_paragraph_of_many_bold_words_is_read_in_windows_cut_at_sentence_ends():
    runs = "".join(f'<w:r><w:t xml:space="preserve">Sentence {i} has </w:t></w:r>'
                   f'<w:r><w:rPr><w:b/></w:rPr><w:t>bold{i}</w:t></w:r>'
                   f'<w:r><w:t xml:space="preserve"> done.{" " if i < SENTENCES - 1 else ""}</w:t></w:r>'
                   for i in range(SENTENCES))
    model, seen = recording(suffixed)
    out = translate_document(None, docx_with(f"<w:p>{runs}</w:p>"), name="report.docx", translate=model)
    xml = zipfile.ZipFile(io.BytesIO(out)).read("word/document.xml").decode("utf-8")
    check(seen, re.findall(r"<w:b/></w:rPr><w:t[^>]*>([^<]*)</w:t>", xml), at_sentence_ends=True)
    assert "Sentence-it 7 has-it bold7 done-it." in re.sub(r"<[^>]+>", "", xml)


def test_an_opendocument_paragraph_of_many_bold_spans_is_read_in_windows_too():
    """Here the text between two spans is one node (`done. Sentence 1 has`): the windows end before a span."""
    from odf.opendocument import OpenDocumentText
    from odf.style import Style, TextProperties
    from odf.text import P, Span

    document = OpenDocumentText()
    strong = Style(name="Strong", family="text")
    strong.addElement(TextProperties(fontweight="bold"))
    document.automaticstyles.addElement(strong)
    paragraph = P()
    for i in range(SENTENCES):
        paragraph.addText(f"Sentence {i} has ")
        paragraph.addElement(Span(stylename=strong, text=f"bold{i}"))
        paragraph.addText(f" done.{' ' if i < SENTENCES - 1 else ''}")
    document.text.addElement(paragraph)
    model, seen = recording(suffixed)
    out = translate_document(None, saved(document), name="report.odt", translate=model)
    xml = zipfile.ZipFile(io.BytesIO(out)).read("content.xml").decode("utf-8")
    check(seen, re.findall(r'<text:span text:style-name="Strong">([^<]*)</text:span>', xml), at_sentence_ends=False)
