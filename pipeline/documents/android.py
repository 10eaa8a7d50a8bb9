"""Android string resources (`res/values/strings.xml`), read with lxml's safe parser: each `<string>`, each `<item>`
of a `<string-array>` and of a `<plurals>` is translated, for a `values-it/strings.xml`.

A text is read as Android reads it: its escapes (`\\'`, `\\"`, `\\@`, `\\?`, `\\\\`) are the characters they stand for,
and a text wrapped in double quotes (`"It's here"`) is read inside them. What a translation keeps as written, as
a catalog message's codes (`messages.CatalogMessage`): inline tags (`<b>`, `<i>`, `<u>`, `<font>`, `<a href>`,
`<annotation>`), an `<xliff:g>` element whole (its content is not for translation: `<xliff:g id="name">%1$s
</xliff:g>`), `\\n`, `\\t` and a `\\uXXXX` of an ASCII or unprintable character (one of a letter, `Caf\\u00e9`,
is read as the letter, and the translation writes that letter so too), placeholders (`%1$s`, `%d`, `{name}`) and
references (`@string/app_name`, which is data, never translated). The translation is written back escaped as
`aapt` wants (an apostrophe or a double quote escaped, inside double quotes where the source was), and kept only
where it is well formed with the source's tags (else translated between them).

Not translated: a resource marked `translatable="false"` (or in an array so marked), one whose text is data
(`messages.is_message`), and every other element (dimensions, colours, styles, `tools:` attributes). Comments,
attributes, `<![CDATA[...]]>` sections and the layout between elements come back as the parser keeps them.
"""
from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape

import regex

from pipeline.documents.messages import CatalogMessage, is_message
from pipeline.documents.segments import Segment, literal_alternation, literal_pattern
from pipeline.documents.xml_file import XmlFile
from pipeline.extras import require, safe_xml_parser

TOOLS = "http://schemas.android.com/tools"
# What a string holds, read left to right: a code (an `<xliff:g>` element whole, a comment, another tag, an escape
# that stands for a character, `\n` or `\u00e8`, an unescaped double quote inside, which aapt reads as a toggle),
# or an escaped character (`\'` is `'`, `\\` is `\`)
# (a placeholder's or a comment's body stops at the next one's opening, read one way: in CDATA, where nothing
# closes them, `.*?` scanned on to the end from every opening, 64,000 `<!--` in 7 s)
TOKEN = regex.compile(r"(?P<code><xliff:g\b[^<>]*/>|<xliff:g\b[^<>]*>(?:(?!</xliff:g>|<xliff:g\b).)*+</xliff:g>"
                      r"|<!--(?:(?!-->|<!--).)*+-->|<[^<>]+>"
                      r"|\\u(?P<hex>[0-9A-Fa-f]{4})|\\[nt]|\")|\\(?P<escaped>.)", regex.S)
DECLARATION = regex.compile(r' xmlns(?::\w+)?="[^"]*"')       # the root's, which lxml writes on each child
WHITESPACE = regex.compile(r"[ \t\r\n]+")         # a run aapt reads as one space, outside double quotes
# Java's format specifiers (`%1$s`, `%,d`, `%S`, `%tY`; `%%`, which only a format string escapes), but for a `%`
# followed by a space (`50% off`), which is a percent sign far more often than the space flag
FORMAT = regex.compile(r"%(?:[0-9]+\$)?(?! )[-#+0,(]*[0-9]*(?:\.[0-9]+)?(?:[tT][a-zA-Z]|[bBhHsScCdoxXeEfgGaAn%])")
RAW_AMPERSAND = regex.compile(r"&(?!#[0-9]+;|#x[0-9A-Fa-f]+;|[A-Za-z][A-Za-z0-9]*;)")
START = regex.compile(rb"\A(?:\xef\xbb\xbf)?\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--.*?-->\s*)*<resources[\s>]", regex.S)


def looks_like_android(data: bytes) -> bool:
    """An Android resource file's start: an XML declaration, comments, then `<resources>`."""
    return bool(START.match(data[:4096]))


def _pieces(text: str, codes: regex.Pattern) -> list[str]:
    """`text` cut at the matches of `codes`: text, code, text, ..., text."""
    out, done = [], 0
    for match in codes.finditer(text):
        out += [text[done:match.start()], match.group(0)]
        done = match.end()
    return out + [text[done:]]


class _Resource:
    """One string resource's text (`element`: a `<string>` or an `<item>`): its segments, and the element filled
    with the translation. A text in a CDATA section (`<![CDATA[<b>Bold</b>]]>`) is read as written there, and
    written back in one."""

    def __init__(self, element: Any, namespaces: str):
        etree = require("lxml.etree", "documents")
        self.element, self._namespaces = element, namespaces
        self.cdata = len(element) == 0 and "<![CDATA[" in etree.tostring(element, encoding="unicode")
        if self.cdata:
            inner = element.text or ""
        else:
            inner = escape(element.text or "") + "".join(
                DECLARATION.sub("", etree.tostring(child, encoding="unicode", with_tail=False))
                + escape(child.tail or "") for child in element)
        body = inner[1:-1]                           # `"It's here"`: read inside its quotes, none else in it
        self.quoted = len(inner) >= 2 and inner[0] == inner[-1] == '"' and not regex.search(r'(?<!\\)"', body)
        text, codes = "", []                         # the text as Android reads it, and where its codes are
        self._letters: dict[str, str] = {}           # a character written as its escape -> that escape
        done, source = 0, body if self.quoted else inner
        inside = False                               # between aapt's quote toggles: spaces kept
        for match in TOKEN.finditer(source):
            piece = source[done:match.start()]
            text += piece if self.quoted or inside else WHITESPACE.sub(" ", piece)
            if match.group("code") == '"':
                inside = not inside
            letter = chr(int(match.group("hex"), 16)) if match.group("hex") else ""
            if letter and not letter.isascii() and letter.isprintable() and not 0xD800 <= ord(letter) < 0xE000:
                text += letter                       # `Caf\u00e9`: the model reads a word
                self._letters[letter] = match.group("code")
            elif match.group("code") is not None:
                codes.append((len(text), match.group("code")))
                text += match.group("code")
            else:
                text += match.group("escaped")
            done = match.end()
        self.text = text + (source[done:] if self.quoted or inside else WHITESPACE.sub(" ", source[done:]))
        self._codes = literal_pattern(code for _, code in codes)
        placeholders = [match.group(0) for match in FORMAT.finditer(self.text)]
        self._printf = None if not placeholders or element.get("formatted") == "false" else regex.compile(
            literal_alternation(placeholders) + "|%%")
        self.message = CatalogMessage(self.text, codes, lambda written: self.parsed(written) is not None)
        self.segments: list[Segment] = self.message.segments

    def written(self, text: str) -> str:
        """A text (the model's) as the resource's content: escaped as Android (and, outside CDATA, XML) reads it."""
        out = []
        for index, piece in enumerate(_pieces(text, self._codes)):       # the source's codes, as written
            if index % 2:
                out.append(piece)
                continue
            piece = piece.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
            for letter, written in self._letters.items():         # as the source wrote it: `\u00e9`
                piece = piece.replace(letter, written)
            if not self.quoted:
                piece = piece.replace("'", "\\'")
            if self._printf is not None:             # a `%` of its own would break getString(id, args): `%%`
                piece = "".join(part if index % 2 else part.replace("%", "%%")
                                for index, part in enumerate(_pieces(piece, self._printf)))
            out.append(piece if self.cdata else RAW_AMPERSAND.sub("&amp;", piece).replace("<", "&lt;"))
        content = "".join(out)
        if self.quoted:
            return f'"{content}"'
        start = len(content) - len(content.lstrip())          # aapt reads a reference after the spaces it trims
        return content[:start] + "\\" + content[start:] if content[start:].startswith(("@", "?")) else content

    def parsed(self, text: str) -> Any | None:
        """The text as an element holding it (in the file's namespaces), or None where it is not well formed."""
        etree = require("lxml.etree", "documents")
        content = self.written(text)
        if self.cdata:
            return None if "]]>" in content else etree.Element("string")
        try:
            return etree.fromstring(f"<string{self._namespaces}>{content}</string>", safe_xml_parser("documents"))
        except etree.XMLSyntaxError:
            return None

    def fill(self) -> None:
        etree = require("lxml.etree", "documents")
        translation = self.message.translation()
        if translation is None or translation == self.text:
            return
        parsed = self.parsed(translation)
        if parsed is None:
            return
        if self.cdata:
            self.element.text = etree.CDATA(self.written(translation))
            return
        for child in list(self.element):
            self.element.remove(child)
        self.element.text = parsed.text
        for child in parsed:
            self.element.append(child)


class AndroidStrings:
    """An Android `strings.xml`: `segments` of its string resources, and `render()` the file again."""

    def __init__(self, data: bytes, name: str = "document"):
        self._file = XmlFile(data, name, "resources", "an Android resource file")
        root, namespaces = self._file.root, self._file.declarations
        self._resources: list[_Resource] = []
        for element in root:
            if not isinstance(element.tag, str) or element.get("translatable") == "false":
                continue
            if element.tag == "string" or element.tag == "item" and element.get("type") == "string":
                found = [element]
            elif element.tag in ("string-array", "plurals"):
                found = [item for item in element if item.tag == "item"]
            else:
                continue
            for item in found:
                if item.get("translatable") == "false" or item.get(f"{{{TOOLS}}}ignore") == "MissingTranslation":
                    continue
                resource = _Resource(item, namespaces)
                if is_message(resource.text):
                    self._resources.append(resource)
        self.segments = [segment for resource in self._resources for segment in resource.segments]

    def render(self) -> bytes:
        for resource in self._resources:
            resource.fill()
        return self._file.render()
