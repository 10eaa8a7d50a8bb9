"""A translated Markdown file's diff shows the translation: the blocks whose spelling CommonMark leaves free come
back as the source spells them (`pipeline/documents/markdown_layout.py`), where mdformat wrote its house style:
bullets, list numbers, thematic breaks, setext headings, fences, indented code, link destinations, reference
links' labels and reference definitions (moved to the end, sorted, lowercased, an unused one dropped)."""
import difflib

import pytest

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
    assert "    A second-it\n    paragraph-it on\n    two-it lines-it.\n\n[^2]: One-it.\n[^3]: Two-it.\n\nAfter-it.\n" in out
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


def test_a_wrapped_paragraph_s_translation_is_wrapped_as_wide():
    """A translated paragraph came back on one line: the source's hard-wrapped lines (an editor's 72 or 80
    columns) are its width again, inside a list or a quote too; one left as written keeps its own lines."""
    source = ("This paragraph is wrapped by an editor at a narrow width so that\nits lines stay short and "
              "the diff of a change stays small.\n\n- In a list item that is wrapped\n  over two lines.\n\n"
              "> Quoted text that is also\n> wrapped over lines.\n\nKept\nas written.\n")
    out = translate_document(None, source.encode(), name="a.md",
                             translate=lambda texts: [t if t.startswith("Kept") else t + " and more" for t in texts])
    blocks = out.decode().split("\n\n")
    first = blocks[0].split("\n")
    assert len(first) == 3 and max(map(len, first)) <= 64 and " ".join(first).endswith("stays small. and more")
    assert blocks[1] == "- In a list item that is wrapped\n  over two lines. and more"
    assert blocks[2] == "> Quoted text that is also\n> wrapped over lines. and\n> more"
    assert blocks[3] == "Kept\nas written.\n"


def read_as_commonmark(text: str) -> list[tuple]:
    """A document's blocks and each inline's links and text, code blocks fenced or indented alike."""
    read = []
    for token in MarkdownIt("commonmark").parse(text):
        if token.type in ("fence", "code_block"):
            read.append(("code", token.content))
        elif token.type == "inline":
            words = " ".join("".join(c.content if c.type == "text" else " " for c in token.children or []
                                     if c.type in ("text", "softbreak")).split())
            read.append(("inline", words, tuple(c.attrGet("href") for c in token.children or []
                                               if c.type == "link_open")))
        else:
            read.append((token.type, token.info if token.type != "list_item" else ""))
    return read


@pytest.mark.parametrize("source", [
    "\\[foo\\] text\n\n[foo]: /u\n",                  # a defined label's brackets stay escaped (text, no link)
    "[x]\\[foo\\]\n\n[foo]: /u\n[x]: /x\n",           # ... and `[x]` keeps pointing at /x
    "10.  x\n\n    code\n",                            # code after an item whose text starts past column 4
    "> 1.   a\n>\n>     code\n",
    "- - a\n\n  Title\n  =====\n",                     # a setext heading after a nested list, in a tight item
    "- - a\n\n  [r]: /u\n\n[r]\n",                     # ... and a definition there
    '[<b title="]">x</b>][r]\n\n[r]: /u\n',           # a link's text holding HTML with a `]`
    "x&nbsp;\\_&nbsp;y and&nbsp;\\_&nbsp;z\n",          # a reference beside `_` never lets it emphasize
    "~~~ ~x\ncode\n~~~\n\nafter\n",                    # a tilde fence whose information starts with `~`
    "1. item 0\n\n   more\n2. item 1\n\n   more\n",     # items without blank lines between, in a loose list
])
def test_what_the_source_says_is_what_its_layout_written_back_says(source):
    """Each came back reading otherwise (text became a link, code joined a list item, a heading a paragraph's
    text, a fence swallowed the rest of the file), until the review of the layout's first version."""
    out = translate_document(None, source.encode(), name="a.md", translate=lambda texts: texts).decode()
    assert read_as_commonmark(out) == read_as_commonmark(source)


@pytest.mark.parametrize("make", [lambda n: "".join(f"- item {i}\n" for i in range(n)),
                                  lambda n: "".join(f"[a{i}]: /u{i}\n" for i in range(n)) + "\ntext\n",
                                  lambda n: "".join(f"[a{i}]: /u{i}\n\n" for i in range(n)) + "p\n"])
def test_long_lists_and_runs_of_definitions_are_written_in_linear_time(make):
    """mdformat asked for each item whether the whole list was tight (8,000 items: 33 s), and markdown-it read
    each definition on to the end of its block (8,000: 145 s)."""
    import time

    timings = []
    for count in (2000, 8000):
        start = time.perf_counter()
        translate_document(None, make(count).encode(), name="a.md", translate=lambda texts: texts)
        timings.append(time.perf_counter() - start)
    assert timings[1] < 8 * timings[0] + 2                 # (four times the size: 16 times the time, before)


def test_a_table_keeps_its_rows_as_written_and_a_translated_row_its_style():
    """mdformat padded every table to align and wrote its delimiter row `| --- |`: an untranslated table of
    options changed whole. A row no text of which is translated comes back as written, the delimiter row too;
    a translated one in the source's style where the source does not align its columns."""
    compact = "|Name|Value|\n|-|:-:|\n|size|10|\n|`x`|`y`|\n"
    out = translate_document(None, compact.encode(), name="a.md", translate=suffixed).decode()
    assert out == "|Name-it|Value-it|\n|-|:-:|\n|size-it|10|\n|`x`|`y`|\n"
    bare = "Name | Value\n--- | ---\nsize | 10\n"
    assert translate_document(None, bare.encode(), name="a.md", translate=suffixed).decode() == \
        "Name-it | Value-it\n--- | ---\nsize-it | 10\n"
    aligned = "| Option | Meaning     |\n|--------|-------------|\n| `-v`   | verbose     |\n"
    assert translate_document(None, aligned.encode(), name="a.md", translate=lambda texts: texts).decode() == aligned
    realigned = translate_document(None, aligned.encode(), name="a.md", translate=suffixed).decode().split("\n")
    assert len({len(line) for line in realigned[:3]}) == 1            # padded again to the new widths


@pytest.mark.parametrize("name, source, expected", [
    ("a.md", "![a \\{b\\}](x.png)\n", "![a {b}](x.png)\n"),          # an image's escapes were dropped: `![a b]`
    ("a.mdx", "![a \\{b\\}](x.png) {x}\n", "![a \\{b\\}](x.png) {x}\n"),  # ... and in MDX stay escaped
    ("a.md", "[a](foo&amp;amp;)\n", "[a](foo&amp;amp;)\n"),           # was `(foo&amp;)`: another target
    ("a.md", "~~~\ncode", "~~~\ncode\n~~~\n"),                        # was `code~~~`: the fence never closed
])
def test_what_mdformat_itself_wrote_otherwise_is_written_as_it_reads(name, source, expected):
    assert translate_document(None, source.encode(), name=name, translate=lambda texts: texts).decode() == expected
