"""MDX (Docusaurus, Next.js docs): Markdown with JavaScript expressions and JSX tags, which come back verbatim and
are never given to the model; the prose around them is translated."""
from pipeline.documents import translate_document
from pipeline.documents.formats import by_extension

from stand_ins import recording, suffixed

PAGE = """---
title: Tabs
---
import Tabs from '@theme/Tabs';

# Using tabs

Hello {props.name}, welcome to the <Highlight color="#25c2a0">green</Highlight> page.

<Tabs groupId="os" values={[{label: 'Linux', value: 'linux'}, {label: 'Mac', value: 'mac'}]}>
<TabItem value="linux">

Install the package with apt.

</TabItem>
</Tabs>

{/* This comment is not shown */}

Prices start at {price} euros per month.
"""


def translated(text: str, name: str = "page.mdx") -> tuple[str, list[str]]:
    translate, seen = recording(suffixed)
    return translate_document(None, text.encode(), name=name, translate=translate).decode(), seen


def test_mdx_is_a_registered_format_read_as_markdown():
    assert by_extension(".MDX").name == "mdx"


def test_expressions_and_jsx_tags_come_back_verbatim_and_the_prose_is_translated():
    out, seen = translated(PAGE)
    assert "Hello-it {props.name}, welcome-it to the-it <Highlight color=\"#25c2a0\">green</Highlight> page-it." in out
    assert "<Tabs groupId=\"os\" values={[{label: 'Linux', value: 'linux'}, {label: 'Mac', value: 'mac'}]}>\n" in out
    assert "\n{/* This comment is not shown */}\n" in out
    assert "Prices-it start-it at {price} euros-it per-it month-it." in out
    assert "Install-it the-it package-it with-it apt-it." in out
    # a text whose letters are all in kept spans (a JSX tag, a comment) is not given to the model at all
    assert not any(text.startswith(("<Tabs", "{/*")) for text in seen), seen


def test_braces_in_plain_markdown_are_prose():
    out, seen = translated("Use the {name} field here.\n", name="page.md")
    assert seen == ["Use the {name} field here."] and out == "Use-it the-it {name} field-it here-it.\n"


TABS = """import Tabs from '@theme/Tabs';
import TabItem from '@theme/TabItem';

<Tabs groupId="fruit">
  <TabItem value="apple" label="Apple" default>
    This is an apple that
    grows in {props.country}.
  </TabItem>
  <TabItem value="code" label="Code">
    <pre>
    make install
    </pre>
    ```bash
    npm run build
    ```
    - a list item
  </TabItem>
</Tabs>

<details>
  <summary>More options</summary>
  Hidden text here.
  <Admonition type="tip" items={[
    'one']}>Use the fast path.</Admonition>
</details>
"""


def test_text_inside_jsx_blocks_without_blank_lines_is_translated_and_the_jsx_kept():
    """Docusaurus' tabs, details and admonitions with their text on the lines between their tags: CommonMark reads
    each as one block of raw HTML, which was kept untranslated (an HTML parser cannot write JSX back)."""
    out, seen = translated(TABS)
    assert "    This-it is an apple-it that-it grows-it in {props.country}.\n" in out        # one paragraph
    assert "  Hidden-it text-it here-it.\n" in out
    assert "Use-it the-it fast-it path-it.</Admonition>" in out
    expected = TABS.replace("This is an apple that\n    grows in", "This-it is an apple-it that-it grows-it in") \
        .replace("Hidden text here.", "Hidden-it text-it here-it.").replace("Use the fast path.", "Use-it the-it "
                                                                             "fast-it path-it.") \
        .replace('label="Apple"', 'label="Apple-it"').replace('label="Code"', 'label="Code-it"')     # tab labels
    assert out == expected                                    # every tag, attribute and other line as written
    for never in ("make install", "npm run build", "a list item", "import Tabs"):
        assert not any(never in text for text in seen), (never, seen)


def test_unpaired_braces_cost_what_their_text_does():
    """Braces are paired once per text: the expression pattern paired them itself from every `{`, scanning to the
    text's end where none closes (5,000 in a paragraph: about a minute; 20,000: a quarter of an hour)."""
    import time

    for text in ("Para " + "word {" * 5000 + "\n", "<Tabs>\n" + "x <a b={" * 5000 + "\n"):
        started = time.perf_counter()
        out, _ = translated(text)
        assert time.perf_counter() - started < 5 and out.count("{") == 5000


def test_jsx_attributes_a_reader_sees_are_translated_and_quoted_to_stay_one_string():
    page = ('# Guide <img src="/logo.png" alt="The logo" />\n\n<Tabs>\n  <TabItem value="apple" label="Apple" default>\n'
            "    An apple.\n  </TabItem>\n  <TabItem value=\"tree\" label=\"Tree\" attributes={{title: \"Not this\"}}>\n"
            '    ```html\n    <img alt="Not this either" />\n    ```\n  </TabItem>\n</Tabs>\n\n'
            "<Card title='Both' description=\"Not a reader's\" />\n")

    def model(texts):
        return [{"The logo": "Il logo", "Apple": "L'app", "Tree": 'Un "albero"', "Both": "L'\"uno\""}.get(text, text)
                for text in texts]
    translate, seen = recording(model)
    out = translate_document(None, page.encode(), name="page.mdx", translate=translate).decode()
    assert '<img src="/logo.png" alt="Il logo" />' in out                      # in a heading's text
    assert "<TabItem value=\"apple\" label=\"L'app\" default>" in out             # a label, its quotes kept
    assert "<TabItem value=\"tree\" label='Un \"albero\"' attributes={{title: \"Not this\"}}>" in out   # the other
    assert "<Card title='L&#39;\"uno\"' description=\"Not a reader's\" />" in out          # both: a reference
    for never in ("Not this", "Not this either", "Not a reader's", "apple", "/logo.png"):
        assert never not in seen, never


def test_a_brace_left_open_does_not_hide_the_tags_after_it():
    """A `{` that pairs with none (in a code span, in fenced code) left the braces after it unmasked, so a tag with
    a braced attribute after it was read as text (escaped `\\<Tip`), and a block's tags as one paragraph."""
    out, _ = translated('Write `{` then <Tip text={"Read this first"}>tips</Tip> here.\n')
    assert '<Tip text={"Read this first"}>' in out and "\\<Tip" not in out
    block = ('<Tabs>\n  <TabItem value="py">\n    ```python\n    print("{")\n    ```\n  </TabItem>\n'
             '  <TabItem value="js" attributes={{className: "red"}}>\n    Text in the tab.\n    <Card title={x}>\n'
             "    Card text here.\n    </Card>\n  </TabItem>\n</Tabs>\n")
    out, seen = translated(block)
    assert out == block.replace("Text in the tab.", "Text-it in the-it tab-it.").replace(
        "Card text here.", "Card-it text-it here-it.")
    assert not any("<Card" in text or "print" in text for text in seen), seen


def test_a_paragraph_whose_expression_spans_lines_is_never_written_twice():
    """A paragraph translated piece by piece whose result the last guard refused (it compared an expression's
    lines with the model's text, where they are joined) came back as the source with its first pieces translated
    and the rest repeated: the guard's source had been changed in place."""
    out, _ = translated("Hello {user.name\n  .toUpperCase()} and welcome.\nSecond sentence.\n")
    assert out.count("Second") == 1 and "{user.name\n" in out and ".toUpperCase()}" in out
    assert "Second-it sentence-it." in " ".join(out.split())


def test_a_brace_or_angle_bracket_the_source_escaped_stays_escaped():
    """In MDX an escaped brace (`\\{name\\}`, `&#123;`) is text; mdformat wrote it bare, which MDX reads as an
    expression (the page stops compiling: `name is not defined`)."""
    source = "Write \\{name\\} or &#123;id&#125; for a field, not {props.x}; 3 &lt; 4.\n"
    out = translate_document(None, source.encode(), name="a.mdx", translate=suffixed).decode()
    assert out.count("\\{") == 2 and out.count("\\}") == 2 and "{props.x}" in out and "3 \\< 4" in out
    assert "Write-it" in out


def test_a_jsx_block_s_line_with_an_entity_is_translated():
    """A line of text in a block of JSX was kept untranslated when mdformat would write it otherwise (`&amp;` as
    `&`): what it says is compared now, not how."""
    source = ('<Tabs>\n  <TabItem value="a">\n    Use the menu &amp; the toolbar to save&nbsp;it.\n'
              '  </TabItem>\n</Tabs>\n')
    out = translate_document(None, source.encode(), name="a.mdx", translate=suffixed).decode()
    assert "    Use-it the-it menu-it & the-it toolbar-it to save-it&nbsp;it.\n" in out
    assert out.startswith('<Tabs>\n  <TabItem value="a">\n') and out.endswith("  </TabItem>\n</Tabs>\n")
