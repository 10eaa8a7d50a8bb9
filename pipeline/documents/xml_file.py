"""An XML resource file read with lxml's safe parser and written back as it came, with only the texts and attributes
that changed edited in place where that is all that changed (`SplicedXml`: a .resx's values); else serialized by
lxml, with what lies around its root as it came (the declaration, comments, blank lines: lxml would rewrite or drop
them), and the root's start tag as written, with only the attributes that changed edited in place (lxml writes
namespace declarations first, and its own quotes): Android's `strings.xml`, .NET's `.resx`, XLIFF."""
from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape, quoteattr

import regex

from pipeline.extras import require, safe_xml_parser

DOCTYPE = regex.compile(rb"<!DOCTYPE", regex.I)
# What lies before a file's root (a byte-order mark, the declaration, comments, processing instructions, spaces) and
# after it (comments, processing instructions, spaces): kept as written
PROLOG = regex.compile(rb"(?:\xef\xbb\xbf)?(?:\s+|<\?.*?\?>|<!--.*?-->)*", regex.S)
# A start tag: its name, then its attributes (and namespace declarations), in the order and quoting they came in
START_TAG = regex.compile(rb"""<[^\s/>]++(?:\s++[^\s=/>]++\s*+=\s*+(?:"[^"]*+"|'[^']*+'))*+\s*+>""")   # read one way
# One attribute of such a tag, with the space before it: (space, name, value with its quotes)
ATTRIBUTE = regex.compile(rb"""(\s++)([^\s=/>]++)\s*+=\s*+("[^"]*+"|'[^']*+')""")
XML_NAMESPACE = "http://www.w3.org/XML/1998/namespace"


def _epilog(data: bytes) -> int:
    """Where what follows a file's root (comments, processing instructions, spaces) starts: found from the end."""
    end = len(data)
    while True:
        while end and data[end - 1] in b" \t\r\n":
            end -= 1
        if data.endswith(b"-->", 0, end):
            opening = data.rfind(b"<!--", 0, end)       # (no comment holds `--`, so none another's opening)
        elif data.endswith(b"?>", 0, end):
            after = data.rfind(b"?>", 0, end - 2)      # the one before: this one opens after it (holds no `?>`)
            opening = data.find(b"<?", after + 2 if after >= 0 else 0, end - 2)
        else:
            return end
        if opening < 0:
            return end
        end = opening


def _quoted(value: str, quote: bytes, encoding: str) -> bytes:
    """`value` as an attribute's value between `quote`s, escaped as XML needs (white space other than the space as
    character references, so that a parser reads it back unchanged)."""
    text = value.replace("&", "&amp;").replace("<", "&lt;").replace("\t", "&#9;").replace("\n", "&#10;")
    text = text.replace("\r", "&#13;").replace('"' if quote == b'"' else "'", "&quot;" if quote == b'"' else "&apos;")
    return quote + text.encode(encoding, "xmlcharrefreplace") + quote


def edited_start_tag(written: bytes, before: dict[str, str], now: dict[str, str], namespaces: dict,
                     encoding: str) -> bytes | None:
    """The start tag `written` (whose element had the attributes `before`, in lxml's `{uri}name` form, and the
    namespace declarations `namespaces`) with the attributes `now`: each unchanged one as written, a changed one
    in place in its own quotes, a removed one dropped, a new one after the last (laid out and quoted as it is);
    None where one cannot be named as written (a new attribute in a namespace without a prefix)."""
    prefixes = {uri: prefix for prefix, uri in namespaces.items() if prefix}
    prefixes[XML_NAMESPACE] = "xml"
    pieces, last, seen = [], 0, set()
    end = len(written)
    for match in ATTRIBUTE.finditer(written):
        space, raw, value = match.groups()
        name = raw.decode(encoding)
        prefix, _, local = name.rpartition(":")
        if name == "xmlns" or prefix == "xmlns":
            continue                                       # a declaration: unchanged, as the caller checked
        if prefix:
            uri = XML_NAMESPACE if prefix == "xml" else namespaces.get(prefix)
            if uri is None:
                return None
            name = f"{{{uri}}}{local}"
        seen.add(name)
        pieces.append(written[last:match.start()])
        last = match.end()
        if name not in now:
            continue                                       # removed, with the space before it
        if now[name] == before.get(name):
            pieces.append(match.group(0))
        else:
            pieces.append(space + raw + written[match.end(2):match.start(3)] + _quoted(now[name], value[:1],
                                                                                           encoding))
    closing = regex.search(rb"\s*+/?>\Z", written).start()          # (`>`, or an empty element's `/>`)
    pieces.append(written[last:closing])
    written_attributes = ATTRIBUTE.findall(written)
    separator, quote = (written_attributes[-1][0], written_attributes[-1][2][:1]) if written_attributes else (
        b" ", b'"')                                        # a new one laid out and quoted as the last one is
    for name, value in now.items():
        if name in seen:
            continue
        if name.startswith("{"):
            uri, _, local = name[1:].partition("}")
            if uri not in prefixes:
                return None
            name = f"{prefixes[uri]}:{local}"
        pieces.append(separator + name.encode(encoding) + b"=" + _quoted(value, quote, encoding))
    pieces.append(written[closing:end])
    return b"".join(pieces)


class XmlFile:
    """`data` parsed (`root`, an lxml element named `root_tag`; None: any, which the caller checks), and `render()`
    its bytes again. A file that is not well formed, declares a DOCTYPE (whose entities it would expand) or has
    another root is a one-line ValueError naming `name` and `what` the file should be."""

    def __init__(self, data: bytes, name: str, root_tag: str | None, what: str):
        etree = require("lxml.etree", "documents")
        doctype = f"{name}: {what} with a DOCTYPE, which such files have none of (it may declare entities)"
        try:
            tree = etree.ElementTree(etree.fromstring(data, safe_xml_parser("documents", strip_cdata=False)))
        except etree.XMLSyntaxError as exc:
            if DOCTYPE.search(data):                     # its entities, which this parser does not load
                raise ValueError(doctype) from None
            raise ValueError(f"{name}: not well-formed XML: {exc}") from None
        if tree.docinfo.doctype:
            raise ValueError(doctype)
        self.root = tree.getroot()
        if root_tag is not None and self.root.tag != root_tag:
            raise ValueError(f"{name}: not {what}: its root is <{self.root.tag}>, not <{root_tag}>")
        self._tree, self._encoding = tree, tree.docinfo.encoding or "utf-8"
        self._crlf = b"\r\n" in data                   # the parser reads CR LF as LF: written back so
        before = PROLOG.match(data).end()                # the root opens after the declaration and comments
        after = _epilog(data)                            # and closes before the comments after it
        local = etree.QName(self.root).localname
        tag = (f"{self.root.prefix}:{local}" if self.root.prefix else local).encode()     # as written
        self._around = None                      # (the bytes before the root, after it); None: not found (UTF-16)
        if data[before:before + len(tag) + 1] == b"<" + tag and regex.search(
                rb"(?:</" + regex.escape(tag) + rb"\s*>|/>)\Z", data[before:after]):
            self._around = (data[:before], data[after:])
        # the root's start tag as written, put back where its attributes are unchanged: lxml writes the namespace
        # declarations first (`<xliff xmlns="..." version="1.2">` for `<xliff version="1.2" xmlns="...">`)
        start = START_TAG.match(data, before) if self._around is not None else None
        self._root_start = (start.group(0), dict(self.root.attrib), dict(self.root.nsmap)) if start else None
        self._spliced = SplicedXml(data, self.root, tree.docinfo.encoding)

    def render(self) -> bytes:
        etree = require("lxml.etree", "documents")
        edited = self._spliced.edited()         # only texts and attributes changed: each edited in place
        if edited is not None:
            return edited
        if self._around is None:
            return etree.tostring(self._tree, encoding=self._encoding, xml_declaration=True)
        before, after = self._around
        body = etree.tostring(self.root, encoding=self._encoding, xml_declaration=False)
        if self._root_start is not None:
            written, attributes, namespaces = self._root_start
            start = START_TAG.match(body)
            edited = (edited_start_tag(written, attributes, dict(self.root.attrib), namespaces, self._encoding)
                      if start and dict(self.root.nsmap) == namespaces else None)
            if edited is not None:
                body = edited.replace(b"\r\n", b"\n") + body[start.end():]
        return before + (body.replace(b"\n", b"\r\n") if self._crlf else body) + after

    @property
    def declarations(self) -> str:
        """The root's namespace declarations, as attributes (to parse a fragment in its namespaces)."""
        return "".join(f" xmlns:{prefix}={quoteattr(uri)}" if prefix else f" xmlns={quoteattr(uri)}"
                       for prefix, uri in self.root.nsmap.items())


# A piece of XML markup, the root's and after: a comment, a processing instruction, CDATA, a doctype, an end tag, or
# a start tag (group "name": its name; "empty": `/`, an empty element's). Text lies between them.
MARKUP = regex.compile(r"""<!--.*?-->|<\?.*?\?>|<!\[CDATA\[.*?\]\]>|<!DOCTYPE[^\[>]*+(?:\[.*?\])?\s*+>|</[^>]*+>"""
                       r"""|<(?P<name>[^\s/>!?][^\s/>]*+)(?:\s++[^\s=/>]++\s*+=\s*+(?:"[^"]*+"|'[^']*+'))*+\s*+"""
                       r"""(?P<empty>/?)>""", regex.S)
BYTE_ORDER_MARKS = ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


class SplicedXml:
    """An XML file's bytes and its parsed root (lxml), written back as the source with only what changed edited in
    place (`render`): an element's text, where it holds nothing else (a title, a label), and its attributes (in
    its start tag as written: `edited_start_tag`). Everything else, quotes, empty elements written `<a></a>` or
    `<a />`, character references, the prolog and its byte-order mark, comes back byte for byte; lxml wrote the
    whole tree in its own way. A change of another kind (an element added) is the whole tree serialized by lxml.
    """

    def __init__(self, data: bytes, root: Any, encoding: str | None):
        self._data, self.root = data, root
        self._bom, self._codec = next(((mark, codec) for mark, codec in BYTE_ORDER_MARKS if data.startswith(mark)),
                                      (b"", encoding or "utf-8"))
        self._elements = [element for element in root.iter() if isinstance(element.tag, str)]
        self._before = [(dict(element.attrib), element.text, len(element)) for element in self._elements]
        self._nodes = list(root.iter())                  # comments and processing instructions too
        self._tails = [(node.tail, node.text) for node in self._nodes]
        self._text, self._spans = None, None
        try:
            text = data[len(self._bom):].decode(self._codec)
        except (LookupError, UnicodeDecodeError):
            return
        spans = _element_spans(text, self._elements)
        if spans is not None:
            self._text, self._spans = text, spans

    def render(self) -> bytes:
        edited = self.edited()
        if edited is None:
            etree = require("lxml.etree", "documents")
            return etree.tostring(self.root.getroottree(), xml_declaration=True, encoding=self._codec.upper())
        return edited

    def edited(self) -> bytes | None:
        """The source with what changed edited in place, or None where a change is of another kind."""
        edited = self._edited()
        return None if edited is None else self._bom + edited.encode(self._codec, "xmlcharrefreplace")

    def _edited(self) -> str | None:
        if self._spans is None:
            return None
        now = list(self.root.iter())
        if len(now) != len(self._nodes) or any(
                a is not b or a.tail != tail or not isinstance(a.tag, str) and a.text != text
                for a, b, (tail, text) in zip(now, self._nodes, self._tails)):
            return None      # a node added, removed or put in another's place; a tail, or a comment's text, changed
        text, pieces, at = self._text, [], 0
        for element, (attributes, content, children), (start, end, closing) in zip(
                self._elements, self._before, self._spans):
            if len(element) != children:
                return None
            if dict(element.attrib) != attributes:
                tag = edited_start_tag(text[start:end].encode("utf-8"), attributes, dict(element.attrib),
                                       dict(element.nsmap), "utf-8")
                if tag is None:
                    return None
                pieces += [text[at:start], tag.decode("utf-8")]
                at = end
            if (element.text or "") != (content or ""):
                if children or closing is None and element.text or "<" in text[end:closing or end]:
                    return None                    # text among children, in an empty element, or in CDATA
                pieces.append(text[at:end])
                if closing is None:                # `<a/>`, its text taken away: still empty
                    at = end
                    continue
                pieces.append(escape(element.text or "", {"\r": "&#13;"}))
                at = closing
        return "".join([*pieces, text[at:]])


def _element_spans(text: str, elements: list[Any]) -> list[tuple[int, int, int | None]] | None:
    """Each element's (start tag's start, its end, its end tag's start or None for an empty element) in `text`, in
    document order, where the markup read has the parsed elements' names in their order (else None)."""
    spans: list[list[Any]] = []
    open_ones: list[int] = []
    for match in MARKUP.finditer(text):
        piece = match.group(0)
        if match.group("name") is not None:
            if len(spans) >= len(elements) or match.group("name").rpartition(":")[2] != \
                    elements[len(spans)].tag.rpartition("}")[2]:
                return None
            spans.append([match.start(), match.end(), None])
            if not match.group("empty"):
                open_ones.append(len(spans) - 1)
        elif piece.startswith("</"):
            if not open_ones:
                return None
            spans[open_ones.pop()][2] = match.start()
    if len(spans) != len(elements) or open_ones:
        return None
    return [tuple(span) for span in spans]
