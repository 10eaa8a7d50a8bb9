"""Markdown extensions of PHP Markdown Extra, Pandoc and Python-Markdown (MkDocs) that CommonMark reads as prose:
definition lists keep a line per term and definition, and abbreviations keep their label (the expansion translated).
Before, a definition list came back as one line (`Apple : Pomaceous fruit`) and an abbreviation escaped (`\\*\\[`)."""
from pipeline.documents import translate_document

from stand_ins import recording, suffixed

GLOSSARY = """Some text here.

Apple
:   Pomaceous fruit of plants.

Orange
: The fruit of an evergreen tree,
  grown in warm places.
: A colour.

Term with blank

:   Its definition here.

*[HTML]: Hyper Text Markup Language

The HTML specification is maintained.
"""


def translated(text: str) -> tuple[str, list[str]]:
    translate, seen = recording(suffixed)
    return translate_document(None, text.encode(), name="glossary.md", translate=translate).decode(), seen


def test_a_definition_list_keeps_a_line_per_term_and_definition():
    out, seen = translated(GLOSSARY)
    assert "\n\nApple-it\n:   Pomaceous-it fruit-it of plants-it.\n\n" in out
    assert "\n\nOrange-it\n: The-it fruit-it of an evergreen-it tree-it, grown-it in warm-it places-it.\n" \
           ": A colour-it.\n\n" in out
    assert "\n\nTerm-it with-it blank-it\n\n:   Its-it definition-it here-it.\n\n" in out
    assert {"Apple", "Pomaceous fruit of plants.", "The fruit of an evergreen tree, grown in warm places."} <= set(seen)


def test_an_abbreviation_keeps_its_label_and_its_expansion_is_translated():
    out, seen = translated(GLOSSARY)
    assert "\n\n*[HTML]: Hyper-it Text-it Markup-it Language-it\n\n" in out and "Hyper Text Markup Language" in seen


def test_a_colon_that_starts_no_definition_is_prose():
    out, _ = translated("The ratio was\n3:1 in the end.\n\nSee :rocket: here.\n")
    assert out == "The-it ratio-it\nwas-it 3:1 in\nthe-it end-it.\n\nSee-it :rocket: here-it.\n"   # as wrapped


def test_a_heading_s_attribute_list_stays_at_its_end_whatever_the_translation():
    page = "## Table of Contents { #toc .big }\n\nText [go](#toc).\n\n### Setup {#setup}\n"
    out = translate_document(None, page.encode(), name="a.md",
                             translate=lambda texts: [" ".join(reversed(text.split())) for text in texts]).decode()
    assert out == "## Contents of Table { #toc .big }\n\n[go](#toc). Text\n\n### Setup {#setup}\n"


def test_consecutive_abbreviations_keep_a_line_each():
    page = "About HTML.\n\n*[HTML]: Hyper Text Markup Language\n*[W3C]: World Wide Web Consortium\n"
    out, _ = translated(page)
    assert out.endswith("\n\n*[HTML]: Hyper-it Text-it Markup-it Language-it\n"
                        "*[W3C]: World-it Wide-it Web-it Consortium-it\n")


def test_characters_written_as_references_come_back_so():
    """mdformat writes `&nbsp;` as a no-break space itself (invisible in an editor) and `&copy;` as `©`: each
    character the source wrote only as a reference is written as it was; the model reads the character."""
    source = "Foo&nbsp;Bar &copy; 2024 &#8212; all rights, 5&nbsp;km. A literal — dash.\n"
    model, seen = recording(suffixed)
    out = translate_document(None, source.encode(), name="a.md", translate=model).decode()
    assert "Foo-it&nbsp;Bar-it &copy; 2024" in out and "5&nbsp;km" in out
    assert "—" in out and "&#8212;" not in out               # the dash is written as itself too: kept so
    assert any("Foo\xa0Bar" in text for text in seen)


def test_many_distinct_references_are_read_in_linear_time_and_written_as_they_came():
    import time
    source = "".join(f"&#{code};" for code in range(0x4E00, 0x4E00 + 20000)) + "\n"
    start = time.perf_counter()
    out = translate_document(None, source.encode(), name="a.md", translate=lambda texts: texts)
    assert time.perf_counter() - start < 20
    assert out.decode() == source
