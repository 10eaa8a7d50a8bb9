"""XLIFF (`.xlf`, `.xliff`), versions 1.2 and 2.x: the file translation tools exchange (memoQ, Trados, OmegaT,
Weblate, Crowdin; Angular's and Symfony's message catalogs), read with `lxml` (as office files are).

Each unit without a translation gets one, written as its `target` right after its `source`: a 1.2 `trans-unit`,
a 2.x `segment`, whose target is missing or empty. A 1.2 unit segmented by a tool (`seg-source`, its segments
`mrk mtype="seg"`: Trados's SDLXLIFF, memoQ) is translated segment by segment, into a target of the same segments
(a copy of the `seg-source` where it has none), each segment without a translation filled. A unit marked not to
translate (`translate="no"` on it or on a group around it), an approved one (1.2 `approved="yes"`) and one with a
target someone wrote are left as they are. A new target says it is a machine translation to review: 1.2
`state="needs-review-translation"` with `state-qualifier="mt-suggestion"`, 2.x the segment's `state="translated"`
(its only state before review). Inline
codes come back exactly, each once, in a well-formed target: paired ones with translatable text (1.2 `g`, `mrk`;
2.x `pc`, `mrk`) are read as tags around their words, standalone and native ones whole (1.2 `x`, `bx`, `ex`, `ph`,
`bpt`, `ept`, `it`; 2.x `ph`, `sc`, `ec`, `sm`, `em`, `cp`; a `mrk` not to translate); a translation that lost,
repeated or misnested one is redone between them (`segments`). Placeholders (`%name%`, `{name}`, `%s`) are kept
as well, and an ICU MessageFormat choice (`{count, plural, one {# file} other {# files}}`) keeps its syntax as it is:
each case's message is translated alone, its `#` kept, its apostrophes written as ICU quotes them; a Symfony choice
(`{0} No apples|{1} One apple|]1,Inf[ %count% apples`) keeps its intervals and bars, each message alone. The file's
target language (1.2 `target-language` on each `file`, 2.x `trgLang`) is set to the run's where it was missing; a
file whose source or target language is not the run's is a one-line error, as a DOCTYPE is (XLIFF has none; one
could declare entities).
"""
from __future__ import annotations

import copy
from typing import Any, Iterator
from xml.sax.saxutils import escape, quoteattr

import regex

from pipeline.documents.messages import CatalogMessage, outside
from pipeline.documents.xml_file import XmlFile
from pipeline.extras import require, safe_xml_parser
from pipeline.language import Direction

XLIFF_1 = "urn:oasis:names:tc:xliff:document:1.2"
XLIFF_2 = "urn:oasis:names:tc:xliff:document:2.0"       # 2.1 and 2.2 keep 2.0's namespace
XML_NS = "http://www.w3.org/XML/1998/namespace"
# Inline elements read whole, their content native code or nothing (a `mrk` not to translate is one too)
WHOLE = {XLIFF_1: {"x", "bx", "ex", "ph", "bpt", "ept", "it"}, XLIFF_2: {"ph", "sc", "ec", "sm", "em", "cp"}}
# Inline elements around translatable text, read as tags about their words
PAIRED = {XLIFF_1: {"g", "mrk"}, XLIFF_2: {"pc", "mrk"}}
LOOKS_LIKE = regex.compile(rb"\A(?:\xef\xbb\xbf)?\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*<(?:\w+:)?xliff\b", regex.S)


def looks_like_xliff(data: bytes) -> bool:
    """Whether `data` opens as an XLIFF file (its root element `xliff`)."""
    return bool(LOOKS_LIKE.match(data[:4096]))


def _empty(target: Any) -> bool:
    """Whether a unit's target is missing or empty: no text and no inline code (`<target/>`, `<target> </target>`)."""
    return target is None or (not "".join(target.itertext()).strip() and not any(
        isinstance(child.tag, str) for child in target))


def _primary(tag: str | None) -> str:
    """A language tag's primary language, lower case (`en-US` -> `en`); "" for none."""
    return (tag or "").strip().replace("_", "-").split("-")[0].lower()


class _Unit:
    """One unit's source as the model reads it (`segments`: its text as text, `Tom & Jerry`, not as markup, and its
    inline codes as protected tags; one per text of an ICU or Symfony choice, `CatalogMessage`), and the target
    written from its translation: its codes as they came, the text around them escaped (`markup`)."""

    def __init__(self, source: Any, namespace: str):
        self.source, self.namespace = source, namespace
        self._declarations: str | None = None               # the source's namespaces, as `wrapped` declares them
        parts: list[tuple[str, bool]] = []                 # (text, is a code) in order
        self._read(source, parts)
        self.text = "".join(part for part, _ in parts)
        self._source_markup = "".join(part if code else escape(part) for part, code in parts)
        self._codes = [part for part, code in parts if code]
        codes, offset = [], 0                              # (where, code)
        for part, code in parts:
            if code:
                codes.append((offset, part))
            offset += len(part)
        self.message = CatalogMessage(self.text, codes, lambda text: self.wrapped(text) is not None)
        self.segments = self.message.segments

    @staticmethod
    def _name(qualified: str, element: Any, attribute: bool) -> str:
        """A tag's or attribute's name as written where `element` is (`xlf:g`, `its:locNote`, `xml:lang`)."""
        namespace, _, local = qualified[1:].partition("}") if qualified.startswith("{") else (None, "", qualified)
        if namespace == XML_NS:
            return f"xml:{local}"
        if namespace is None:
            return local
        prefixes = [prefix for prefix, uri in element.nsmap.items() if uri == namespace]
        prefix = element.prefix if not attribute and element.prefix in prefixes else \
            next((prefix for prefix in prefixes if prefix or not attribute), None)
        return f"{prefix}:{local}" if prefix else local

    def _tag(self, element: Any, close: bool = False, empty: bool = False) -> str:
        name = self._name(element.tag, element, attribute=False)
        if close:
            return f"</{name}>"
        attributes = "".join(f" {self._name(key, element, attribute=True)}={quoteattr(value)}"
                             for key, value in element.attrib.items())
        return f"<{name}{attributes}{'/' if empty else ''}>"

    def _whole(self, element: Any) -> str:
        """An element as written (its content escaped), without its tail."""
        if len(element) == 0 and not element.text:
            return self._tag(element, empty=True)
        inner = escape(element.text or "") + "".join(
            (self._whole(child) if isinstance(child.tag, str) else "") + escape(child.tail or "")
            for child in element)                                       # a comment inside a code: left out
        return self._tag(element) + inner + self._tag(element, close=True)

    def _read(self, element: Any, parts: list[tuple[str, bool]]) -> None:
        if element.text:
            parts.append((element.text, False))
        for child in element:
            if not isinstance(child.tag, str):                  # a comment or processing instruction: left out,
                if child.tail and parts and not parts[-1][1] and parts[-1][0][-1:].isspace():
                    parts.append((child.tail.lstrip(), False))          # with one space where it stood
                    continue
            else:
                local = child.tag.rpartition("}")[2]
                keep = child.get("translate") == "no" or child.get("mtype") == "protected"
                if local in PAIRED[self.namespace] and not keep:
                    parts.append((self._tag(child), True))
                    self._read(child, parts)
                    parts.append((self._tag(child, close=True), True))
                else:
                    parts.append((self._whole(child), True))
            if child.tail:
                parts.append((child.tail, False))

    def markup(self, translation: str) -> str:
        """A translation as XML content: the unit's codes in it as written, the text around them escaped (a `&` or
        `<` the model wrote is text)."""
        return outside(translation, self._codes, escape)

    def wrapped(self, translation: str) -> Any | None:
        """The translation as a target element (in the source's namespaces), or None where its codes do not nest."""
        return self._parsed(self.markup(translation))

    def _parsed(self, markup: str) -> Any | None:
        etree = require("lxml.etree", "documents")
        if self._declarations is None:                       # (once: a unit's thousands of parts each ask)
            names = {prefix: uri for element in self.source.iter() if isinstance(element.tag, str)
                     for prefix, uri in element.nsmap.items()}          # those declared inside the source too
            self._declarations = "".join(f" xmlns:{prefix}={quoteattr(uri)}" if prefix else
                                         f" xmlns={quoteattr(uri)}" for prefix, uri in names.items())
        try:
            return etree.fromstring(f"<target{self._declarations}>{markup}</target>",
                                    safe_xml_parser("documents"))
        except etree.XMLSyntaxError:
            return None

    def fill(self, element: Any) -> Any:
        """`element` (a new target, a target's segment) holding the translation, its content before dropped (the
        source's content where its codes do not nest: never met, as a translation that misnests them is redone
        between them)."""
        translation = self.message.translation()
        wrapped = self.wrapped(translation) if translation else None
        if wrapped is None:
            wrapped = self._parsed(self._source_markup)
        for child in list(element):
            element.remove(child)
        element.text = wrapped.text
        for child in wrapped:
            element.append(child)
        return element

    def target(self, container: Any, attributes: dict[str, str]) -> Any:
        """The new target element, made in `container` (so that it takes its namespaces), holding the translation."""
        etree = require("lxml.etree", "documents")
        return self.fill(etree.SubElement(container, f"{{{self.namespace}}}target", attributes))


class XliffDocument:
    """An XLIFF file: `segments` of its units without a translation, and `render()`. `direction`: the run's
    (`direct`); a file whose languages are not the run's is a ValueError (one line)."""

    def __init__(self, data: bytes, name: str = "document", direction: Direction | None = None):
        self._file = XmlFile(data, name, None, "an XLIFF file")
        root = self._file.root
        namespace = root.tag[1:].partition("}")[0] if root.tag.startswith("{") else ""
        if root.tag.rpartition("}")[2] != "xliff" or namespace not in (XLIFF_1, XLIFF_2):
            raise ValueError(f"{name}: not an XLIFF 1.2 or 2.x file (its root is {root.tag!r}; expected xliff in "
                             f"{XLIFF_1} or {XLIFF_2})")
        self._name, self._namespace, self._root = name, namespace, root
        self._units = [(unit, _Unit(source, namespace)) for unit, source in self._todo()]
        self.segments = [segment for _, unit in self._units for segment in unit.segments]
        self.direction: Direction | None = None
        self.direct(direction or Direction(), judge=direction is not None)

    def _ns(self, local: str) -> str:
        return f"{{{self._namespace}}}{local}"

    def _translatable(self, element: Any) -> bool:
        """Not marked `translate="no"` itself, nor inside a group or file so marked (the nearest mark decides)."""
        for above in (element, *element.iterancestors()):
            if above.get("translate") in ("yes", "no"):
                return above.get("translate") == "yes"
        return True

    def _todo(self) -> Iterator[tuple[Any, Any]]:
        """(the element the target goes into, its source) for each unit to translate."""
        if self._namespace == XLIFF_1:
            for unit in self._root.iter(self._ns("trans-unit")):
                source, target = unit.find(self._ns("source")), unit.find(self._ns("target"))
                if source is None or unit.get("approved") == "yes" or not self._translatable(unit):
                    continue
                segments = self._segments(unit.find(self._ns("seg-source")))
                written = self._segments(target)
                if segments and (written or _empty(target)):   # segmented (Trados, memoQ): each segment the
                    yield from ((unit, mark) for key, mark in segments.items()     # target has empty, or all
                                if not written or (key in written and _empty(written[key])))
                elif not segments and _empty(target):
                    yield unit, source
            return
        for unit in self._root.iter(self._ns("unit")):
            if not self._translatable(unit):
                continue
            for segment in unit.iter(self._ns("segment")):
                source, target = segment.find(self._ns("source")), segment.find(self._ns("target"))
                if source is not None and _empty(target):
                    yield segment, source

    def _segments(self, element: Any) -> dict[str, Any]:
        """A 1.2 `seg-source`'s or target's segments (`mrk mtype="seg"`) by their `mid` (by their place, `#0`,
        where they have none)."""
        if element is None:
            return {}
        marks = [mark for mark in element.iter(self._ns("mrk")) if mark.get("mtype") == "seg"]
        return {mark.get("mid") or f"#{place}": mark for place, mark in enumerate(marks)}

    def _segmented_target(self, unit: Any, attributes: dict[str, str]) -> Any:
        """A 1.2 segmented unit's target: the one it has where it holds segments, else a copy of its `seg-source`
        (what lies between the segments as written there), placed after it."""
        target = unit.find(self._ns("target"))
        if self._segments(target):
            return target
        seg_source = unit.find(self._ns("seg-source"))
        made = copy.deepcopy(seg_source)
        made.tag = self._ns("target")
        made.attrib.clear()
        made.attrib.update({**(dict(target.attrib) if target is not None else {}), **attributes})
        if target is not None:
            made.tail = target.tail
            unit.replace(target, made)
        else:
            made.tail = seg_source.tail
            seg_source.addnext(made)
            previous = seg_source.getprevious()
            indent = unit.text if previous is None else previous.tail
            if indent is not None and not indent.strip():
                seg_source.tail = indent
        return made

    def _languages(self) -> list[tuple[Any, str, str]]:
        """(the element, its source-language attribute, its target-language one) of each place naming them."""
        if self._namespace == XLIFF_1:
            return [(file, "source-language", "target-language") for file in self._root.iter(self._ns("file"))]
        return [(self._root, "srcLang", "trgLang")]

    def direct(self, direction: Direction, judge: bool = True) -> None:
        """Translate for a run of `direction`: ValueError (one line) where the file says other languages."""
        direction = Direction(*direction)
        if judge:
            for element, source, target in self._languages():
                said_source, said_target = _primary(element.get(source)), _primary(element.get(target))
                if said_source not in ("", direction.source) or said_target not in ("", direction.target):
                    raise ValueError(f"{self._name}: an XLIFF file from {element.get(source)!r} to "
                                     f"{element.get(target)!r}; this run translates {direction.pair}")
        self.direction = direction

    def render(self) -> bytes:
        direction = self.direction or Direction()
        for element, _, target_attribute in self._languages():
            if not element.get(target_attribute):
                element.set(target_attribute, direction.target)
        segmented: dict[int, tuple[dict[int, str], dict[str, Any]]] = {}   # per unit: its marks' keys, its target's
        for container, unit in self._units:
            if unit.message.translation() is None:
                continue
            if self._namespace == XLIFF_1:
                file = next(container.iterancestors(self._ns("file")), None)
                named = file.get("target-language", "") if file is not None else ""     # `it-IT`: its region too
                attributes = {f"{{{XML_NS}}}lang": named if _primary(named) == direction.target else direction.target,
                              "state": "needs-review-translation", "state-qualifier": "mt-suggestion"}
            else:                                    # a machine's: translated, whatever state the empty one had
                attributes = {}
                container.set("state", "translated")
            if unit.source.tag == self._ns("mrk"):             # a segment of a segmented unit
                if id(container) not in segmented:                # (read once for all its segments)
                    keys = {id(mark): key for key, mark in
                            self._segments(container.find(self._ns("seg-source"))).items()}
                    segmented[id(container)] = keys, self._segments(self._segmented_target(container, attributes))
                keys, marks = segmented[id(container)]
                mark = marks.get(keys[id(unit.source)])
                if mark is not None:
                    unit.fill(mark)
                continue
            old = container.find(self._ns("target"))
            target = unit.target(container, attributes)
            if old is not None:                      # an empty one: replaced, its attributes kept
                for key, value in old.attrib.items():
                    if key not in target.attrib:
                        target.set(key, value)
                target.tail = old.tail
                container.replace(old, target)
                continue
            after = container.find(self._ns("seg-source")) if self._namespace == XLIFF_1 else None
            after = unit.source if after is None else after
            previous = unit.source.getprevious()
            indent = container.text if previous is None else previous.tail       # the source's own line's
            target.tail = after.tail
            after.addnext(target)
            if indent is not None and not indent.strip():
                after.tail = indent
        return self._file.render()
