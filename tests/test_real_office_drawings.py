"""Text that office files draw outside their slides' and pages' own paragraphs: SmartArt in PowerPoint and Word files
(a process, a cycle, an org chart: text in the diagram's data, and again in the drawing PowerPoint and Word show
until they lay the diagram out again), a Word chart's title, categories and series names (in the chart and its
workbook), and a slide master's text box, which every slide shows, are translated, both copies of a diagram's text
alike, their language tags relabelled. They were left in English; a master's placeholders, whose prompt text is
never shown, still are."""
import io
import re
import zipfile

from pipeline.documents import translate_document
from stand_ins import new_docx, recording, rezipped, saved, suffixed

A = 'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"'
XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'


def paragraph(text: str) -> str:
    return f'<a:p><a:r><a:rPr lang="en-US"/><a:t>{text}</a:t></a:r></a:p>'


def point(model_id: int, body: str) -> str:
    return f'<dgm:pt modelId="{{{model_id}}}"><dgm:prSet/><dgm:spPr/><dgm:t><a:bodyPr/>{body}</dgm:t></dgm:pt>'


PARTS = {
    "data": ("application/vnd.openxmlformats-officedocument.drawingml.diagramData+xml",
             "http://schemas.openxmlformats.org/officeDocument/2006/relationships/diagramData",
             f'{XML}<dgm:dataModel xmlns:dgm="http://schemas.openxmlformats.org/drawingml/2006/diagram" {A}>'
             f'<dgm:ptLst>{point(1, "<a:p/>")}{point(2, paragraph("Plan the project"))}'
             f'{point(3, paragraph("Review the results"))}</dgm:ptLst><dgm:cxnLst/></dgm:dataModel>'),
    "drawing": ("application/vnd.ms-office.drawingml.diagramDrawing+xml",
                "http://schemas.microsoft.com/office/2007/relationships/diagramDrawing",
                f'{XML}<dsp:drawing xmlns:dsp="http://schemas.microsoft.com/office/drawing/2008/diagram" {A}>'
                f'<dsp:spTree><dsp:sp modelId="{{4}}"><dsp:txBody><a:bodyPr/>{paragraph("Plan the project")}'
                f'</dsp:txBody></dsp:sp><dsp:sp modelId="{{5}}"><dsp:txBody><a:bodyPr/>'
                f'{paragraph("Review the results")}</dsp:txBody></dsp:sp></dsp:spTree></dsp:drawing>')}


def with_smartart(package: bytes, folder: str, relationships: str) -> bytes:
    """`package` with a SmartArt diagram's data and drawing parts, related from `relationships`."""
    up = "../" if folder == "ppt" else ""

    def edit(name: str, data: bytes) -> bytes:
        if name == "[Content_Types].xml":
            overrides = "".join(f'<Override PartName="/{folder}/diagrams/{kind}1.xml" ContentType="{content}"/>'
                                for kind, (content, _, _) in PARTS.items())
            return data.replace(b"</Types>", overrides.encode() + b"</Types>")
        if name == relationships:
            related = "".join(f'<Relationship Id="rIdSmart{kind}" Type="{type_}" Target="{up}diagrams/{kind}1.xml"/>'
                              for kind, (_, type_, _) in PARTS.items())
            return data.replace(b"</Relationships>", related.encode() + b"</Relationships>")
        return data
    return rezipped(package, edit, {f"{folder}/diagrams/{kind}1.xml": xml.encode()
                                    for kind, (_, _, xml) in PARTS.items()})


def check(out: bytes, folder: str) -> None:
    package = zipfile.ZipFile(io.BytesIO(out))
    for kind in PARTS:
        xml = package.read(f"{folder}/diagrams/{kind}1.xml").decode("utf-8")
        assert re.findall(r"<a:t>([^<]*)</a:t>", xml) == ["Plan-it the-it project-it", "Review-it the-it results-it"]
        assert 'lang="it-IT"' in xml and "en-US" not in xml


def test_a_slide_s_smartart_is_translated_in_its_data_and_its_drawing():
    import pptx

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Our process"
    model, seen = recording(suffixed)
    out = translate_document(None, with_smartart(saved(deck), "ppt", "ppt/slides/_rels/slide1.xml.rels"),
                             name="deck.pptx", translate=model)
    assert set(seen) == {"Our process", "Plan the project", "Review the results"}
    check(out, "ppt")
    assert pptx.Presentation(io.BytesIO(out)).slides[0].shapes.title.text == "Our-it process-it"


def test_a_word_document_s_smartart_and_chart_title_are_translated():
    chart = (f'{XML}<c:chartSpace xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" {A}><c:chart>'
             f'<c:title><c:tx><c:rich><a:bodyPr/>{paragraph("Sales by region")}</c:rich></c:tx></c:title>'
             f'</c:chart></c:chartSpace>')

    def with_chart(name: str, data: bytes) -> bytes:
        if name == "[Content_Types].xml":
            return data.replace(b"</Types>", b'<Override PartName="/word/charts/chart1.xml" ContentType="application/'
                                b'vnd.openxmlformats-officedocument.drawingml.chart+xml"/></Types>')
        if name == "word/_rels/document.xml.rels":
            return data.replace(b"</Relationships>", b'<Relationship Id="rIdChart1" Type="http://schemas.openxmlformats'
                                b'.org/officeDocument/2006/relationships/chart" Target="charts/chart1.xml"/>'
                                b"</Relationships>")
        return data
    source = rezipped(with_smartart(new_docx(), "word", "word/_rels/document.xml.rels"), with_chart,
                      {"word/charts/chart1.xml": chart.encode()})
    model, seen = recording(suffixed)
    out = translate_document(None, source, name="report.docx", translate=model)
    assert set(seen) == {"Plan the project", "Review the results", "Sales by region"}
    check(out, "word")
    assert "Sales-it by region-it" in zipfile.ZipFile(io.BytesIO(out)).read("word/charts/chart1.xml").decode("utf-8")


def test_a_slide_master_s_text_box_is_translated_and_its_placeholders_are_not():
    import pptx

    deck = pptx.Presentation()
    deck.slides.add_slide(deck.slide_layouts[5]).shapes.title.text = "Our process"
    box = ('<p:sp><p:nvSpPr><p:cNvPr id="99" name="Note"/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr><p:spPr/>'
           f'<p:txBody><a:bodyPr/>{paragraph("Company confidential")}</p:txBody></p:sp>')

    def on_master(name: str, data: bytes) -> bytes:          # a text box every slide shows
        return data.replace(b"</p:spTree>", box.encode() + b"</p:spTree>", 1) \
            if name == "ppt/slideMasters/slideMaster1.xml" else data
    model, seen = recording(suffixed)
    out = translate_document(None, rezipped(saved(deck), on_master), name="deck.pptx", translate=model)
    assert set(seen) == {"Our process", "Company confidential"}            # no "Click to edit Master title style"
    shown = [shape.text_frame.text for shape in pptx.Presentation(io.BytesIO(out)).slide_masters[0].shapes
             if shape.has_text_frame]
    assert "Company-it confidential-it" in shown and "Click to edit Master title style" in shown


def test_pictures_text_alternatives_are_translated_and_file_names_kept():
    import docx
    from odf.draw import Frame, Image
    from odf.opendocument import OpenDocumentText
    from odf.svg import Desc, Title
    from odf.text import P

    picture = ('<w:p><w:r><w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/'
               'wordprocessingDrawing"><wp:extent cx="1" cy="1"/><wp:docPr id="1" name="Picture 1" '
               'descr="A chart of yearly sales" title="Sales chart"/></wp:inline></w:drawing></w:r></w:p>'
               '<w:p><w:r><w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/'
               'wordprocessingDrawing"><wp:docPr id="2" name="Picture 2" descr="image1.png" title="C:\\Documents and '
               'Settings\\Bob\\My Pictures\\beach.jpg"/></wp:inline></w:drawing></w:r></w:p>')
    model, seen = recording(suffixed)
    source = new_docx()
    out = translate_document(None, rezipped(source, lambda name, data: data.replace(
        b"<w:body>", b"<w:body>" + picture.encode()) if name == "word/document.xml" else data),
        name="report.docx", translate=model)
    assert set(seen) == {"A chart of yearly sales", "Sales chart"}              # were left in English
    xml = zipfile.ZipFile(io.BytesIO(out)).read("word/document.xml").decode("utf-8")
    assert 'descr="A chart-it of yearly-it sales-it" title="Sales-it chart-it"' in xml and 'descr="image1.png"' in xml
    docx.Document(io.BytesIO(out))

    document = OpenDocumentText()
    frame = Frame(width="2cm", height="2cm", anchortype="as-char")
    frame.addElement(Image(href="Pictures/a.png"))
    frame.addElement(Title(text="Sales chart"))
    frame.addElement(Desc(text="A chart of yearly sales"))
    paragraph = P(text="See the chart. ")
    paragraph.addElement(frame)
    document.text.addElement(paragraph)
    model, seen = recording(suffixed)
    out = translate_document(None, saved(document), name="report.odt", translate=model)
    assert set(seen) == {"See the chart.", "Sales chart", "A chart of yearly sales"}
    content = zipfile.ZipFile(io.BytesIO(out)).read("content.xml").decode("utf-8")
    assert "<svg:title>Sales-it chart-it</svg:title>" in content
    assert "<svg:desc>A chart-it of yearly-it sales-it</svg:desc>" in content


def test_a_word_chart_s_categories_and_series_names_are_translated_in_the_chart_and_its_workbook():
    import pptx
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE
    from pptx.util import Inches

    deck = pptx.Presentation()                     # a chart's part and workbook, as Word writes them too
    data = CategoryChartData()
    data.categories = ["North coast", "South hills"]
    data.add_series("Apples sold", (3, 4))
    made = deck.slides.add_slide(deck.slide_layouts[6]).shapes.add_chart(
        XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(1), Inches(6), Inches(4), data).chart
    chart_xml, workbook = made.part.blob, made.part.chart_workbook.xlsx_part.blob
    relationship = ('<Relationship Id="rId{}" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
                    'relationships/{}" Target="{}"/>')

    def with_chart(name: str, blob: bytes) -> bytes:
        if name == "[Content_Types].xml":
            return blob.replace(b"</Types>", b'<Override PartName="/word/charts/chart1.xml" ContentType="application/'
                                b'vnd.openxmlformats-officedocument.drawingml.chart+xml"/><Default Extension="xlsx" '
                                b'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"/>'
                                b"</Types>")
        if name == "word/_rels/document.xml.rels":
            return blob.replace(b"</Relationships>",
                                relationship.format(90, "chart", "charts/chart1.xml").encode() + b"</Relationships>")
        return blob
    rels = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.'
            'openxmlformats.org/package/2006/relationships">'
            + relationship.format(1, "package", "../embeddings/Microsoft_Excel_Sheet1.xlsx") + "</Relationships>")
    source = rezipped(new_docx(), with_chart, {"word/charts/chart1.xml": chart_xml,
                                               "word/charts/_rels/chart1.xml.rels": rels.encode(),
                                               "word/embeddings/Microsoft_Excel_Sheet1.xlsx": workbook})
    model, seen = recording(suffixed)
    out = zipfile.ZipFile(io.BytesIO(translate_document(None, source, name="report.docx", translate=model)))
    assert {"North coast", "South hills", "Apples sold"} <= set(seen)
    chart = out.read("word/charts/chart1.xml").decode("utf-8")
    assert re.findall(r"<c:v>([^<]*)</c:v>", chart) == ["Apples-it sold-it", "North-it coast-it", "South-it hills-it",
                                                        "3", "4"]
    sheet = zipfile.ZipFile(io.BytesIO(out.read("word/embeddings/Microsoft_Excel_Sheet1.xlsx")))
    strings = re.findall(r"<t[^>]*>([^<]*)</t>", sheet.read("xl/sharedStrings.xml").decode())
    assert strings == ["North-it coast-it", "South-it hills-it", "Apples-it sold-it"]
