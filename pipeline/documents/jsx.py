"""MDX's JSX: where its tags and expressions end, the text inside its blocks of JSX, and its tags' text attributes.

`JsxCodes(text).end(position)`: where the JSX tag (`<Tabs groupId="os">`, `</TabItem>`, `<Card items={[1, 2]} />`)
or the JavaScript expression (`{props.name}`, `{/* a comment */}`, braces balanced) that opens at `position` ends.
Braces are paired once for the whole text, in one pass: a regular expression that pairs them itself (recursion)
scanned on from every `{` to the text's end where they do not pair, and 2,000 unpaired `{` in a paragraph took 9 s,
20,000 over 15 minutes.

CommonMark reads a block that opens with a tag alone on its line (`<Tabs>`) as raw HTML, up to the next blank
line, and MDX then reads the lines inside its elements as Markdown. Docusaurus' pages write tabs, admonitions and
cards that way, with no blank lines around the text:

    <Tabs>
      <TabItem value="apple" label="Apple" default>
        This is an apple.
      </TabItem>
    </Tabs>

An HTML parser cannot write such a block back (JSX's `TabItem` is case-sensitive, `default` has no value), so
`jsx_paragraphs` finds the text in it instead: the lines that hold something besides JSX tags and expressions, a
line taken with the one before where text ends that one and begins this one (a sentence wrapped; a line that
begins with a tag, `<summary>More</summary>`, is a paragraph of its own), a tag or an expression that runs on past
its line taken with it. Never text: lines inside a fenced code block, inside `<pre>`, `<code>`, `<script>`,
`<style>`, `<textarea>` or a `<CodeBlock>`, and lines that open with Markdown's block syntax that a paragraph's
inline text cannot hold (a list item, a heading, a quote, a table's row), which are kept as written.

`JsxTag(tag)`: the attributes of a start tag that a reader sees (`alt`, `title`, `aria-label`, `label`), as
segments, and the tag written again with their translations.
"""
from __future__ import annotations

import bisect
import functools
from typing import NamedTuple

import regex

from pipeline.documents.html import TRANSLATED_ATTRIBUTES
from pipeline.documents.segments import LETTER, Segment, protected_spans

# a JSX tag, its attributes' braced expressions masked (`JsxCodes`): a name, then attributes, quoted values, masks
TAG = regex.compile(r"</?[A-Za-z][\w.:-]*(?:\s(?:[^<>{}\"']|\"[^\"]*\"|'[^']*'){0,20000})?/?>")
BRACE = regex.compile(r"[{}]")
MASK = "\0"                                           # what a braced expression reads as inside a tag


class JsxCodes:
    """The JSX tags and expressions of one text (the module's docstring): `end(position, limit)`."""

    def __init__(self, text: str):
        self.text = text
        self._closing: dict[int, int] = {}             # a `{` -> past its `}`
        opened: list[int] = []
        for brace in BRACE.finditer(text):
            if brace.group() == "{":
                opened.append(brace.start())
            elif opened:
                self._closing[opened.pop()] = brace.end()
        pieces, at = [], 0
        for start in sorted(self._closing):            # each pair not inside another (a `{` left open before it,
            if start >= at:                            # in a code span, does not make it an inner one)
                end = self._closing[start]
                pieces += [text[at:start], MASK * (end - start)]
                at = end
        self.masked = "".join([*pieces, text[at:]])   # the text, each outermost braced expression as NULs

    def end(self, position: int, limit: int | None = None) -> int | None:
        """Past the tag or expression that opens at `position` (and ends by `limit`), else None."""
        limit = len(self.text) if limit is None else limit
        if self.text.startswith("{", position):
            end = self._closing.get(position)
            return end if end is not None and end <= limit else None
        found = TAG.match(self.masked, position, limit)
        return found.end() if found is not None else None


# A JSX attribute whose value is text a reader sees: HTML's (`alt`, `title`, `aria-label`, ...) and `label`
# (Docusaurus' `<TabItem label="Apple">`, a form control's); a braced value (`title={name}`) is code
TEXT_PROPS = frozenset({*TRANSLATED_ATTRIBUTES, "label"})
ATTRIBUTE = regex.compile(r"""\s([A-Za-z_][\w:.-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')""")


class JsxTag:
    """A JSX start tag's attributes that a reader sees (`TEXT_PROPS`) as `segments` (their entities and URLs kept);
    `written()`: the tag with their translations, each quoted so that it still reads as one string (the other
    quote where the translation holds its own, as `l'app` does; a character reference where it holds both)."""

    def __init__(self, tag: str):
        self.tag = tag
        self._values: list[tuple[int, int, str, Segment]] = []     # (start, end, quote, segment) of each value
        for found in ATTRIBUTE.finditer(JsxCodes(tag).masked):       # not inside an expression's braces
            group = 2 if found.group(2) is not None else 3
            value = tag[found.start(group):found.end(group)]
            if found.group(1) in TEXT_PROPS and LETTER.search(value):
                segment = Segment(value, protected=protected_spans(value))
                self._values.append((found.start(group), found.end(group), '"' if group == 2 else "'", segment))
        self.segments = [segment for _, _, _, segment in self._values]

    def written(self) -> str:
        pieces, at = [], 0
        for start, end, quote, segment in self._values:
            value = segment.translation
            if value is None or value == segment.text:
                continue
            if quote in value:
                other = "'" if quote == '"' else '"'
                if other in value:
                    value = value.replace(quote, "&quot;" if quote == '"' else "&#39;")
                else:
                    quote = other
            pieces += [self.tag[at:start - 1], quote, value, quote]
            at = end + 1
        return "".join([*pieces, self.tag[at:]])


@functools.lru_cache(maxsize=8)
def jsx_codes(text: str) -> JsxCodes:
    """`JsxCodes(text)`, made once for a text read at many positions (an inline rule's source)."""
    return JsxCodes(text)

OPENING = regex.compile(r"[<{]")
RAW_ELEMENT = regex.compile(r"<(/?)(pre|code|script|style|textarea|CodeBlock)(?![\w.:-])")
FENCE = regex.compile(r"[ \t]*(?:`{3,}|~{3,})")
BLOCK_SYNTAX = regex.compile(r"[ \t]*(?:[-*+][ \t]|[0-9]{1,9}[.)][ \t]|#{1,6}(?:[ \t]|$)|>|\|)")


class Paragraph(NamedTuple):
    """A paragraph of a JSX block: `content[start:end]`, its first line indented by `indent`."""
    start: int
    end: int
    indent: str


def _codes(content: str) -> list[tuple[int, int]]:
    """(start, end) of each JSX tag and expression in `content`, in order."""
    codes, spans, position = JsxCodes(content), [], 0
    while True:
        found = OPENING.search(content, position)
        if found is None:
            return spans
        end = codes.end(found.start())
        if end is None:
            position = found.start() + 1
            continue
        spans.append((found.start(), end))
        position = end


def _ends_in_text(content: str, covered: bytearray, end: int) -> bool:
    """Whether the last character before `end` that is not a space is text (not a tag's, an expression's)."""
    at = end - 1
    while at >= 0 and content[at].isspace():
        at -= 1
    return at >= 0 and not covered[at]


def _starts_with_text(content: str, covered: bytearray, start: int, end: int) -> bool:
    at = start
    while at < end and content[at].isspace():
        at += 1
    return at < end and not covered[at]


class _Layout(NamedTuple):
    spans: list[tuple[int, int]]                     # each tag and expression
    covered: bytearray                               # per character, 1: in a tag or expression; 2: in a raw element
    lines: list[tuple[int, int]]                     # each line's (start, end)
    fenced: list[bool]                               # each line's: a fence's or inside a fenced code block


def _layout(content: str, blanked: str | None = None) -> _Layout:
    """The tags and expressions of `content` (found in `blanked`, its fenced code as spaces, where given), what
    they cover, its lines and which are fenced code."""
    spans = _codes(blanked if blanked is not None else content)
    covered = bytearray(len(content))
    depth = 0
    raw_from = 0
    for start, end in spans:
        covered[start:end] = b"\1" * (end - start)
        raw = RAW_ELEMENT.match(content, start)
        if raw is None or content[end - 2:end] == "/>":
            continue
        if raw.group(1):                             # a closing tag
            if depth:
                depth -= 1
                if not depth:
                    covered[raw_from:start] = bytes(2 if flag == 0 else flag for flag in covered[raw_from:start])
        else:
            if not depth:
                raw_from = end
            depth += 1
    if depth:                                        # never closed: raw to the block's end
        covered[raw_from:] = bytes(2 if flag == 0 else flag for flag in covered[raw_from:])
    lines, offset = [], 0
    for line in content.split("\n"):
        lines.append((offset, offset + len(line)))
        offset += len(line) + 1
    fenced, inside = [], False
    for start, end in lines:
        fence = bool(FENCE.match(content, start, end)) and not covered[start:end].count(1)
        inside = inside != fence
        fenced.append(inside or fence)
    if any(fenced) and not blanked:                  # again without the code's braces, which pair with none
        text = list(content)
        for (start, end), in_fence in zip(lines, fenced):
            if in_fence:
                text[start:end] = " " * (end - start)
        return _layout(content, "".join(text))._replace(fenced=fenced)
    return _Layout(spans, covered, lines, fenced)


def jsx_start_tags(content: str) -> list[tuple[int, int]]:
    """(start, end) of each JSX start tag (`<TabItem value="a" label="A">`, `<img alt="x" />`) of a block's
    `content`, outside fenced code."""
    layout = _layout(content)
    starts = [start for start, _ in layout.lines]
    return [(start, end) for start, end in layout.spans if content.startswith("<", start)
            and not content.startswith("</", start) and not layout.fenced[bisect.bisect_right(starts, start) - 1]]


def jsx_paragraphs(content: str) -> list[Paragraph]:
    """The paragraphs of text in a JSX block's `content` (the module's docstring)."""
    spans, covered, lines, fenced = _layout(content)
    starts = [start for start, _ in spans]
    kinds = []                                       # "text", "syntax" (kept), or "" (tags, blank, code)
    for (start, end), in_fence in zip(lines, fenced):
        line = content[start:end]
        text = any(not covered[at] and not content[at].isspace() for at in range(start, end))
        kinds.append("" if in_fence or not text else "syntax" if BLOCK_SYNTAX.match(line) else "text")
    paragraphs = []
    number = 0
    while number < len(lines):
        if kinds[number] != "text":
            number += 1
            continue
        first = number
        while True:
            end = lines[number][1]
            while end < len(content) and covered[end] == 1:     # a tag or expression runs on past the line
                number += 1
                end = lines[number][1]
            if number + 1 < len(lines) and kinds[number + 1] == "text" and _ends_in_text(content, covered, end) \
                    and _starts_with_text(content, covered, *lines[number + 1]):
                number += 1
                continue
            break
        start = lines[first][0]
        line = content[start:lines[first][1]]
        head = start + len(line) - len(line.lstrip())
        if covered[head] == 1:                      # inside a tag begun on a line above: the paragraph opens with it
            opened = starts[bisect.bisect_right(starts, head) - 1]
            if opened < start:
                start = content.rfind("\n", 0, opened) + 1
                line = content[start:lines[first][1]].partition("\n")[0]
        indent = line[:len(line) - len(line.lstrip())]
        text_end = end
        while text_end > start and content[text_end - 1].isspace():
            text_end -= 1
        paragraphs.append(Paragraph(start + len(indent), text_end, indent))
        number += 1
    return paragraphs
