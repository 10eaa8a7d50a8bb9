"""A sentence cut by inline markup (a link, bold, inline code) is read by the model as one sentence, and each
inline element comes back once, where its translation lands; a paragraph hard-wrapped in the source is one text.
Before, each text node was translated alone: `Read the`, `documentation`, `for details.`, and each source line."""
from bs4 import BeautifulSoup
from lxml import etree

from pipeline.documents import translate_document

from roundtrip import problems
from stand_ins import recording

PAGE = """<!DOCTYPE html><html lang="en"><body>
<p>Read the <a href="/docs">documentation</a> for more
details.</p>
<p>Run <code>make install</code> as <b>root</b>.</p>
<p>Open <a href="/a">the <b>big</b> menu</a> now.</p>
</body></html>"""
ITALIAN = {"Read the documentation for more details.": "Per maggiori dettagli leggete la documentazione.",
           "documentation": "documentazione",
           "Run make install as root.": "Eseguite make install come root.",
           "root": "root", "Open": "Aprite", "now.": "ora.", "the big menu": "il menu grande", "big": "grande"}


def dictionary(texts: list[str]) -> list[str]:
    return [ITALIAN.get(text, text.upper()) for text in texts]


def translated(page: str, model=dictionary, name: str = "page.html") -> tuple[str, list[str]]:
    translate, seen = recording(model)
    return translate_document(None, page.encode(), name=name, translate=translate).decode(), seen


def tags(markup: str) -> list[tuple[str, dict]]:
    """The body's elements and their attributes, in order."""
    return [(tag.name, dict(tag.attrs)) for tag in BeautifulSoup(markup, "html.parser").body.find_all(True)]


def test_a_sentence_with_a_link_is_one_text_and_the_link_moves_with_its_words():
    out, seen = translated(PAGE)
    assert "Read the documentation for more details." in seen            # one sentence, one line
    assert '<p>Per maggiori dettagli leggete la <a href="/docs">documentazione</a>.</p>' in out
    assert problems("page.html", PAGE.encode(), out.encode()) == []       # the checker lets an element move


def test_inline_code_comes_back_exactly_inside_the_translated_sentence():
    out, seen = translated(PAGE)
    assert "Run make install as root." in seen and "make install" not in seen    # code is never translated alone
    assert "<p>Eseguite <code>make install</code> come <b>root</b>.</p>" in out


def test_a_link_holding_formatting_is_a_sentence_of_its_own_and_keeps_every_element():
    out, seen = translated(PAGE)
    assert {"Open", "the big menu", "big", "now."} <= set(seen)
    assert '<p>Aprite <a href="/a">il menu <b>grande</b></a> ora.</p>' in out
    assert tags(out) == tags(PAGE)


def test_a_model_that_loses_an_element_s_words_still_gives_every_element_back_once():
    def careless(texts):                  # drops the link's words from the sentence, and shouts the rest
        return [text.replace("documentation", "").upper() for text in texts]

    out, _ = translated(PAGE, careless)
    assert tags(out) == tags(PAGE)
    assert '<a href="/docs">documentation</a>' in out          # its words as written, never an empty link


def test_spaces_at_an_element_s_edge_stay_outside_it_and_xhtml_stays_well_formed():
    page = ('<?xml version="1.0" encoding="UTF-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><body>'
            '<p>Press <kbd>Ctrl</kbd> <kbd>Shift</kbd> and <a href="#x">click here</a> to go.</p></body></html>')
    italian = {"Press Ctrl Shift and click here to go.": "Premete Ctrl Shift e fate clic qui per andare.",
               "click here": "fate clic qui"}
    out, _ = translated(page, lambda texts: [italian.get(text, text) for text in texts], "page.xhtml")
    assert ('<p>Premete <kbd>Ctrl</kbd> <kbd>Shift</kbd> e <a href="#x">fate clic qui</a> per andare.</p>'
            in out), out
    etree.fromstring(out.encode())


def test_an_element_whose_article_merged_with_a_preposition_is_still_found():
    italian = {"I want to go to the station now.": "Voglio andare alla stazione ora.", "the station": "la stazione"}
    out, _ = translated("<p>I want to go to <b>the station</b> now.</p>",
                        lambda texts: [italian.get(text, text) for text in texts])
    assert out == "<p>Voglio andare alla <b>stazione</b> ora.</p>"


def test_code_of_several_spans_and_a_footnote_mark_are_moved_whole_inside_their_sentence():
    italian = {"Use os.path.join to join paths.": "Usate os.path.join per unire i percorsi.",
               "See the note[1] below.": "Vedete la nota[1] sotto."}
    page = ('<p>Use <code class="docutils literal"><span class="pre">os.path</span><span class="pre">.join</span>'
            '</code> to join paths.</p>\n<p>See the note<sup><a href="#f1">[1]</a></sup> below.</p>')
    out, seen = translated(page, lambda texts: [italian.get(text, text.upper()) for text in texts])
    assert seen == ["Use os.path.join to join paths.", "See the note[1] below."]       # as Sphinx writes them
    assert out == ('<p>Usate <code class="docutils literal"><span class="pre">os.path</span><span class="pre">.join'
                   '</span></code> per unire i percorsi.</p>\n'
                   '<p>Vedete la nota<sup><a href="#f1">[1]</a></sup> sotto.</p>')


def test_an_element_with_only_a_number_or_a_mark_beside_it_is_still_translated():
    page = '<ol><li>3) <a href="#c">Configure the server</a></li></ol><p>2024 <b>Annual report</b></p>'
    out, _ = translated(page, lambda texts: [text.upper() for text in texts])
    assert out == '<ol><li>3) <a href="#c">CONFIGURE THE SERVER</a></li></ol><p>2024 <b>ANNUAL REPORT</b></p>'


def test_a_page_whose_doctype_declares_entities_is_a_one_line_error_not_a_broken_page():
    import pytest

    page = ('<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" '
            '"http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd" [<!ENTITY author "Jane Doe">]>\n'
            '<html xmlns="http://www.w3.org/1999/xhtml"><body><p>Written by &author; in 1999.</p></body></html>')
    with pytest.raises(ValueError, match=r"^page\.xhtml: its DOCTYPE declares entities") as caught:
        translated(page, name="page.xhtml")
    assert "\n" not in str(caught.value)


def test_a_mark_glued_to_a_word_is_read_apart_and_glued_again():
    italian = {"She said 1 hello.": "Lei disse 1 ciao.", "Water is H 2 O.": "L'acqua è H 2 O."}
    out, seen = translated("<p>She said<sup>1</sup> hello.</p><p>Water is H<sub>2</sub>O.</p>",
                           lambda texts: [italian.get(text, text) for text in texts])
    assert seen == ["She said 1 hello.", "Water is H 2 O."]              # not `said1`, `H2O`: one pass, no pieces
    assert out == "<p>Lei disse<sup>1</sup> ciao.</p><p>L'acqua è H<sub>2</sub>O.</p>"


def test_a_paragraph_of_very_many_links_is_read_node_by_node_in_linear_time():
    import time

    page = "<p>" + " ".join(f'word <a href="#{i}">link{i}</a>' for i in range(2000)) + " end.</p>"
    started = time.perf_counter()
    out, seen = translated(page, lambda texts: [text.upper() for text in texts])
    assert time.perf_counter() - started < 10          # 2,000 groups placed in one sentence took minutes
    assert out.count("<a ") == 2000 and "LINK1999" in out and len(seen) == 4001


def test_an_indented_page_keeps_its_indentation():
    page = ("<html>\n  <body>\n    <ul>\n      <li>First item</li>\n\n      <li>Second item</li>\n    </ul>\n"
            "  </body>\n</html>\n")
    out, _ = translated(page)
    assert out == page.replace("First item", "FIRST ITEM").replace("Second item", "SECOND ITEM")   # was flush left


def test_a_ruby_gloss_is_read_within_its_sentence_and_kept_as_written():
    page = "<p>In Japanese the word <ruby>庭<rp>(</rp><rt>niwa</rt><rp>)</rp></ruby> means garden.</p>".encode()
    model, seen = recording(lambda texts: [text.upper() for text in texts])
    out = translate_document(None, page, name="book.xhtml", translate=model).decode()
    assert len(seen) == 1 and seen[0].startswith("In Japanese the word") and seen[0].endswith("means garden.")
    assert "<ruby>庭<rp>(</rp><rt>niwa</rt><rp>)</rp></ruby>" in out and "MEANS GARDEN." in out   # was: 庭 translated
