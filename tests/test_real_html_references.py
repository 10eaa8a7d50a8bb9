"""Pages write URLs with a bare `&` (`?q=1&region=us`), which HTML5 (every browser) reads as written where no
character reference is meant; Python's parser, under BeautifulSoup, read `&region` in a link as `®ion`, `&lang`
in a text as `⟨`, and dropped the `;` of an unknown `&foo;`: links and URLs came back broken. The expected values
are what the HTML5 tokenizer gives."""
from bs4 import BeautifulSoup

from pipeline.documents import translate_document
from pipeline.documents.html import html5_references
from stand_ins import recording, suffixed

QUERY = "/search?q=1&region=us&notify=1&sect=2&lang=en&copy=2&para=3&times=4"


def translated(page: bytes, name: str = "page.html", model=suffixed) -> tuple[bytes, list[str]]:
    translate, seen = recording(model)
    return translate_document(None, page, name=name, translate=translate), seen


def test_links_with_a_bare_ampersand_in_their_query_keep_their_target():
    page = f'<html><body><p>Read <a href="{QUERY}">the results</a> now.</p><img src="a.png?w=1&deg=90" ' \
           f'alt="A chart"></body></html>'
    out, _ = translated(page.encode())
    soup = BeautifulSoup(out, "html.parser")                     # the output escapes each `&`: read as written
    assert soup.a["href"] == QUERY                               # was /search?q=1®ion=us¬ify=1§=2...
    assert soup.img["src"] == "a.png?w=1&deg=90"


def test_references_in_text_read_as_a_browser_reads_them():
    page = b"<p>See https://example.org/?a=1&lang=en for more &foo; and &copy 2024 and &notit; here.</p>"
    out, seen = translated(page, model=lambda texts: texts)
    assert seen == ["See https://example.org/?a=1&lang=en for more &foo; and \u00a9 2024 and \u00acit; here."]
    assert b"?a=1&amp;lang=en" in out and b"&amp;foo;" in out             # were a=1\u27e8=en and &amp;foo


def test_scripts_styles_and_comments_are_left_as_written_and_known_references_too():
    markup = ('<script>if (a &lang && b) { x = "&copy"; }</script><style>a::after { content: "&para" }</style>'
              '<!-- &lang --><p title="&copy 2024 &amp; &#169; &hellip;">&nbsp;&amp;&lt;x&gt;</p>')
    assert html5_references(markup) == markup.replace('"&copy 2024', '"&copy; 2024')


def test_a_page_in_a_legacy_encoding_is_still_read_in_it():
    page = ('<html><head><meta charset="windows-1252"></head><body><p>Caf\u00e9 <a href="/m?id=1&region=eu">menu'
            '</a> today.</p></body></html>').encode("cp1252")
    out, seen = translated(page)
    assert "Caf\u00e9 menu today." in seen
    soup = BeautifulSoup(out.decode("cp1252"), "html.parser")
    assert soup.a["href"] == "/m?id=1&region=eu" and "Caf\u00e9" in soup.p.get_text()


def test_reading_references_takes_linear_time_on_markup_that_never_closes_a_tag():
    """A page of `<a <a <a ...` with no `>` took the square of its length (96 KB: 100 s, a hostile upload)."""
    import time

    for hostile in ("<a " * 200_000, "<!" * 300_000, '<a b="' * 100_000):
        started = time.perf_counter()
        assert html5_references(hostile) == hostile
        assert time.perf_counter() - started < 5                     # about 0.1 s here; was hours
    assert html5_references('<a href="/s?q=1&region=us" title="a > b">x</a>') == \
        '<a href="/s?q=1&amp;region=us" title="a > b">x</a>'


def test_a_tag_with_a_less_than_sign_in_an_attribute_is_still_read_as_a_tag():
    for markup, expected in (('<a title="a < b" href="?q=1&region=us">x</a>', '?q=1&amp;region=us'),
                             ('<a v-if="a<b" title=Don\'t href="?q=1&region=us">x</a>', '?q=1&amp;region=us')):
        assert expected in html5_references(markup)                 # was ?q=1&reg;ion=us: a broken link
    script = '<script data-x="a<b">x = "?a=1&region=us"</script>'
    assert html5_references(script) == script                     # a script's text stays as written


def test_a_doctype_comes_back_as_written_with_no_line_end_added():
    for page in (b"<!DOCTYPE html>\n<html>\n<body><p>Hello.</p></body>\n</html>\n",       # HTML5, a line after it
                 b"<!DOCTYPE html><html><body><p>Hello.</p></body></html>",               # none
                 b'<!DOCTYPE html PUBLIC "-//W3C//DTD HTML 4.01//EN">\r\n<html><p>Hello.</p></html>'):
        out, _ = translated(page, model=lambda texts: texts)
        assert out == page                                # was a blank line after each doctype, or a line end added


def test_a_comment_ends_where_a_browser_ends_it_so_no_element_is_made_out_of_one():
    comment = b"<!-- x -- > <img src=x onerror=alert(1)> --\n> <svg onload=alert(2)> -->"
    out, seen = translated(b"<p>Hello.</p>" + comment + b"<p>Bye.</p>", model=lambda texts: texts)
    assert seen == ["Hello.", "Bye."] and out == b"<p>Hello.</p>" + comment + b"<p>Bye.</p>"   # was: a live <img>
    out, seen = translated(b"<p>A</p><!-- note --!><p>B</p>", model=lambda texts: texts)
    assert seen == ["A", "B"] and out == b"<p>A</p><!-- note --><p>B</p>"     # `--!>` ends it too (it ran on)
    out, seen = translated(b"<p>A</p><!-- never ended <p>B</p>", model=lambda texts: texts)
    assert seen == ["A"] and out == b"<p>A</p><!-- never ended <p>B</p>-->"      # was text, and translated
