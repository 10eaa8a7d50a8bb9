"""An HTML page comes back as written where the translation changes nothing: each start tag as the source wrote it
(its quotes or none, `<link ... />`, its case), a translated attribute edited in place, and no end tag the source
left out where HTML lets it (`<p>`, `<li>`, `<td>`). BeautifulSoup wrote every tag anew, and closed what the
source left open where its parser had nested it: `<p>a<p>b</p>` came back `<p>a<p>b</p></p>`, whose second `</p>`
makes an empty paragraph in every browser, and `<th>a<th>b</tr>` as `<th>a<th>b</th></th></tr>`."""
import difflib

import pytest

from pipeline.documents import translate_document
from pipeline.documents.html import HtmlText
from stand_ins import suffixed

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Getting started &mdash; MyLib 2.0 documentation</title>
  <link rel="stylesheet" href="_static/pygments.css" type="text/css" />
  <script>var x = "<p>not html</p>"; if (a < b && c > d) {}</script>
</head>
<body class=docs>
<nav><ul><li><a href="index.html">Home</a><li><a href='guide.html' class=active>Guide</a></ul></nav>
<main>
<p>It&#8217;s easy &amp; fast.<br>
See the <a href="api.html#run" title="The run function"><code>run()</code></a> function.</p>
<img src="logo.png" alt="The MyLib logo" width=100 data-zoomable>
<table><tr><th>Name<th>Value</tr><tr><td>size<td>10</table>
<dl><dt>Term<dd>Its definition</dl>
<p>Unclosed paragraph
<p>Another one &copy; 2024</p>
</main>
</body>
</html>
"""


def changed(before: str, after: str) -> list[str]:
    return [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def test_a_page_translated_as_it_is_changes_only_its_language():
    out = translate_document(None, PAGE.encode(), name="a.html", translate=lambda texts: texts).decode()
    assert changed(PAGE, out) == ['-<html lang="en">', '+<html lang="it">']     # was: 9 more lines


def test_a_translated_page_changes_only_its_texts_and_attributes_a_reader_sees():
    out = translate_document(None, PAGE.encode(), name="a.html", translate=suffixed).decode()
    assert "<link rel=\"stylesheet\" href=\"_static/pygments.css\" type=\"text/css\" />" in out
    assert "<body class=docs>" in out and "<a href='guide.html' class=active>Guide-it</a></ul>" in out
    assert '<img src="logo.png" alt="The-it MyLib-it logo-it" width=100 data-zoomable>' in out   # edited in place
    assert '<a href="api.html#run" title="The-it run-it function-it"><code>run()</code></a>' in out
    assert "<table><tr><th>Name-it<th>Value-it</tr><tr><td>size-it<td>10</table>" in out
    assert "<dl><dt>Term-it<dd>Its-it definition-it</dl>" in out
    assert "<p>Unclosed-it paragraph-it\n<p>Another-it one-it &copy; 2024</p>\n</main>" in out
    assert out.count("</p>") == PAGE.count("</p>")


@pytest.mark.parametrize("markup", ["<p>a<p>b", "<ul><li>one<li>two</ul>", "<p>x <b>bold</b> y", "<div><p>in</div>",
                                    "<select><option>A<option>B</select>", "<P CLASS='x'>Up</P>"])
def test_markup_with_omitted_end_tags_comes_back_as_written(markup):
    assert HtmlText(markup).render() == markup


def test_an_end_tag_the_source_left_out_is_written_where_html_needs_it():
    """Only an element HTML lets end by itself loses its end tag: an open `<b>` still gets its `</b>`."""
    assert HtmlText("<div><b>bold text</div>").render() == "<div><b>bold text</b></div>"


@pytest.mark.parametrize("markup", ["<p/>Text here", "<div/>Text here", "<p>a <span/>b c</p>", "<svg><rect/></svg>"])
def test_an_element_written_self_closed_comes_back_so(markup):
    """HTML ignores the slash of `<p/>`: the text after it is the paragraph's. It came back `<p></p>Text here`,
    the text out of it."""
    assert HtmlText(markup).render() == markup
