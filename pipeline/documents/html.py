"""HTML in, HTML out: the text to translate, and the document rebuilt around its translations.

The one HTML path: the service's `format=html` and `.html` documents both use `HtmlText`.

BeautifulSoup with the standard library's `html.parser` backend (BeautifulSoup is what LibreTranslate's
own HTML path uses): maintained, lenient with broken markup, and no compiled dependency. Tags,
attributes (in their order) and comments come back as they were, void elements as `<br>`. An entity of the
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
The root's `lang` and `xml:lang`, where they name the run's source language (`en`, `en-US` on an English -> Italian
run), name its target instead (`it`): the page is now in it. Other elements' languages are left as written.
Text inside <script>, <style>, <code>, <pre>, <textarea>, <template>, MathML's <math>, elements that say
`translate="no"` or have the class `notranslate`, and comments, attribute values other than
`TRANSLATED_ATTRIBUTES`, and text without a letter (`© 2024`) are not translated; the symbols `SYMBOLS`
(© ® ™) come back where they were, which a model whose vocabulary lacks them would drop. Each text node is
translated as one unit, so a sentence cut by inline markup (`I <b>love</b> you`) is translated in pieces.
"""
from __future__ import annotations

import html
import warnings
from typing import Sequence

import regex

from pipeline.documents.segments import Segment, protected_spans
from pipeline.extras import require
from pipeline.language import Direction, FollowsDirection

UNTRANSLATED = frozenset({"script", "style", "code", "pre", "textarea", "template", "math"})
TRANSLATED_ATTRIBUTES = ("alt", "title", "placeholder", "aria-label")
LANGUAGE_ATTRIBUTES = ("lang", "xml:lang")          # on the root: the page's language
ENTITY = regex.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
ALWAYS = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\xa0": "&nbsp;"}
XML_ALWAYS = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
XML_NAMED = frozenset({"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"})     # the entities XML itself defines
NOT_XML = {code: None for code in (*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0xFFFE, 0xFFFF)}
SAYS_XHTML = regex.compile(r"\A\ufeff?\s*<\?xml[\s?]"
                           r"|<html\b[^>]*\bxmlns\s*=\s*[\"']http://www\.w3\.org/1999/xhtml[\"']", regex.I)
START_TAG = regex.compile(r"<([A-Za-z][^\s/>]*)((?:\s+[^\s=/>]+\s*=\s*(?:\"[^\"]*\"|'[^']*'))*)\s*/?>")
ATTRIBUTE = regex.compile(r"([^\s=/>]+)\s*=")
# Symbols no translation changes and a model whose vocabulary lacks them drops (© 2024, Acme™): kept verbatim.
# Punctuation a translation may change (`&` for "and", dashes, ellipses, quotes, no-break spaces) is left to it.
SYMBOLS = regex.compile(r"[\u00a9\u00ae\u2122\u2120\u2117]+")     # © ® ™ ℠ ℗
CONTROL_BYTES = regex.compile(rb"[\x00-\x08\x0b\x0e-\x1f\x7f]")
MAX_CONTROL_SHARE = 0.01
HTML_START = regex.compile(rb"\A(?:\xef\xbb\xbf)?\s*(?:<\?xml[^>]{0,200}\?>\s*)?(?:<!--.*?-->\s*)*"
                           rb"<(?:!doctype\s+html|html)[\s>]", regex.I | regex.S)


def looks_like_html(data: bytes) -> bool:
    """An HTML page's start: a doctype or an <html> tag (after an XML declaration, and any comments)."""
    return bool(HTML_START.match(data[:4096]))


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
    parser = etree.XMLParser(encoding="utf-8" if isinstance(markup, str) else None, resolve_entities=False,
                             load_dtd=False, no_network=True, huge_tree=False)
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


class HtmlText:
    """`HtmlText(markup).texts` are the texts to translate (text nodes and `TRANSLATED_ATTRIBUTES` values,
    stripped); `render(translations)` is the markup with each replaced by its translation, its surrounding
    spaces kept. `markup` is a str, or bytes whose encoding BeautifulSoup detects (rendered back in it).
    ValueError for markup the parser rejects."""

    def __init__(self, markup: str | bytes):
        bs4 = require("bs4", "documents")
        try:
            with warnings.catch_warnings():   # a client's text that looks like a URL or XML is not our warning
                warnings.simplefilter("ignore", bs4.MarkupResemblesLocatorWarning)
                warnings.simplefilter("ignore", bs4.XMLParsedAsHTMLWarning)
                self._soup = bs4.BeautifulSoup(markup, "html.parser")
        except bs4.ParserRejectedMarkup as exc:
            raise ValueError(f"cannot parse the HTML: {exc}") from None
        self.encoding = self._soup.original_encoding if isinstance(markup, bytes) else None
        source = markup.decode(self.encoding or "utf-8", errors="replace") if isinstance(markup, bytes) else markup
        self.xml = is_xml(markup)
        self._formatter = _formatter(bs4, _entities(source, self.xml), self.xml)
        self._bs4, self._source = bs4, source

        hidden = {id(node) for tag in self._soup.find_all(lambda tag: tag.name in UNTRANSLATED or opted_out(tag))
                  for node in (tag, *tag.descendants)}                       # one walk per untranslated subtree
        self._nodes = [node for node in self._soup.find_all(string=True)
                       if type(node) is bs4.NavigableString                      # not comments, doctypes
                       and id(node) not in hidden and any(character.isalpha() for character in node)]
        self._attributes = [(tag, name) for tag in self._soup.find_all(True) if id(tag) not in hidden
                            for name in TRANSLATED_ATTRIBUTES
                            if isinstance(tag.attrs.get(name), str)
                            and any(character.isalpha() for character in tag.attrs[name])]
        self.texts = [node.strip() for node in self._nodes] + [tag[name].strip() for tag, name in self._attributes]

    def render(self, translations: Sequence[str], encoding: str = "utf-8") -> str:
        """The markup with the translations in; a `<meta charset>` names `encoding` (what the caller encodes in)."""
        if len(translations) != len(self.texts):
            raise ValueError(f"{len(self.texts)} texts, got {len(translations)} translations")
        for node, translation in zip(self._nodes, translations):
            leading, trailing = node[:len(node) - len(node.lstrip())], node[len(node.rstrip()):]
            node.replace_with(leading + translation + trailing)
        for (tag, name), translation in zip(self._attributes, translations[len(self._nodes):]):
            value = tag[name]
            tag[name] = value[:len(value) - len(value.lstrip())] + translation + value[len(value.rstrip()):]
        if self.xml:
            self._as_written(self._bs4, self._source)
        return self._soup.decode(formatter=self._formatter, eventual_encoding=None if self.xml else encoding)

    def relabel(self, direction: Direction) -> None:
        """The root's `lang` and `xml:lang` that name `direction`'s source language (`en`, `en-GB`) name its
        target instead; any other value, or none, is left as written."""
        root = self._soup.find("html", recursive=False)
        if root is None:
            return
        source = regex.compile(rf"\s*{regex.escape(direction.source)}(?:[-_][\w-]*)?\s*", regex.I)   # en, en-GB
        for name in LANGUAGE_ATTRIBUTES:
            value = root.attrs.get(name)
            if isinstance(value, str) and source.fullmatch(value):
                root[name] = direction.target

    def _as_written(self, bs4, source: str) -> None:
        """An XML page's names in their written case (once what is translated is found by their lower-case
        names), and no blank line the parser's doctype would add."""
        case = _written_case(source)
        if case:
            for tag in self._soup.find_all(True):
                tag.name = case.get(tag.name, tag.name)
                if any(name in case for name in tag.attrs):
                    tag.attrs = {case.get(name, name): value for name, value in tag.attrs.items()}
        for doctype in [node for node in self._soup.contents if isinstance(node, bs4.Doctype)]:
            after = doctype.next_sibling
            if type(after) is bs4.NavigableString and after.startswith("\n"):   # the doctype writes its own
                if len(after) > 1:
                    after.replace_with(after[1:])
                else:
                    after.extract()


def check_not_binary(data: bytes, name: str) -> None:
    """A one-line ValueError for bytes (not UTF-8) that are no page in any 8-bit encoding: a NUL, or more than
    `MAX_CONTROL_SHARE` of control bytes other than tab, line ends and form feed (BeautifulSoup decodes anything,
    and random bytes came back "translated")."""
    controls = len(CONTROL_BYTES.findall(data))
    if b"\x00" in data or controls > MAX_CONTROL_SHARE * max(len(data), 1):
        raise ValueError(f"{name}: not an HTML file: binary data ({controls:,} control bytes in {len(data):,})")


class HtmlDocument(FollowsDirection):
    """An `.html` file: `segments` (a URL, e-mail address, file path or `SYMBOLS` in a text kept verbatim), and
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
        self.segments = [Segment(text, protected=protected_spans(text, SYMBOLS)) for text in self._html.texts]

    def render(self) -> bytes:
        codec = {"utf-16": "utf-16-le"}.get(self._encoding.lower(), self._encoding)
        if self._mark in (b"\xff\xfe", b"\xfe\xff"):
            codec = "utf-16-le" if self._mark == b"\xff\xfe" else "utf-16-be"
        self._html.relabel(self.output_direction)
        text = self._html.render([segment.translation for segment in self.segments], self._encoding)
        if self._crlf:
            text = regex.sub(r"\r?\n", "\r\n", text)
        return self._mark + text.encode(codec, errors="xmlcharrefreplace")
