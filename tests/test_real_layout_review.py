"""What the review of the layout-keeping writers found (HTML's start tags, XML spliced in place, YAML's folds,
Markdown's tables), each read back as the source reads but for its translation."""
from lxml import etree

from pipeline.documents import translate_document
from stand_ins import suffixed


def test_a_folded_yaml_value_with_a_line_indented_more_is_translated_and_the_catalog_with_it():
    """A line indented more in a `>` value keeps its line break: folding it at a space made the value read
    otherwise, and the whole catalog came back untranslated."""
    source = "en:\n  keep: >\n    Second para\n      indented more line\n    back again\n  other: Hello world\n"
    out = translate_document(None, source.encode(), name="en.yml", translate=suffixed).decode()
    assert out.startswith("it:\n") and "other: Hello-it world-it" in out and "      indented-it more-it line-it" in out


def test_an_android_string_after_a_comment_is_translated():
    source = ('<resources><string name="x"><!-- shown on home -->Welcome back friend</string>'
              '<string name="y">Hello<!-- note --> world of mine</string></resources>')
    out = translate_document(None, source.encode(), name="strings.xml", translate=suffixed).decode()
    assert "<!-- shown on home -->Welcome-it back-it friend-it</string>" in out and "world-it of mine-it" in out


def test_an_xhtml_start_tag_with_an_html_entity_is_written_as_xml():
    source = ('<?xml version="1.0" encoding="utf-8"?><!DOCTYPE html>\n<html xmlns="http://www.w3.org/1999/xhtml">'
              '<head><title>Title here</title></head>\n<body><p>Hello&nbsp;world</p>'
              '<img src="a.png" alt="" data-note="A&mdash;B"/></body></html>')
    out = translate_document(None, source.encode(), name="x.xhtml", translate=suffixed)
    assert etree.fromstring(out).find(".//{http://www.w3.org/1999/xhtml}img").get("data-note") == "A\u2014B"


def test_a_duplicate_attribute_is_written_once_with_its_translation():
    """A browser reads the first of two `title`s, the parser the last: the translation went into the copy no
    browser shows."""
    out = translate_document(None, b'<p title="First tip" title="Second tip">Hello there</p>', name="a.html",
                             translate=suffixed).decode()
    assert out.count("title=") == 1


def test_tables_in_quoted_lists_and_with_empty_edge_cells_keep_their_columns():
    from markdown_it import MarkdownIt

    def cells(text: str) -> list[list[str]]:
        rows, row = [], None
        for token in MarkdownIt("commonmark").enable("table").parse(text):
            if token.type == "tr_open":
                row = []
                rows.append(row)
            elif token.type == "inline" and row is not None:
                row.append(token.content)
        return rows

    quoted = "> 10. Item text\n>\n>     | Name | Value |\n>     |---|---|\n>     | 12 | 13 |\n"
    assert translate_document(None, quoted.encode(), name="a.md", translate=lambda texts: texts).decode() == quoted
    mixed = "Name | Value\n--- | ---\n| | Twelve |\nBeta | Three\n"
    out = translate_document(None, mixed.encode(), name="a.md", translate=suffixed).decode()
    assert cells(out) == [["Name-it", "Value-it"], ["", "Twelve-it"], ["Beta-it", "Three-it"]]
