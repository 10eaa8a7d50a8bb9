"""HTML in, HTML out: the text to translate, and the document rebuilt around its translations.

The one HTML path: the service's `format=html` and `.html` documents both use `HtmlText`.

BeautifulSoup with the standard library's `html.parser` backend (BeautifulSoup is what LibreTranslate's
own HTML path uses): maintained, lenient with broken markup, and no compiled dependency. Tags,
attributes (in their order) and comments come back as they were: each start tag as the source wrote it (a
translated value edited in place), and no end tag the source left out where HTML lets it (`_soup_as_written`). An entity of the
input comes back as that entity wherever its character is in the output (`&copy;`, `&#8212;`); other
characters come back as characters, except `&`, `<`, `>` and no-break spaces, which are always escaped.

XHTML, and any page that is well-formed XML (lxml parses it, loading nothing) or says it is XHTML (an XML
declaration, the XHTML namespace), comes back as XML: void elements closed (`<br/>`), tag and attribute names in
the case they were written (`viewBox`), the declaration, doctype and `<meta>` charset as written, and no entity
XML does not define: `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;` and numeric references as written, any other
(`&nbsp;`, `&mdash;`, which only a DTD defines) as its numeric reference (`&#160;`), wherever its character is;
a no-break space the input only wrote as a character stays one; characters XML forbids (most control characters)
are dropped. BeautifulSoup's `html.parser` still reads such a page (one parser, one tree for both kinds), and
lower-cases names, which the written case puts back.
The root's `lang` and `xml:lang`, and `<meta http-equiv="content-language">`, where they name the run's source
language (`en`, `en-US` on an English -> Italian run), name its target instead (`it`): the page is now in it; an
`og:locale` that names it names the target's locale (`en_US` -> `it_IT`). Other elements' languages, and
`og:locale:alternate` (the page's other versions), are left as written.

Attribute values are translated where a reader sees or hears them (`translated_attributes`): `TRANSLATED_ATTRIBUTES`
on any element (`alt`, `title`, `placeholder`, `aria-label`, `aria-description`, ...), `ELEMENT_ATTRIBUTES` (the
`label` of <track>, <optgroup> and <option>, a <th>'s `abbr`), the `value` of a submit, button or reset <input> (its
label; no other input's value, which is data), and a <meta>'s `content` where its `name`, `property` or `itemprop`
says it is prose (`META_TEXT`: `description`, `og:title`, `og:description`, `og:image:alt`, `twitter:title`, ...).
`<meta name="keywords">` is a list: each comma-separated item is translated as its own text (a model given the whole
list may merge or reorder items), the commas and spaces kept as written. No other attribute, and no other <meta>
(`og:url`, `og:type`, `charset`, `http-equiv`), is translated.

Text inside <script>, <style>, <code>, <pre>, <textarea>, <template>, MathML's <math>, elements that say
`translate="no"` or have the class `notranslate` (their attributes too, as HTML's translation mode is inherited,
until a descendant says `translate="yes"`), and comments, and text without a letter (`© 2024`) are not
translated; symbols (© ® ™ ♥ emoji, arrows: `segments.SYMBOL`) come back where they were, which a model whose vocabulary lacks
them would drop. A sentence cut by inline markup (`Read the <a href="/docs">manual</a> first.`, `Run <code>make</code>`)
is one text for the model: an element's own text and the `INLINE` elements in it that hold a chain down to one
text (`<b><i>word</i></b>`) are a chunk (`runs.RunLayout`), each element moved, with its words'
translation, to where they land in the sentence's translation (code and what has no letter: exactly as written), or,
where the model lost one, the text between them translated piece by piece, so every element comes back once. A
line break, an image or an inline element that holds more (a link with a bold word: a chunk of its own) ends a
chunk; a text node in no chunk is translated alone. A `<wbr>` inside a word goes (the word is read whole: it cut
the word in two texts); the engines read soft hyphens out of a word (`text.INVISIBLE`). Line ends and the
spaces around them inside a text are one space for the model (HTML shows them so), where the engine would cut the
text at them. A translation in an attribute is escaped as the attribute's quotes need (`&quot;`). Character
references are read as HTML5 reads them (`html5_references`): a URL's bare `&` (`?q=1&region=us`) stays as written.
"""
from __future__ import annotations

import codecs
import functools
import html
import html.entities
import html.parser
import warnings
from typing import Any, Sequence

import regex

from pipeline.documents.runs import MAX_GROUPS, RunLayout, child_index, spaces_outside
from pipeline.documents.segments import Segment, protected_spans
from pipeline.extras import require, safe_xml_parser
from pipeline.language import REGIONS, Direction, FollowsDirection

UNTRANSLATED = frozenset({"script", "style", "code", "pre", "textarea", "template", "math", "ruby"})   # ruby: a
# gloss on words of another script (`<ruby>庭<rt>niwa</rt></ruby>`), its base and reading kept as written
# Phrasing elements that format words within a sentence: a sentence goes on through them (`HtmlText`'s chunks)
INLINE = frozenset({"a", "abbr", "acronym", "b", "bdi", "bdo", "big", "cite", "code", "data", "del", "dfn", "em",
                    "font", "i", "ins", "kbd", "label", "mark", "nobr", "q", "rb", "rp", "rt", "rtc", "ruby", "s",
                    "samp", "small", "span", "strike", "strong", "sub", "sup", "time", "tt", "u", "var"})
HTML5_COMMENT_END = regex.compile(r"--!?>")           # where a comment ends, as HTML5 reads it (`_html5_builder`)
INTERNAL_SUBSET = regex.compile(r"<!DOCTYPE[^>\[]*\[", regex.I)     # `<!DOCTYPE html [<!ENTITY a "b">]>`
DOCTYPE_WINDOW = 8192
COLLAPSIBLE = regex.compile(r"[ \t\f\r]*\n\s*")      # a line end and the spaces around it: one space, as HTML shows it
# Attributes whose value is text a reader sees or hears, on any element (HTML, WAI-ARIA, the defaults of W3C ITS 2.0)
TRANSLATED_ATTRIBUTES = ("alt", "title", "placeholder", "aria-label", "aria-placeholder", "aria-description",
                         "aria-roledescription", "aria-valuetext")
ELEMENT_ATTRIBUTES = {"track": ("label",), "optgroup": ("label",), "option": ("label",), "th": ("abbr",)}
BUTTON_INPUTS = frozenset({"submit", "button", "reset"})     # an <input> whose `value` is its visible label
# A <meta>'s `content` is text where its `name`, `property` or `itemprop` (any case) is one of these; never a URL,
# a type or a locale (`og:url`, `og:type`, `og:locale`), a charset or an `http-equiv`.
META_TEXT = frozenset({"description", "og:title", "og:description", "og:image:alt", "twitter:title",
                       "twitter:description", "twitter:image:alt", "name"})
META_LISTS = frozenset({"keywords"})                 # a comma-separated list: each item is its own text
META_KEYS = ("name", "property", "itemprop")
LANGUAGE_ATTRIBUTES = ("lang", "xml:lang")          # on the root: the page's language
META_LOCALES = frozenset({"og:locale"})             # a <meta> whose `content` is the page's locale (en_US)
META_LANGUAGES = frozenset({"content-language"})    # an `http-equiv` <meta> whose `content` is the page's language
LIST_ITEM = regex.compile(r"[^,]+")
ENTITY = regex.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
ALWAYS = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\xa0": "&nbsp;"}
XML_ALWAYS = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
XML_NAMED = frozenset({"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"})     # the entities XML itself defines
NOT_XML = {code: None for code in (*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0xFFFE, 0xFFFF)}
SAYS_XHTML = regex.compile(r"\A\ufeff?\s*<\?xml[\s?]"
                           r"|<html\b[^>]*\bxmlns\s*=\s*[\"']http://www\.w3\.org/1999/xhtml[\"']", regex.I)
# (names hold no `<`, `=` or quote, and are read one way: a name that could run on over the tags after it made
# `<p>x <a="1" <a="1" ...` cubic, 2,000 of them 2.5 s)
START_TAG = regex.compile(r"<([A-Za-z][^\s/>=<\"']*+)"
                          r"((?:\s++[^\s=/><\"']++\s*+=\s*+(?:\"[^\"]*+\"|'[^']*+'))*+)\s*+/?>")
ATTRIBUTE = regex.compile(r"([^\s=/>]+)\s*=")
# An attribute of a start tag as html.parser reads one: its name, and its value (quoted or bare) where it has one
TAG_NAME = regex.compile(r"<[^\s/>]*+")
NOT_XML_REFERENCE = regex.compile(r"&(?!(?:amp|lt|gt|quot|apos|#[0-9]++|#[xX][0-9a-fA-F]++);)")   # `&mdash;` in XML
WRITTEN_ATTRIBUTE = regex.compile(r"""[\s/]*+([^\s"'>/=]++)(?:\s*+=\s*+("[^"]*+"|'[^']*+'|[^\s>]++))?""")
# The elements whose end tag HTML lets a page leave out (where the next element or the parent's end closes them)
OPTIONAL_END_TAGS = frozenset({"html", "head", "body", "p", "li", "dt", "dd", "tr", "td", "th", "thead", "tbody",
                               "tfoot", "option", "optgroup", "rt", "rp", "caption", "colgroup"})
# Symbols no translation changes and a model whose vocabulary lacks them drops (© 2024, Acme™): kept verbatim.
# Punctuation a translation may change (`&` for "and", dashes, ellipses, quotes, no-break spaces) is left to it.
CONTROL_BYTES = regex.compile(rb"[\x00-\x08\x0b\x0e-\x1f\x7f]")
MAX_CONTROL_SHARE = 0.01
HTML_START = regex.compile(rb"\A(?:\xef\xbb\xbf)?\s*(?:<\?xml[^>]{0,200}\?>\s*)?(?:<!--.*?-->\s*)*"
                           rb"<(?:!doctype\s+html|html)[\s>]", regex.I | regex.S)


def looks_like_html(data: bytes) -> bool:
    """An HTML page's start: a doctype or an <html> tag (after an XML declaration, and any comments)."""
    return bool(HTML_START.match(data[:4096]))


# Where the markup's character references are read: comments, CDATA sections, declarations, end tags and the raw
# text of scripts and styles (skipped), start tags (their attribute values), and references in text. A tag is read
# possessively up to the next `<`: from each `<` the scan stops there, so a page of `<a <a <a ...` with no `>` costs
# linear time, not the square of its length. A tag with a `<` in an attribute's value (`title="a < b"`,
# `v-if="a<b"`) is then read again by HTML's attribute grammar (`LENIENT_TAG`), within `LENIENT_WINDOW`
# characters, at most `MAX_LENIENT` times a page (each costs a window, and a hostile page could ask at every `<`).
TAG_BODY = r"(?:\"[^\"<]*+\"|'[^'<]*+'|[^'\"<>])*+"
# the elements whose text Python's parser reads raw, references and all (`script`, `style`; newer Pythons' more)
RAW_TEXT = "|".join(html.parser.HTMLParser.CDATA_CONTENT_ELEMENTS)
STRICT_SCAN = (r"(?P<skip><!--.*?(?:-->|\Z)|<!\[CDATA\[.*?(?:\]\]>|\Z)"
               rf"|<(?P<raw>{RAW_TEXT})\b{TAG_BODY}>.*?(?:</(?P=raw)\s*>|\Z)|<[!?/][^<>]*+>)"
               rf"|(?P<tag><[A-Za-z]{TAG_BODY}>)|(?P<reference>&[A-Za-z][A-Za-z0-9]*;?)")
REFERENCE_SCAN = regex.compile(STRICT_SCAN + r"|(?P<open><[A-Za-z])", regex.S | regex.I)
STRICT_REFERENCE_SCAN = regex.compile(STRICT_SCAN, regex.S | regex.I)      # once no tag may be read again
LENIENT_TAG = regex.compile(r"<([A-Za-z][^\s/>]*+)(?:[\s/]*+[^\s\"'>/=]++(?:\s*+=\s*+(?:\"[^\"]*+\"|'[^']*+'"
                            r"|[^\s>]*+))?+)*+[\s/]*+>")
LENIENT_WINDOW = 8192
MAX_LENIENT = 256
REFERENCE = regex.compile(r"&([A-Za-z][A-Za-z0-9]*)(;?)")
LEGACY_NAMES = frozenset(name for name in html.entities.html5 if not name.endswith(";"))   # `&copy` without `;`


def _as_html5_reads(name: str, semicolon: str, after: str, in_attribute: bool) -> str:
    """A named character reference (`&` `name` `semicolon`, `after` the character that follows) written so that
    the parser reads it as HTML5 does: a known one with its `;` as it is; one whose name opens with a legacy name
    (`&copy 2024`, `&notit;`) as that name with its `;`, except in an attribute where a letter, a digit or `=`
    follows it (`?a=1&region=us&copy=2`: a URL's query, read as written); any other as the text it is (`&amp;`)."""
    if semicolon and name + ";" in html.entities.html5:
        return f"&{name};"
    legacy = next((size for size in range(len(name), 0, -1) if name[:size] in LEGACY_NAMES), 0)
    if legacy and not (in_attribute and (legacy < len(name) or (not semicolon and after == "="))):
        return f"&{name[:legacy]};{name[legacy:]}{semicolon}"
    return f"&amp;{name}{semicolon}"


def html5_references(markup: str) -> str:
    """`markup` with its named character references written so that Python's parser, under BeautifulSoup, reads
    them as HTML5 (and every browser) does (`_as_html5_reads`): it read `href="?q=1&region=us"` as `?q=1®ion=us`
    and `?a=1&lang=en` in a text as `?a=1⟨=en`, and dropped the `;` of `&foo;`, breaking links and URLs that pages
    write with a bare `&`. Scripts, styles, comments and CDATA sections are left as they are."""
    def read(match: regex.Match, attribute: bool, text: str) -> str:
        after = text[match.end():match.end() + 1]
        return _as_html5_reads(match.group(1), match.group(2), after, attribute)

    def strict(match: regex.Match) -> str:
        if match.group("tag") is not None:
            tag = match.group("tag")
            return REFERENCE.sub(lambda found: read(found, True, tag), tag)
        if match.group("reference") is not None:
            return read(REFERENCE.match(match.group(0)), False, markup[match.start():match.end() + 1])
        return match.group(0)

    out, position, lenient = [], 0, MAX_LENIENT
    for match in REFERENCE_SCAN.finditer(markup):
        if match.start() < position:                         # inside a tag read again (`LENIENT_TAG`)
            continue
        out.append(markup[position:match.start()])
        position = match.end()
        if match.group("open") is None:
            out.append(strict(match))
        elif lenient == 0:                                   # the rest read strictly, in one pass
            out.append(STRICT_REFERENCE_SCAN.sub(strict, markup, pos=match.start())[match.start():])
            position = len(markup)
            break
        else:
            lenient -= 1
            tag_match = LENIENT_TAG.match(markup[match.start():match.start() + LENIENT_WINDOW])
            if tag_match is None:
                out.append(match.group(0))
                continue
            tag = tag_match.group(0)
            out.append(REFERENCE.sub(lambda found: read(found, True, tag), tag))
            position = match.start() + len(tag)
            if tag_match.group(1).lower() in html.parser.HTMLParser.CDATA_CONTENT_ELEMENTS:  # its raw text, as is
                closing = regex.compile(rf"</{tag_match.group(1)}\s*>", regex.I).search(markup, position)
                end = closing.end() if closing else len(markup)
                out.append(markup[position:end])
                position = end
    out.append(markup[position:])
    return "".join(out)


def _read_attributes(tag: Any) -> list[tuple[str, Any]]:
    """A tag's attributes as compared with the source's: names in lower case, lists (a `class`) as tuples."""
    return [(name.lower(), tuple(value) if isinstance(value, list) else value) for name, value in tag.attrs.items()]


def _edited_start(written: str, before: list[tuple[str, Any]], now: list[tuple[str, Any]], formatter: Any) -> \
        str | None:
    """The start tag `written` with the values that changed (the same attributes, in their order) written anew
    in place, each quoted as the formatter quotes one; None where an attribute came or went, or is not found."""
    if [name for name, _ in before] != [name for name, _ in now]:
        return None
    after_name = TAG_NAME.match(written).end()
    matches = [match for match in WRITTEN_ATTRIBUTE.finditer(written, after_name) if match.group(2) is not None]
    names = [match.group(1).lower() for match in matches]
    if len(set(names)) != len(names):
        return None                        # a name twice: a browser reads the first, the parser the last
    found = {name: match.span(2) for name, match in zip(names, matches)}
    pieces, at = [], 0
    for (name, old), (_, new) in zip(before, now):
        if old == new:
            continue
        if name not in found or found[name][0] < at:
            return None
        start, end = found[name]
        value = " ".join(new) if isinstance(new, tuple) else str(new)
        pieces += [written[at:start], formatter.quoted_attribute_value(formatter.attribute_value(value))]
        at = end
    return "".join([*pieces, written[at:]])


@functools.cache
def _soup_as_written(bs4) -> type:
    """BeautifulSoup keeping the page as written where the translation changes nothing: the spaces between elements
    (it makes each run of them one space or one line end: an indented page came back flush left, and a block of
    HTML in Markdown differed from its source); a doctype as written, where it writes a line end after one (a
    blank line after `<!DOCTYPE html>`); its comments where a browser reads them (`_html5_builder`); each start
    tag as written (its quotes, or none, `<link ... />`), a translated value edited in place; and no end tag the
    source left out where HTML lets it (`OPTIONAL_END_TAGS`: `<li>`, `<p>`, `<td>`): the parser nests `<p>a<p>b`,
    and the `</p>` it wrote after both made an empty paragraph in every browser."""
    class Doctype(bs4.Doctype):
        SUFFIX = ">"

    class WrittenTag(bs4.Tag):
        written: str | None = None              # the start tag as the source wrote it
        self_closed = False                     # written `<p/>`: an element HTML does not end (it ends with its parent)
        written_attributes: list | None = None  # its attributes as they were read (`_read_attributes`)
        closed_in_source = True                 # whether the source wrote its end tag (a tag made since: written)

        def _format_tag(self, eventual_encoding: Any, formatter: Any, opening: bool) -> str:
            if self.hidden or self.written is None:
                return super()._format_tag(eventual_encoding, formatter, opening)
            if not opening:
                if not self.closed_in_source and self.name.lower() in OPTIONAL_END_TAGS or self.self_closed \
                        and not self.is_empty_element and not self.contents:
                    return ""
                return super()._format_tag(eventual_encoding, formatter, opening)
            kept_open = self.written.endswith("/>") and not self.is_empty_element and (
                self.contents or not self.self_closed)                  # (`<p/>` that came to hold something)
            if kept_open or any(
                    isinstance(value, bs4.element.AttributeValueWithCharsetSubstitution)
                    for value in self.attrs.values()):             # (a charset: the one it is written in)
                return super()._format_tag(eventual_encoding, formatter, opening)
            if formatter.void_element_close_prefix and NOT_XML_REFERENCE.search(self.written):
                return super()._format_tag(eventual_encoding, formatter, opening)   # (`&mdash;`: not XML's)
            now = _read_attributes(self)
            if now == self.written_attributes:
                return self.written
            edited = _edited_start(self.written, self.written_attributes, now, formatter)
            return edited if edited is not None else super()._format_tag(eventual_encoding, formatter, opening)

    class AsWritten(bs4.BeautifulSoup):
        ASCII_SPACES = ""                     # what `endData` takes a string of only spaces to be made of
        written_start: str | None = None      # the start tag the parser read last (`_html5_builder`)
        self_closed = False                   # whether it was written `<p/>`

        def __init__(self, markup: str | bytes):
            super().__init__(markup, builder=_html5_builder(bs4)(),
                             element_classes={bs4.Doctype: Doctype, bs4.Tag: WrittenTag})

        def handle_starttag(self, *args: Any, **kwargs: Any) -> Any:
            tag = super().handle_starttag(*args, **kwargs)
            if isinstance(tag, WrittenTag) and self.written_start is not None:
                tag.written, tag.written_attributes = self.written_start, _read_attributes(tag)
                tag.closed_in_source, tag.self_closed = False, self.self_closed
            self.written_start = None
            return tag

        def handle_endtag(self, name: str, nsprefix: str | None = None) -> None:
            if self.open_tag_counter.get(name):         # the one it closes (as `_popToTag` finds it) was closed
                for at in range(len(self.tagStack) - 1, 0, -1):       # (from the top: no copy of the stack)
                    tag = self.tagStack[at]
                    if tag.name == name and tag.prefix == nsprefix:
                        tag.closed_in_source = True
                        break
            super().handle_endtag(name, nsprefix)
    return AsWritten


@functools.cache
def _html5_builder(bs4) -> type:
    """BeautifulSoup's tree builder on Python's `html.parser`, its comments ending where HTML5's tokenizer (every
    browser) ends them: `<!-->` and `<!--->` at once, else at the first `-->` or `--!>`, else at the page's end.
    Python's parser (before 3.13.4) ended one at `--` and spaces before `>`: `<!-- x -- > <img src=x
    onerror=alert(1)> -->`, one comment to a browser, came back as a comment and a live element (a script a
    translation made out of a comment); one ending `--!>` ran on over the page; and one never ended was text, which
    was translated."""
    from bs4.builder._htmlparser import BeautifulSoupHTMLParser

    class Html5Comments(BeautifulSoupHTMLParser):
        at_end = False                            # the whole page is in (`close`): an open comment ends with it

        def handle_starttag(self, tag: str, attrs: Any, handle_empty_element: bool = True) -> None:
            self.soup.written_start = self.get_starttag_text()          # (`_soup_as_written`: kept as written)
            super().handle_starttag(tag, attrs, handle_empty_element)

        def handle_startendtag(self, tag: str, attrs: Any) -> None:
            self.soup.self_closed = True                 # `<p/>`: written so, and no `</p>` after it
            try:
                super().handle_startendtag(tag, attrs)
            finally:
                self.soup.self_closed = False

        def parse_comment(self, i: int, report: int = 1) -> int:
            for abrupt in ("<!-->", "<!--->"):
                if self.rawdata.startswith(abrupt, i):
                    if report:
                        self.handle_comment("")
                    return i + len(abrupt)
            end = HTML5_COMMENT_END.search(self.rawdata, i + 4)
            if end is None and not self.at_end:
                return -1                         # (more of the page may come)
            if report:
                self.handle_comment(self.rawdata[i + 4:end.start() if end else len(self.rawdata)])
            return end.end() if end else len(self.rawdata)

        def close(self) -> None:
            self.at_end = True
            super().close()

    class Builder(bs4.builder.HTMLParserTreeBuilder):
        def feed(self, markup: str, _parser_class: type = Html5Comments) -> None:
            super().feed(markup, _parser_class=Html5Comments)
    return Builder


def _read_as_html5(markup: str | bytes) -> str | bytes:
    """`html5_references` of `markup`; of bytes in an encoding where `&`, `;`, `<`, `>`, quotes and ASCII letters
    are the ASCII bytes (UTF-8, the ISO-8859 and Windows code pages, Shift_JIS, GB18030: not UTF-16), byte for
    byte through Latin-1, so that the parser still detects the encoding as it did."""
    if isinstance(markup, str):
        return html5_references(markup)
    if markup[:4] in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff") or markup[:2] in (b"\xff\xfe", b"\xfe\xff") \
            or b"\x00" in markup[:1024]:
        return markup
    return html5_references(markup.decode("latin-1")).encode("latin-1")


def _entities(markup: str, xml: bool = False) -> dict[str, str]:
    """Character -> the entity the input wrote it as (the first one), for characters other than `ALWAYS`'s
    (`XML_ALWAYS`'s for XML, where a named entity XML does not define is given as its numeric reference)."""
    found: dict[str, str] = {}
    always = XML_ALWAYS if xml else ALWAYS
    for match in ENTITY.finditer(markup):
        entity = match.group(0)
        character = html.unescape(entity)
        if len(character) == 1 and character not in always and character != entity:
            if xml and not entity.startswith("&#") and entity not in XML_NAMED:
                entity = f"&#{ord(character)};"
            found.setdefault(character, entity)
    return found


def _formatter(bs4, entities: dict[str, str], xml: bool = False):
    table = str.maketrans({**entities, **XML_ALWAYS, **NOT_XML} if xml else {**entities, **ALWAYS})

    class KeepOrder(bs4.formatter.HTMLFormatter):
        def attributes(self, tag):            # BeautifulSoup sorts them by default
            return list(tag.attrs.items())
    return KeepOrder(entity_substitution=lambda text: text.translate(table),
                     void_element_close_prefix="/" if xml else "")


def is_xml(markup: str | bytes) -> bool:
    """Whether a page is XML: it says so (an XML declaration, the XHTML namespace on <html>), or lxml parses it
    as well-formed XML (no DTD or entity loaded, nothing fetched; without lxml, only what the page says counts)."""
    head = markup[:4096] if isinstance(markup, str) else markup[:4096].decode("utf-8", errors="replace")
    if SAYS_XHTML.search(head):
        return True
    try:
        from lxml import etree
    except ImportError:
        return False
    data = markup.encode("utf-8") if isinstance(markup, str) else markup
    parser = safe_xml_parser("documents", encoding="utf-8" if isinstance(markup, str) else None)
    try:
        etree.fromstring(data, parser)
    except (etree.XMLSyntaxError, ValueError):
        return False
    return True


def _written_case(source: str) -> dict[str, str]:
    """Lower-case name -> the one way the input spells it, for tag and attribute names the parser lower-cases
    (`viewbox` -> `viewBox`); a name spelled two ways is left out."""
    spellings: dict[str, set[str]] = {}
    for match in START_TAG.finditer(source):
        for name in (match.group(1), *ATTRIBUTE.findall(match.group(2))):
            spellings.setdefault(name.lower(), set()).add(name)
    return {lower: next(iter(names)) for lower, names in spellings.items()
            if len(names) == 1 and next(iter(names)) != lower}


def opted_out(tag) -> bool:
    """Whether an element asks not to be translated: HTML's `translate="no"`, or the `notranslate` class that
    translation services honour (a product name, a code sample marked up as prose)."""
    translate = tag.attrs.get("translate")
    classes = tag.attrs.get("class") or ()
    return (isinstance(translate, str) and translate.strip().lower() == "no") or "notranslate" in classes


def _says_translate(tag) -> bool:
    """`translate="yes"` (or `translate=""`): translated again inside an element that opted out."""
    translate = tag.attrs.get("translate")
    return isinstance(translate, str) and translate.strip().lower() in ("yes", "")


def _hidden(bs4, soup) -> set[int]:
    """The ids of the elements and strings not translated: `UNTRANSLATED` elements and all inside them; an element
    that opted out (`opted_out`) and what it holds, down to a descendant that says `translate="yes"` (HTML's
    translation mode is inherited, and such a descendant turns it back on)."""
    hidden: set[int] = set()
    stack = [(soup, False)]                   # (element, whether it is opted out); a walk, not recursion
    while stack:
        parent, off = stack.pop()
        for child in parent.children:
            if not isinstance(child, bs4.Tag):
                if off:
                    hidden.add(id(child))
            elif child.name in UNTRANSLATED:
                hidden.update(id(node) for node in (child, *child.descendants))
            else:
                child_off = opted_out(child) or (off and not _says_translate(child))
                if child_off:
                    hidden.add(id(child))
                stack.append((child, child_off))
    return hidden


def _attribute_value(tag, name: str) -> str | None:
    value = tag.attrs.get(name)
    return value.strip().lower() if isinstance(value, str) else None


def translated_attributes(tag: Any) -> list[tuple[str, bool]]:
    """The attributes of `tag` whose values are text to translate, each with whether its value is a comma-separated
    list (`<meta name="keywords">`): `TRANSLATED_ATTRIBUTES`, `ELEMENT_ATTRIBUTES`, a button <input>'s `value`,
    and a <meta>'s `content` where its `META_KEYS` name one of `META_TEXT` or `META_LISTS`."""
    names = [(name, False) for name in (*TRANSLATED_ATTRIBUTES, *ELEMENT_ATTRIBUTES.get(tag.name, ()))]
    if tag.name == "input" and _attribute_value(tag, "type") in BUTTON_INPUTS:
        names.append(("value", False))
    elif tag.name == "meta" and not tag.attrs.get("http-equiv") and not tag.attrs.get("charset"):
        keys = {_attribute_value(tag, key) for key in META_KEYS}
        if keys & META_LISTS:
            names.append(("content", True))
        elif keys & META_TEXT:
            names.append(("content", False))
    return [(name, listed) for name, listed in names if isinstance(tag.attrs.get(name), str)]


def _spans(value: str, listed: bool) -> list[tuple[int, int]]:
    """Where the texts of an attribute's value are: the value stripped, or each item of a list stripped; only those
    with a letter."""
    pieces = [match.span() for match in LIST_ITEM.finditer(value)] if listed else [(0, len(value))]
    spans = []
    for start, end in pieces:
        piece = value[start:end]
        start, end = start + len(piece) - len(piece.lstrip()), end - (len(piece) - len(piece.rstrip()))
        if any(character.isalpha() for character in value[start:end]):
            spans.append((start, end))
    return spans


def _is_text(bs4, node) -> bool:
    return type(node) is bs4.NavigableString                     # not a comment, doctype or CDATA section


class _Inline:
    """What each element is to the sentence around it, found for all of a page's elements in one pass from the
    leaves up (an element's from its children's; thousands of nested `<b>` are each looked at once):
    - `chain(tag)`: an inline element a sentence goes on through, as its chain of nodes down to its one text
      (`<a>docs</a>`, `<b><i>this</i></b>`, `<code>make</code>`): `INLINE` elements of one child each, and a text
      with something in it; else None;
    - `whole`: the inline elements read within their sentence as they are and never translated: `INLINE` elements
      all through, some text, and every text in them hidden (code, `translate="no"`) or without a letter
      (`<code><span>os</span><span>.path</span></code>`, `<sup>[1]</sup>`)."""

    def __init__(self, bs4, tags: list, hidden: set[int]):
        self._ends: dict[int, Any] = {}                     # element -> the text its chain ends at
        found: dict[int, tuple[bool, bool, bool]] = {}      # inline all through, some text, every text kept
        for tag in reversed(tags):                          # (an element's descendants come after it)
            inline, some, kept = tag.name in INLINE, False, True
            for child in tag.contents:
                if isinstance(child, bs4.Tag):
                    child_inline, child_some, child_kept = found[id(child)]
                    inline, some, kept = inline and child_inline, some or child_some, kept and child_kept
                elif _is_text(bs4, child):
                    some = some or bool(child.strip())
                    kept = kept and (id(child) in hidden or not any(character.isalpha() for character in child))
            found[id(tag)] = (inline, some, kept)
            if tag.name in INLINE and len(tag.contents) == 1:
                child = tag.contents[0]
                end = (child if child.strip() else None) if _is_text(bs4, child) else self._ends.get(id(child))
                if end is not None:
                    self._ends[id(tag)] = end
        self.whole = {identity for identity, flags in found.items() if all(flags)}

    def chain(self, node) -> list | None:
        end = self._ends.get(id(node))
        if end is None:
            return None
        chain = [node]
        while chain[-1] is not end:
            chain.append(chain[-1].contents[0])
        return chain


def _collapsed(text: str) -> str:
    return COLLAPSIBLE.sub(" ", text)


class _Chunk:
    """Consecutive text and inline elements of one parent, read as one text (`RunLayout`): the parent's own text is
    the main formatting, each inline element a group that must come back once, in its place; the element is moved
    there with its translated text (or its text, for code and what has no letter). A mark without a letter glued to
    a word (`said<sup>1</sup>`, `H<sub>2</sub>O`) is read apart from it (`said 1`), which a model keeps, and glued
    again where it lands."""

    def __init__(self, bs4, items: list, hidden: set[int], inline: _Inline):
        self.items = items
        first, last = items[0], items[-1]
        self.lead = first[:len(first) - len(first.lstrip())] if _is_text(bs4, first) else ""
        self.trail = last[len(last.rstrip()):] if _is_text(bs4, last) and last is not first else ""
        self.texts: list = []                        # each item's text node (an element's: the end of its chain)
        texts, keys, code = [], [], []
        for at, item in enumerate(items):
            chain = [item] if _is_text(bs4, item) else (inline.chain(item) or [item, None])
            node = chain[-1]                           # None: an element kept whole (`_Inline.whole`)
            text = item.get_text() if node is None else str(node)
            if at == 0 and self.lead:
                text = text[len(self.lead):]
            if at == len(items) - 1 and self.trail:
                text = text[:len(text) - len(self.trail)]
            self.texts.append(node)
            texts.append(_collapsed(text))
            keys.append("" if node is item else id(item))        # "": the parent's own text, the main formatting
            code.append(node is not item and (node is None or any(id(link) in hidden for link in chain)
                                              or not any(character.isalpha() for character in text)))
        self.glued: dict[int, tuple[bool, bool]] = {}       # a mark glued to a word (`said<sup>1</sup>`): read apart
        for at, text in enumerate(texts):
            if not (code[at] and text.strip() and not any(character.isalpha() for character in text)):
                continue
            left = at > 0 and texts[at - 1][-1:].isalnum() and text[:1].isalnum()
            right = at + 1 < len(texts) and texts[at + 1][:1].isalnum() and text[-1:].isalnum()
            if left:
                texts[at - 1] += " "
            if right:
                texts[at + 1] = " " + texts[at + 1]
            if left or right:
                self.glued[at] = (left, right)
        self.layout = RunLayout(texts, keys, code, main="")

    def render(self, bs4, places: dict[int, int]) -> None:
        """The chunk's items replaced by its translation's nodes, in place (`places`: `_replace`'s hints)."""
        if self.layout.segment.translation is None:
            return
        pieces = spaces_outside(self.layout.placed(), set(range(len(self.layout.groups))))
        owners = sorted(owner for _, owner in pieces if owner is not None)
        if owners != list(range(len(self.layout.groups))):
            return                                   # not met by construction: the source, not a lost element
        elements = {number: group.items[0] for number, group in enumerate(self.layout.groups)}
        written = [bs4.NavigableString(self.lead)] if self.lead else []
        glue_next = False
        for text, owner in pieces:
            if owner is None:
                written.append(bs4.NavigableString(text.lstrip() if glue_next else text))
                glue_next = False
                continue
            at = elements[owner]
            left, glue_next = self.glued.get(at, (False, False))
            if left and written and _is_text(bs4, written[-1]):          # glued again, as in the source
                written[-1] = bs4.NavigableString(written[-1].rstrip())
            if self.texts[at] is not None:
                self.texts[at].replace_with(text)
            written.append(self.items[at])
        if self.trail:
            written.append(bs4.NavigableString(self.trail))
        _replace(self.items, written, places)


def _replace(nodes: list, written: list, places: dict[int, int]) -> None:
    """Consecutive children `nodes` of one parent replaced by `written`, in place: as bs4's `replace_with`, but
    found from where the last replacement under that parent ended (`runs.child_index`, `places` its hints), not
    from the start each (10,000 `word<br>` took 8 s)."""
    parent = nodes[0].parent
    at = child_index(parent.contents, nodes[0], places, id(parent))
    for node in nodes:
        node.extract(_self_index=at)
    for offset, node in enumerate(written):
        parent.insert(at + offset, node)
    places[id(parent)] = at + len(written)


class HtmlText:
    """`HtmlText(markup).texts` are the texts to translate (text nodes, then `translated_attributes` values,
    stripped); `render(translations)` is the markup with each replaced by its translation, its surrounding
    spaces kept. `markup` is a str, or bytes whose encoding BeautifulSoup detects (rendered back in it).
    ValueError for markup the parser rejects."""

    def __init__(self, markup: str | bytes):
        bs4 = require("bs4", "documents")
        try:
            with warnings.catch_warnings():   # a client's text that looks like a URL or XML is not our warning
                warnings.simplefilter("ignore", bs4.MarkupResemblesLocatorWarning)
                warnings.simplefilter("ignore", bs4.XMLParsedAsHTMLWarning)
                self._soup = _soup_as_written(bs4)(_read_as_html5(markup))
        except bs4.ParserRejectedMarkup as exc:
            raise ValueError(f"cannot parse the HTML: {exc}") from None
        self.encoding = self._soup.original_encoding if isinstance(markup, bytes) else None
        source = markup.decode(self.encoding or "utf-8", errors="replace") if isinstance(markup, bytes) else markup
        if INTERNAL_SUBSET.search(source[:DOCTYPE_WINDOW]):
            raise ValueError("its DOCTYPE declares entities (an internal subset, `[<!ENTITY ...>]`), which the parser "
                             "would not keep: expand them and translate the page again")
        self.xml = is_xml(markup)
        self._formatter = _formatter(bs4, _entities(source, self.xml), self.xml)
        self._bs4, self._source = bs4, source

        hidden = _hidden(bs4, self._soup)
        self._join_word_breaks(bs4, hidden)
        self._nodes: list[tuple[Any, Segment]] = []        # text nodes translated alone
        self._chunks: list[_Chunk] = []
        self.segments: list[Segment] = []
        absorbed: set[int] = set()                          # inline elements read with their parent's text
        tags = self._soup.find_all(True)
        inline = _Inline(bs4, tags, hidden)
        for parent in [self._soup, *tags]:
            if id(parent) in absorbed:
                continue
            run: list = []
            for child in [*parent.contents, None]:
                chain = inline.chain(child) if isinstance(child, bs4.Tag) else None
                if chain is None and id(child) in inline.whole:
                    chain = [child, None]                    # moved whole, its text as it is
                    absorbed.update(id(tag) for tag in child.find_all(True))
                if child is not None and (_is_text(bs4, child) or chain is not None):
                    run.append(child)
                    absorbed.update(id(link) for link in (chain or ())[:-1])
                    continue
                self._read(bs4, run, hidden, inline)
                run = []
        self._attributes = [(tag, name, spans) for tag in tags if id(tag) not in hidden
                            for name, listed in translated_attributes(tag)
                            for spans in [_spans(tag[name], listed)] if spans]
        self.segments += [Segment(text, protected=protected_spans(text))
                          for tag, name, spans in self._attributes for text in [tag[name][a:b] for a, b in spans]]

    def _join_word_breaks(self, bs4: Any, hidden: set[int]) -> None:
        """A word's break opportunities (`<wbr>` between two texts) taken out, so that the word is read whole: a
        chain of them (`ab<wbr>cd<wbr>ef`) joined once, and its parent's children rebuilt once (one text joined
        again per mark, each taken out of the list alone, cost the square of their number: 160,000 in 25 s)."""
        def joinable(mark: Any) -> bool:
            before, after = mark.previous_sibling, mark.next_sibling
            return _is_text(bs4, before) and _is_text(bs4, after) and not {id(before), id(after)} & hidden

        chains: dict[int, tuple[Any, list[list[Any]]]] = {}   # a parent's id -> (it, its chains: text, mark, ...)
        for mark in self._soup.find_all("wbr"):
            if not joinable(mark):
                continue
            _, found = chains.setdefault(id(mark.parent), (mark.parent, []))
            if found and found[-1][-1] is mark.previous_sibling:
                found[-1] += [mark, mark.next_sibling]
            else:
                found.append([mark.previous_sibling, mark, mark.next_sibling])
        for parent, found in chains.values():
            first = {id(chain[0]): chain for chain in found}
            dropped = {id(node) for chain in found for node in chain[1:]}
            children = []
            for child in list(parent.contents):
                if id(child) in first:
                    children.append(bs4.NavigableString("".join(str(node) for node in first[id(child)][::2])))
                elif id(child) not in dropped:
                    children.append(child)
            for index in range(len(parent.contents) - 1, -1, -1):   # from the end: each taken out at no cost
                parent.contents[index].extract(_self_index=index)   # (bs4's clear() moves the rest each time)
            parent.extend(children)

    @property
    def texts(self) -> list[str]:
        """What the model reads: each segment's text (text nodes and chunks in document order, then attributes)."""
        return [segment.text for segment in self.segments]

    def _read(self, bs4, run: list, hidden: set[int], inline: _Inline) -> None:
        """One parent's consecutive texts and inline elements (`_Inline`): one chunk (`_Chunk`) where the parent's
        own text has a letter and an inline element has text to place in it (at most `MAX_GROUPS` of them); else
        each text node with a letter, alone."""
        ends = [item if _is_text(bs4, item) else (inline.chain(item) or [None])[-1] for item in run]
        shown = [node for node in ends if node is not None and id(node) not in hidden
                 and any(character.isalpha() for character in node)]
        if not shown:
            return
        own = [item for item in run if _is_text(bs4, item)]
        if (len(own) < len(run) <= len(own) + MAX_GROUPS and all(id(item) not in hidden for item in own)
                and any(character.isalpha() for character in "".join(own))):   # a letter of its own (`3) <a>` none)
            chunk = _Chunk(bs4, run, hidden, inline)
            self._chunks.append(chunk)
            self.segments += [*chunk.layout.alone, chunk.layout.segment]
            return
        for node in shown:
            text = _collapsed(node.strip())
            segment = Segment(text, protected=protected_spans(text))
            self._nodes.append((node, segment))
            self.segments.append(segment)

    def render(self, translations: Sequence[str] | None = None, encoding: str = "utf-8") -> str:
        """The markup with the segments' translations in (or `translations`, one per segment, in their order);
        a `<meta charset>` names `encoding` (what the caller encodes in)."""
        if translations is not None:
            if len(translations) != len(self.segments):
                raise ValueError(f"{len(self.segments)} texts, got {len(translations)} translations")
            for segment, translation in zip(self.segments, translations):
                segment.translation, segment.whole, segment.parts = translation, True, None
        places: dict[int, int] = {}
        for node, segment in self._nodes:
            if segment.translation is not None and segment.translation != segment.text:
                leading, trailing = node[:len(node) - len(node.lstrip())], node[len(node.rstrip()):]
                _replace([node], [self._bs4.NavigableString(leading + segment.translation + trailing)], places)
        for chunk in self._chunks:
            chunk.render(self._bs4, places)
        rest = iter(self.segments[len(self.segments) - sum(len(spans) for _, _, spans in self._attributes):])
        for tag, name, spans in self._attributes:
            value, parts, done = tag[name], [], 0
            for start, end in spans:                 # what lies between the texts (spaces, commas) as written
                segment = next(rest)
                parts += [value[done:start], segment.translation if segment.translation is not None else segment.text]
                done = end
            tag[name] = "".join(parts) + value[done:]
        if self.xml:
            self._names_as_written(self._source)
        return self._soup.decode(formatter=self._formatter, eventual_encoding=None if self.xml else encoding)

    def relabel(self, direction: Direction) -> None:
        """The root's `lang` and `xml:lang`, and a `<meta http-equiv="content-language">`, that name `direction`'s
        source language (`en`, `en-GB`) name its target instead (`it`); an `og:locale` that does names the
        target's locale (`en_US` -> `it_IT`). Any other value, or none, is left as written."""
        source = regex.compile(rf"\s*{regex.escape(direction.source)}(?:[-_][\w-]*)?\s*", regex.I)   # en, en-GB
        root = self._soup.find("html", recursive=False)
        for name in LANGUAGE_ATTRIBUTES if root is not None else ():
            value = root.attrs.get(name)
            if isinstance(value, str) and source.fullmatch(value):
                root[name] = direction.target
        for meta in self._soup.find_all("meta"):
            value = meta.attrs.get("content")
            if not isinstance(value, str) or not source.fullmatch(value):
                continue
            if _attribute_value(meta, "http-equiv") in META_LANGUAGES:
                meta["content"] = direction.target
            elif {_attribute_value(meta, key) for key in META_KEYS} & META_LOCALES:
                meta["content"] = f"{direction.target}_{REGIONS[direction.target]}"

    def _names_as_written(self, source: str) -> None:
        """An XML page's names in their written case (once what is translated is found by their lower-case
        names)."""
        case = _written_case(source)
        if case:
            for tag in self._soup.find_all(True):
                tag.name = case.get(tag.name, tag.name)
                if any(name in case for name in tag.attrs):
                    tag.attrs = {case.get(name, name): value for name, value in tag.attrs.items()}


def declared_encoding(page: bytes) -> str | None:
    """The encoding a page's bytes say they are in (its `<meta charset>`, `http-equiv` content type or XML
    declaration, where a browser looks: BeautifulSoup's reading of the HTML standard's prescan), a Python codec's
    name; None where it names none, or one Python does not know."""
    detector = require("bs4.dammit", "documents").EncodingDetector
    declared = detector.find_declared_encoding(page, is_html=True)
    try:
        return codecs.lookup(declared).name if declared else None
    except LookupError:
        return None


def check_not_binary(data: bytes, name: str) -> None:
    """A one-line ValueError for bytes (not UTF-8) that are no page in any 8-bit encoding: a NUL, or more than
    `MAX_CONTROL_SHARE` of control bytes other than tab, line ends and form feed (BeautifulSoup decodes anything,
    and random bytes came back "translated")."""
    controls = len(CONTROL_BYTES.findall(data))
    if b"\x00" in data or controls > MAX_CONTROL_SHARE * max(len(data), 1):
        raise ValueError(f"{name}: not an HTML file: binary data ({controls:,} control bytes in {len(data):,})")


class HtmlDocument(FollowsDirection):
    """An `.html` file: `segments` (a URL, e-mail address, file path or symbol in a text kept verbatim), and
    `render()` its bytes, in the encoding it came in, its root's language the run's target (`direction`, `direct`;
    English -> Italian where none is given)."""

    def __init__(self, data: bytes, name: str = "document", direction: Direction | None = None):
        self.direction = direction
        self._mark = next((mark for mark in (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff") if data.startswith(mark)), b"")
        try:                                # UTF-8 (most pages) as it is; else BeautifulSoup finds the encoding
            markup: str | bytes = data.decode("utf-8-sig")
            self._encoding = "utf-8"
        except UnicodeDecodeError:
            if self._mark not in (b"\xff\xfe", b"\xfe\xff"):
                check_not_binary(data, name)
            markup, self._encoding = data, None
        try:
            self._html = HtmlText(markup)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
        self._encoding = self._encoding or self._html.encoding or "utf-8"
        try:                                # line ends in the text: UTF-16's CR LF is not the bytes b"\r\n"
            self._crlf = "\r\n" in (markup if isinstance(markup, str) else data.decode(self._encoding, "replace"))
        except LookupError:
            self._crlf = b"\r\n" in data
        self.segments = self._html.segments

    def render(self) -> bytes:
        codec = {"utf-16": "utf-16-le"}.get(self._encoding.lower(), self._encoding)
        if self._mark in (b"\xff\xfe", b"\xfe\xff"):
            codec = "utf-16-le" if self._mark == b"\xff\xfe" else "utf-16-be"
        self._html.relabel(self.output_direction)
        text = self._html.render(encoding=self._encoding)
        if self._crlf:
            text = regex.sub(r"\r?\n", "\r\n", text)
        return self._mark + text.encode(codec, errors="xmlcharrefreplace")
