"""Blocks of HTML in Markdown, as READMEs open (`<h1 align="center">`, a centred description, `<details>` with its
`<summary>`, an image's `alt`): their text is translated as an HTML page's is, and everything else in them comes
back exactly, its indentation too; a block the parser would write otherwise (a bare `&` in a URL, written `&amp;`)
is kept as written, as all HTML blocks were before."""
from pipeline.documents import translate_document

from stand_ins import recording, suffixed

README = """<h1 align="center">Awesome Tool</h1>

<p align="center">
  <img src="docs/logo.png" alt="The project logo" width="200">
  <br>
  A fast <b>command line</b> tool for translating documents.
</p>

<details>
<summary>Show the advanced options</summary>

Hidden content goes here.

</details>

<p>First line<br/>second line.</p>

<div><a href="/x?a=1&lang=en">Kept link text</a></div>

<!-- A comment stays. -->
"""


def test_the_text_of_html_blocks_is_translated_and_their_markup_kept():
    model, seen = recording(suffixed)
    out = translate_document(None, README.encode(), name="README.md", translate=model).decode()
    assert seen == ["Hidden content goes here.", "Awesome Tool", "command line",       # were all kept in English
                    "A fast command line tool for translating documents.", "The project logo",
                    "Show the advanced options", "First line", "second line."]
    assert out == README.replace("Awesome Tool", "Awesome-it Tool-it").replace(
        "The project logo", "The-it project-it logo-it").replace(
        "A fast <b>command line</b> tool for translating documents.",
        "A fast-it <b>command-it line-it</b> tool-it for-it translating-it documents-it.").replace(
        "Show the advanced options", "Show-it the-it advanced-it options-it").replace(
        "Hidden content goes here.", "Hidden-it content-it goes-it here-it.").replace(
        "First line<br/>second line.", "First-it line-it<br/>second-it line-it.")
