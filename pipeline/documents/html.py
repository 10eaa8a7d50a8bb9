"""HTML in, HTML out: the text to translate, and the document rebuilt around its translations.

The one HTML path: the service's `format=html` and `.html` documents both use `HtmlText`.

BeautifulSoup with the standard library's `html.parser` backend (BeautifulSoup is what LibreTranslate's
own HTML path uses): maintained, lenient with broken markup, and no compiled dependency. Tags,
attributes (in their order) and comments come back as they were, void elements as `<br>`. An entity of the
input comes back as that entity wherever its character is in the output (`&copy;`, `&#8212;`); other
characters come back as characters, except `&`, `<`, `>` and no-break spaces, which are always escaped.
Text inside <script>, <style>, <code>, <pre>, <textarea> and comments, attribute values other than
`TRANSLATED_ATTRIBUTES`, and text without a letter (`© 2024`) are not translated. Each text node is translated
as one unit, so a sentence cut by inline markup (`I <b>love</b> you`) is translated in pieces.
"""
from __future__ import annotations

import html
import warnings
from typing import Sequence

import regex

from pipeline.documents.segments import Segment
from pipeline.extras import require

UNTRANSLATED = frozenset({"script", "style", "code", "pre", "textarea", "template"})
TRANSLATED_ATTRIBUTES = ("alt", "title", "placeholder", "aria-label")
ENTITY = regex.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
ALWAYS = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\xa0": "&nbsp;"}
HTML_START = regex.compile(rb"\A(?:\xef\xbb\xbf)?\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html)[\s>]", regex.I | regex.S)


def looks_like_html(data: bytes) -> bool:
    """An HTML page's start: a doctype or an <html> tag (after any comments)."""
    return bool(HTML_START.match(data[:4096]))


def _entities(markup: str) -> dict[str, str]:
    """Character -> the entity the input wrote it as (the first one), for characters other than `ALWAYS`'s."""
    found: dict[str, str] = {}
    for match in ENTITY.finditer(markup):
        character = html.unescape(match.group(0))
        if len(character) == 1 and character not in ALWAYS and character != match.group(0):
            found.setdefault(character, match.group(0))
    return found


def _formatter(bs4, entities: dict[str, str]):
    table = str.maketrans({**entities, **ALWAYS})

    class KeepOrder(bs4.formatter.HTMLFormatter):
        def attributes(self, tag):            # BeautifulSoup sorts them by default
            return list(tag.attrs.items())
    return KeepOrder(entity_substitution=lambda text: text.translate(table), void_element_close_prefix="")


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
        self._formatter = _formatter(bs4, _entities(source))

        hidden = {id(node) for tag in self._soup.find_all(UNTRANSLATED)   # one walk per untranslated subtree
                  for node in (tag, *tag.descendants)}
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
        return self._soup.decode(formatter=self._formatter, eventual_encoding=encoding)


class HtmlDocument:
    """An `.html` file: `segments`, and `render()` its bytes, in the encoding it came in."""

    def __init__(self, data: bytes, name: str = "document"):
        self._crlf = b"\r\n" in data
        self._mark = next((mark for mark in (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff") if data.startswith(mark)), b"")
        try:                                # UTF-8 (most pages) as it is; else BeautifulSoup finds the encoding
            markup: str | bytes = data.decode("utf-8-sig")
            self._encoding = "utf-8"
        except UnicodeDecodeError:
            markup, self._encoding = data, None
        try:
            self._html = HtmlText(markup)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
        self._encoding = self._encoding or self._html.encoding or "utf-8"
        self.segments = [Segment(text) for text in self._html.texts]

    def render(self) -> bytes:
        codec = {"utf-16": "utf-16-le"}.get(self._encoding.lower(), self._encoding)
        if self._mark in (b"\xff\xfe", b"\xfe\xff"):
            codec = "utf-16-le" if self._mark == b"\xff\xfe" else "utf-16-be"
        text = self._html.render([segment.translation for segment in self.segments], self._encoding)
        if self._crlf:
            text = regex.sub(r"\r?\n", "\r\n", text)
        return self._mark + text.encode(codec, errors="xmlcharrefreplace")
