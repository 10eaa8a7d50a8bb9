"""Writes the generated fixtures of this folder (see README.md): a chart deck and a document with a table of
contents, built with python-pptx and odfpy as those projects' own files are. Run from the repository root:
`.venv/bin/python tests/data/real/make_generated.py`. The output is deterministic but for zip timestamps."""
from pathlib import Path

HERE = Path(__file__).resolve().parent


def chart_deck(path: Path) -> None:
    from pptx import Presentation
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Downloads by release"
    data = CategoryChartData()
    data.categories = ["First quarter", "Second quarter", "Third quarter"]
    data.add_series("Stable release", (19.2, 21.4, 16.7))
    data.add_series("Nightly builds", (8.1, 9.6, 12.3))
    frame = slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(1.5), Inches(8), Inches(5), data)
    chart = frame.chart
    chart.has_title = True
    chart.chart_title.text_frame.text = "Downloads per quarter"
    chart.has_legend = True
    notes = slide.notes_slide.notes_text_frame
    notes.text = "The nightly builds grew every quarter."
    deck.save(path)


def toc_document(path: Path) -> None:
    from odf.opendocument import OpenDocumentText
    from odf.style import Style, TabStop, TabStops, ParagraphProperties, TextProperties
    from odf.text import (H, IndexBody, IndexTitle, P, Span, Tab, TableOfContent, TableOfContentSource,
                          IndexTitleTemplate)

    doc = OpenDocumentText()
    contents = Style(name="Contents_20_1", displayname="Contents 1", family="paragraph")
    stops = TabStops()
    stops.addElement(TabStop(position="6.5in", type="right", leaderstyle="dotted", leadertext="."))
    properties = ParagraphProperties()
    properties.addElement(stops)
    contents.addElement(properties)
    italic = Style(name="Emphasis", family="text")
    italic.addElement(TextProperties(fontstyle="italic"))
    doc.styles.addElement(contents)
    doc.styles.addElement(italic)
    toc = TableOfContent(name="Table of Contents1")
    source = TableOfContentSource(outlinelevel="2")
    source.addElement(IndexTitleTemplate(text="Table of Contents"))
    toc.addElement(source)
    body = IndexBody()
    title = IndexTitle(name="Table of Contents1_Head")
    title.addElement(P(text="Table of Contents"))
    body.addElement(title)
    for number, heading, page in (("1", "Introduction", "3"), ("2", "Installing the software", "5"),
                                  ("3", "Reporting problems", "9")):
        entry = P(stylename=contents)
        entry.addText(f"{number} {heading}")
        entry.addElement(Tab())
        entry.addText(page)
        body.addElement(entry)
    toc.addElement(body)
    doc.text.addElement(toc)
    for heading, text in (("Introduction", "This guide explains how to install the software."),
                          ("Installing the software", "Download the package and open it."),
                          ("Reporting problems", "Describe what you expected and what happened.")):
        doc.text.addElement(H(outlinelevel=1, text=heading))
        paragraph = P(text="Read this ")
        paragraph.addElement(Span(stylename=italic, text="carefully"))
        paragraph.addText(f". {text}")
        doc.text.addElement(paragraph)
    doc.save(str(path))


if __name__ == "__main__":
    chart_deck(HERE / "chart-deck.pptx")
    toc_document(HERE / "guide-with-contents.odt")
    print("wrote chart-deck.pptx and guide-with-contents.odt")
