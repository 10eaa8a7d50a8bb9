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
