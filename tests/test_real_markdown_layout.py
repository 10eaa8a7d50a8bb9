"""A translated Markdown file's diff shows the translation: the blocks whose spelling CommonMark leaves free come
back as the source spells them (`pipeline/documents/markdown_layout.py`), where mdformat wrote its house style:
bullets, list numbers, thematic breaks, setext headings, fences, indented code, link destinations, reference
links' labels and reference definitions (moved to the end, sorted, lowercased, an unused one dropped)."""
import difflib

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from markdown_it import MarkdownIt

from pipeline.documents import translate_document
from roundtrip import problems, reverse_words
from stand_ins import suffixed

LAYOUT = """Project Title
=============

An intro that is
hard-wrapped.

Subtitle
--------

* star item one
* star item two

+ plus item

1. first
2. second
3. third

7) seven
8) eight

* * *

~~~python
print("hi")
~~~

````
code with ``` inside
````

    indented code block

    after a blank line

See the [Guide][Guide Link], the [API][] and [Help], and ![a logo][Logo].

[Guide Link]: https://example.com/guide
[API]: https://example.com/api "The API"

A [page](https://de.wikipedia.org/wiki/Äpfel), a [file](<./my file.md>) and <https://x.org/é>.

[Help]: <https://x.org/a b>
[Logo]: logo.png
[Unused]: https://u.org
"""


def changed_lines(before: str, after: str) -> list[str]:
    return [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def test_a_file_translated_as_it_is_comes_back_line_for_line():
    out = translate_document(None, LAYOUT.encode(), name="a.md", translate=lambda texts: texts).decode()
    assert changed_lines(LAYOUT, out) == []           # was: 36 changed lines


def test_a_translated_file_changes_only_its_texts_and_reads_as_the_source_does():
    out = translate_document(None, LAYOUT.encode(), name="a.md", translate=suffixed).decode()
    assert out.startswith("Project-it Title-it\n===================\n")          # underlined to its new width
    assert "\n* star-it item-it one-it\n" in out and "\n+ plus-it item-it\n" in out
    assert "\n1. first-it\n2. second-it\n3. third-it\n" in out and "\n7) seven-it\n8) eight-it\n" in out
    assert "\n* * *\n" in out and "\n~~~python\n" in out and "\n````\ncode with ``` inside\n````\n" in out
    assert "\n    indented code block\n\n    after a blank line\n" in out
    assert "See-it the-it [Guide][Guide Link], the-it [API][] and-it [Help], and-it ![a logo][Logo]." in out
    assert "\n[Guide Link]: https://example.com/guide\n[API]: https://example.com/api \"The API\"\n" in out
    assert out.endswith("\n[Help]: <https://x.org/a b>\n[Logo]: logo.png\n[Unused]: https://u.org\n")
    assert "(https://de.wikipedia.org/wiki/Äpfel)" in out and "(<./my file.md>)" in out and "<https://x.org/é>" in out
    structure = [token.type for token in MarkdownIt("commonmark").parse(LAYOUT)]
    assert [token.type for token in MarkdownIt("commonmark").parse(out)] == structure
    assert problems("a.md", LAYOUT.encode(), translate_document(None, LAYOUT.encode(), name="a.md",
                                                                translate=reverse_words)) == []


def test_a_reference_definition_to_a_renamed_heading_is_pointed_at_its_new_anchor_in_place():
    source = "# Usage\n\nSee [the usage][use].\n\n[use]: #usage\n\n## More\n\nText.\n"
    out = translate_document(None, source.encode(), name="a.md",
                             translate=lambda texts: [text.replace("Usage", "Uso") for text in texts]).decode()
    assert "\n[use]: #uso\n\n## More\n" in out


def test_list_numbers_of_different_widths_keep_each_item_s_text_under_it():
    source = "".join(f"{n}. item {n}\n" for n in range(8, 12)) + "\n<!-- -->\n\n10) x\n\n    more of ten\n"
    out = translate_document(None, source.encode(), name="a.md", translate=lambda texts: texts).decode()
    parse = MarkdownIt("commonmark").parse
    assert [(t.type, t.info) for t in parse(out)] == [(t.type, t.info) for t in parse(source)]
    assert "8. item 8\n9. item 9\n10. item 10\n11. item 11\n" in out


def test_a_footnote_s_list_and_paragraphs_stay_in_it_and_definitions_stay_a_line_apart():
    """GitHub reads the lines indented under a footnote's definition as its body: a list there was read as the
    definition's text and written back as escaped text (`\\- Strict styles`), the list gone."""
    source = ("Text[^r] and[^2][^3].\n\n[^r]: Some use cases include:\n    - Strict styles.\n    - More rules.\n\n"
              "    A second paragraph\n    on two lines.\n\n[^2]: One.\n[^3]: Two.\n\nAfter.\n")
    out = translate_document(None, source.encode(), name="a.md", translate=suffixed).decode()
    assert "[^r]: Some-it use-it cases-it include-it:\n    - Strict-it styles-it.\n    - More-it rules-it.\n\n" in out
    assert "    A second-it paragraph-it on two-it lines-it.\n\n[^2]: One-it.\n[^3]: Two-it.\n\nAfter-it.\n" in out
    same = translate_document(None, source.encode(), name="a.md", translate=lambda texts: texts).decode()
    assert changed_lines(source, same) == []
    lazy = source.replace("    on two lines.", "on two lines.")              # a lazy line: under its paragraph
    assert "    A second paragraph\n    on two lines.\n" in translate_document(
        None, lazy.encode(), name="a.md", translate=lambda texts: texts).decode()


BLOCKS = ["Title\n=====", "Sub\n---", "# Atx", "* a\n* b", "+ c", "- d\n\n  more of d", "1. one\n2. two",
          "3) three", "9. nine\n10. ten\n    under ten", "***", "- - -", "___", "~~~\ncode\n~~~", "```js\nx\n```",
          "    indented\n    code", "> quote\n> ---", "> Quoted\n> =====", "[r]: https://r.org", "Use [r] and [x][r].",
          "Text with *em* and `code`.", "* item\n\n      code in item", "1. item\n\n   ---", "<div>\nhtml\n</div>",
          "[^1]: Foot.", "Para [^1].", "Line  \nbreak"]


@given(st.lists(st.sampled_from(BLOCKS), min_size=1, max_size=8))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_sequence_of_blocks_reads_back_as_the_source_does(blocks):
    """Whatever blocks follow one another, the source's layout written back parses to the same tokens."""
    source = "\n\n".join(blocks) + "\n"
    assume("[^1]: Foot.\n\n    " not in source)           # GitHub reads that code as the footnote's (and so do we)

    def read(text: str) -> list[tuple[str, str, str]]:       # (code in a list item is fenced: the same code)
        return [("code", "", t.content) if t.type in ("fence", "code_block") and not t.info else
                (t.type, t.info if t.type != "inline" else "", t.content if t.type == "fence" else "")
                for t in MarkdownIt("commonmark").parse(text)]

    for model in (lambda texts: texts, suffixed):
        assert read(translate_document(None, source.encode(), name="a.md", translate=model).decode()) == read(source)
