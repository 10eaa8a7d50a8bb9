"""Markdown (`.md`): parsed by `markdown-it-py` (CommonMark, with tables) and written back by `mdformat`'s
renderer (the formatter built on it), both well kept.

What survives exactly: front matter (a leading `---` YAML or `+++` TOML block) but for the values a site shows,
reference-link definitions, fenced and indented code blocks, inline code, link and image targets and titles,
autolinks, inline HTML, block HTML but for its text (translated as an HTML page's is, `_html_block`, where the
parser writes the block back as it is), and the URLs, e-mail addresses and paths of the text
(`segments.protected_spans`); common extensions' markup
(`INLINE_KEPT`: task boxes, footnote labels, Liquid/Jinja/Hugo tags, attribute lists, a heading's at its end
whatever the translation, `$` math; `$$` math blocks, abbreviations' labels (`*[HTML]:`, the expansion translated,
a line each), definition lists' markers (`Term` / `:   text`, term and definitions translated, each on its lines),
lines of block tags, and admonition (but for a title) and content tab lines, whose indented body is translated;
MDX `import` and `export` statements; Docusaurus/VitePress `:::` container fences, whose body and plain title are
translated; GitHub alert markers, `> [!NOTE]`, alone on their quote's first line); the structure of headings, lists,
block quotes, tables and emphasis. Each paragraph, heading or table cell is one text for the model, its markup included:
the translation is parsed again and kept only if it has the same code spans, links, images, emphasis and HTML, and
every URL, address and path; else the text between them is translated piece by piece (`segments`), with the spaces
and punctuation that touch an emphasis delimiter kept as in the source, so the emphasis renders the same. Layout is
the source's where CommonMark leaves it free (`markdown_layout`: bullets, numbers, breaks, setext headings, fences,
link destinations, reference definitions in place) and else mdformat's (a translated paragraph comes back on one
line), which changes nothing a Markdown renderer shows; a character the source writes only as a reference
(`&nbsp;`) is written so again (`reference_spellings`), and MDX's escaped braces stay escaped. The front matter (YAML or TOML: `front_matter`) has
the values a site shows translated (`title`, `description`, `summary`, ...) and its top-level `lang`, `language` or
`locale` naming the run's source language names its target (`en-US` -> `it-IT`); everything else is kept as written.
A heading's anchor is made from its text, so a translated heading has another: a link within the document
(`[see below](#getting-started)`, inline or a reference definition) to a heading's anchor is pointed at that
heading's new one (`#per-iniziare`), for the anchors GitHub/GitLab make and those Python-Markdown's `toc` (MkDocs)
makes (`HeadingAnchors`); a heading with an explicit id (`{#start}`) keeps it, and other fragments are left alone.
MDX (`.mdx`, `MdxDocument`) is read as Markdown, and also keeps verbatim its JavaScript expressions (`{props.name}`,
`{/* a comment */}`, braces balanced) and its JSX tags whose attributes CommonMark's HTML does not read
(`<Tabs values={[{label: 'A'}]}>`) (`jsx.JsxCodes`); the text between JSX tags is translated as any text, in a
block of JSX that CommonMark reads as raw HTML too (`jsx.jsx_paragraphs`: Docusaurus' tabs without blank lines).
"""
from __future__ import annotations

import copy
import functools
import html
import unicodedata
import urllib.parse
from collections import Counter
from typing import Any

import regex

from pipeline.documents.encoding import Encoded
from pipeline.documents.html import ENTITY, HtmlText
from pipeline.documents.jsx import JsxTag, Paragraph, jsx_codes, jsx_paragraphs, jsx_start_tags
from pipeline.documents.markdown_layout import (SOURCE_LINES, TRANSLATED, blank_before, keep_written, mdx_escaped,
                                                relinked_definitions, renderers, table)
from pipeline.documents.segments import Segment, cut_at, keeps_spans, protected_spans
from pipeline.extras import require
from pipeline.documents.front_matter import FRONT_MATTER, FrontMatter
from pipeline.language import Direction, FollowsDirection

BLANK_LINES = regex.compile(r"(?:[ \t]*+\r?\n)*+")        # the blank lines a body starts with
STRIKETHROUGH = regex.compile(r"~~")      # GFM strikethrough, plain text to CommonMark: kept as written
MAX_NESTING = 200           # markdown-it's commonmark preset drops what is nested deeper than 20
RUN = ("text", "softbreak")
SOURCE_KEPT = ("code_inline", "html_inline", "image")
# Extensions to CommonMark that many sites' Markdown carries, kept verbatim as raw HTML is (an `html_inline` or
# `html_block` token, which the renderer writes as read): footnote references and definitions' labels (`[^1]`,
# `[^1]:`), Liquid/Jinja and Hugo tags (`{{ page.title }}`, `{% include a.html %}`, `{{< figure >}}`,
# `{{% notice %}}`), attribute lists (`{#id .class}`), and math: `$$...$$`, and `$...$` as Pandoc reads it (no
# space inside either dollar, no digit after the closing one: "$5 and $10" is no math); GitHub's emoji shortcodes
# and mentions.
TEMPLATE = r"\{\{.{0,2000}?\}\}|\{%.{0,2000}?%\}"
SPELLINGS = "character references"            # the render environment's key: characters -> their spelling
INLINE_KEPT = regex.compile(rf"\[\^[^\]\s]{{1,200}}\]:?|{TEMPLATE}"
                            r"|\{:?[ \t]*(?:[#.][\w-]|[\w-]+=)[^{}\n]{0,2000}\}"
                            r"|\$\$(?:\\.|[^$\\]){1,20000}?\$\$"
                            r"|\$(?![\s$])(?:\\.|[^$\\]){0,2000}?(?<![\s\\])\$(?![0-9$])"
                            r"|(?<![\w:]):[a-z0-9_+-]{1,40}:(?![\w:])"          # GitHub's emoji, :rocket:
                            r"|(?<![\w.@/])@[A-Za-z0-9][A-Za-z0-9-]{0,38}(?![\w@-])", regex.S)   # a mention, @octocat
TASK_MARKER = regex.compile(r"\[[ xX]\](?=[ \t])")              # a task list item's box, where its text starts
# block tags alone; each tag's body never runs past its closing, and is read one way only (possessive): `.*?`
# across closings split a line of k tags 2^k ways before it failed (24 `{%a%}` and an `x`: 1.6 s, twice per tag)
TEMPLATE_LINE = regex.compile(r"(?:\{%(?:(?!%\}).){0,2000}+%\}|\{\{[<%](?:(?![>%]\}\}).){0,2000}+[>%]\}\}"
                              r"|[ \t])++")
FOOTNOTE_DEFINITION = regex.compile(r"\[\^[^\]\s]{1,200}\]:")
# MkDocs / Python-Markdown: an admonition's line (`!!! note "Title"`, `??? tip`: the title translated) or a content
# tab's (`=== "Label"`: kept, as Material links tabs across pages by their label)
ADMONITION = regex.compile(r"(?:(?:!!!|\?\?\?\+?)[ \t]*[\w-]+(?:[ \t]+\"(?P<title>[^\"\n]*)\")?"
                           r"|===[!+]?[ \t]+\"[^\"\n]*\")[ \t]*")
# Docusaurus / VitePress containers: `:::note`, `:::tip Title`, `:::warning[Title]`, `:::info{title="x"}`, closed by
# a line of as many colons or more (an outer one has more: `::::`)
CONTAINER = regex.compile(r"(?P<fence>:{3,})[ \t]*[\w-]+(?:\[[^\]\n]*\]|\{[^{}\n]*\})*"
                          r"(?:[ \t]+(?P<title>[^\n]*?))?[ \t]*")
CONTAINER_CLOSE = regex.compile(r"(?P<fence>:{3,})[ \t]*")
# GitHub alerts: a block quote whose first line is one of these is rendered as a note, a tip, ...
ALERT = regex.compile(r"\[!(?:NOTE|TIP|IMPORTANT|WARNING|CAUTION)\][ \t]*", regex.I)
# MDX (Docusaurus) ESM statements, top level only: `import X from '...'`, `import {A} from "..."`, `import '...'`,
# `export const|default|function|let|var|class ...`; an import is one only where a `from` and a quote follow
MDX_STATEMENT = regex.compile(r"import(?:[ \t]+[\w$]|[ \t]*[{*'\"])"
                              r"|export[ \t]+(?:(?:const|default|function|let|var|class|async)(?![\w$])|[{*])")
MDX_IMPORT = regex.compile(r"""import[ \t]*(?:(?:type[ \t]+)?(?:[\w$]+(?:[ \t]*,[ \t]*)?)?"""
                           r"""(?:\{[^{}]*\}|\*[ \t]*as[ \t]+[\w$]+)?\s*from\s*)?(?:'[^'\n]*'|"[^"\n]*")""")
MDX_IMPORT_LINE = regex.compile(r"^import(?![\w$])", regex.M)
MDX_MAX_LINES = 200        # how far a statement's open brackets are followed (each start scans at most this)
EMPHASIS = ("em_open", "em_close", "strong_open", "strong_close", "s_open", "s_close")
# PHP Markdown Extra / Pandoc / Python-Markdown (MkDocs): a definition's marker, and an abbreviation's definition
DEFINITION = regex.compile(r":(?:[ \t]+|$)")
ABBREVIATION = regex.compile(r"\*\[[^\]\n]{1,200}\]:[ \t]*")
HTML_BLOCK = regex.compile(r"\s*<[A-Za-z]")                # a block of HTML elements (not a comment, not ours)
CLOSING_TAGS = regex.compile(r"(?:</[A-Za-z][\w:-]*>)*")     # what the parser adds to close a block's open elements
ATTRIBUTE_LIST = regex.compile(r"\{:?[ \t]*(?:[#.][\w-]|[\w-]+=)[^{}\n]{0,2000}\}")     # `{#id .class key=value}`
EXPLICIT_ID = regex.compile(r"\{:?[ \t]*(?:[^{}#\n]*[ \t])?#([\w-]+)")        # `{#start}`, `{: #start .wide}`
GITHUB_REMOVED = regex.compile(r"[^\p{L}\p{M}\p{N}\p{Pc}\- ]")       # github-slugger keeps letters, digits, _ and -
TOC_REMOVED = regex.compile(r"[^\w\s-]")
TOC_JOINED = regex.compile(r"[-\s]+")


def github_anchor(text: str) -> str:
    """The anchor GitHub and GitLab give a heading (github-slugger): lower case, punctuation and symbols dropped,
    each space a hyphen."""
    return GITHUB_REMOVED.sub("", text.lower()).replace(" ", "-")


def toc_anchor(text: str) -> str:
    """The anchor Python-Markdown's `toc` extension (MkDocs) gives a heading: accents dropped, ASCII only,
    punctuation dropped, runs of spaces and hyphens one hyphen."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return TOC_JOINED.sub("-", TOC_REMOVED.sub("", ascii_text).strip().lower())


class HeadingAnchors:
    """Each heading's anchor before and after translation, in both styles, numbered as the renderers number
    repeats (GitHub `-1`, `toc` `_1`); `relink()` points the document's fragment links at the new ones."""

    STYLES = ((github_anchor, "-"), (toc_anchor, "_"))

    def __init__(self, tokens: list[Any]):
        self.headings = [tokens[i + 1] for i, token in enumerate(tokens[:-1])
                         if token.type == "heading_open" and tokens[i + 1].type == "inline"]
        self.before = [self._text(heading) for heading in self.headings]

    @staticmethod
    def _text(inline: Any) -> str | None:
        """A heading's text as a renderer reads it for its anchor, or None where it sets its own id."""
        children = inline.children or []
        if any(child.type == "html_inline" and EXPLICIT_ID.match(child.content) for child in children):
            return None
        return "".join(child.content for child in children if child.type in ("text", "code_inline")).strip()

    @staticmethod
    def _numbered(texts: list[str | None], anchor: Any, joiner: str) -> list[str | None]:
        seen: Counter = Counter()
        out: list[str | None] = []
        for text in texts:
            if text is None:
                out.append(None)
                continue
            base = anchor(text)
            out.append(base if not seen[base] else f"{base}{joiner}{seen[base]}")
            seen[base] += 1
        return out

    def renamed(self) -> dict[str, str]:
        """Old anchor -> new anchor, GitHub's style first (a fragment both styles make is GitHub's)."""
        after = [self._text(heading) for heading in self.headings]
        moved: dict[str, str] = {}
        for anchor, joiner in reversed(self.STYLES):
            old, new = self._numbered(self.before, anchor, joiner), self._numbered(after, anchor, joiner)
            moved.update({a: b for a, b in zip(old, new) if a and b and a != b})
        return moved

    def relink(self, tokens: list[Any], env: dict) -> None:
        """Fragment links of `tokens` (and reference definitions in `env`) to a heading's old anchor, to its new one."""
        moved = self.renamed()
        if not moved:
            return

        def target(href: str) -> str:
            if not href.startswith("#"):
                return href
            fragment = href[1:]
            decoded = urllib.parse.unquote(fragment)       # written percent-encoded (`#caf%C3%A8`): encoded again
            new = moved.get(fragment, moved.get(fragment.lower(), moved.get(decoded, moved.get(decoded.lower()))))
            if new is None:
                return href
            return "#" + (urllib.parse.quote(new, safe="-_.~") if decoded != fragment else new)

        for token in tokens:
            for child in token.children or ():
                if child.type == "link_open" and "href" in (child.attrs or {}):
                    child.attrs["href"] = target(child.attrs["href"])
        pointed: dict[str, tuple[str, str]] = {}
        for label, definition in env.get("references", {}).items():
            if isinstance(definition.get("href"), str):
                before, definition["href"] = definition["href"], target(definition["href"])
                if definition["href"] != before:
                    pointed[label] = (before, definition["href"])
        for token in tokens if pointed else ():       # the definitions, written where and as the source has them
            if token.type == "html_block":
                relinked_definitions(token, pointed)


def _signature(children: list[Any], loose: bool = False) -> Counter:
    """What must survive in an inline's children: every token but text, as its type, markup, attributes and (for
    code, HTML and images) content; `loose`, inline HTML's white space as one space (the text the model reads has
    a paragraph's lines joined, and the renderer drops their indentation: an MDX expression over several lines)."""
    return Counter((child.type, child.markup, tuple(sorted((child.attrs or {}).items())),
                    (" ".join(child.content.split()) if loose and child.type == "html_inline" else child.content)
                    if child.type in SOURCE_KEPT else "")
                   for child in children if child.type not in RUN)


def _read(children: list[Any]) -> list[tuple[Any, ...]]:
    """What an inline's children say: each one's type, attributes and content, its lines' breaks as spaces."""
    return [(child.type if child.type not in RUN else "text", tuple(sorted((child.attrs or {}).items())),
             " ".join(child.content.split()) if child.type in (*RUN, "html_inline") else child.content)
            for child in children]


class InlineSegment(Segment):
    """An inline token (a paragraph's, a heading's or a cell's content) as one segment.

    What gets translated is its text runs: the text and soft breaks between its other tokens, which are kept as
    they are. A run's URLs, e-mail addresses, paths and the like (`protected_spans`) come back verbatim. Beside an
    emphasis delimiter, the spaces and punctuation of the source that touch it are kept, and the spaces and
    punctuation a translation puts there instead are trimmed, so each `*` and `_` has neighbours of the same
    kinds as in the source: it flanks, opens and closes as there, and the emphasis renders the same."""

    def __init__(self, token: Any, text: str, parse_inline: Any, render_inline: Any):
        self.token, self._parse, self._render = token, parse_inline, render_inline
        self.runs: list[list[Any]] = [[]]            # text and soft breaks; runs[i], kept_between[i], runs[i + 1]
        self.kept_between: list[list[Any]] = []      # the other tokens, as they are
        for child in token.children:
            if child.type in RUN:
                if len(self.runs) == len(self.kept_between):
                    self.runs.append([])
                self.runs[-1].append(child)
            else:
                if len(self.kept_between) < len(self.runs):
                    self.kept_between.append([])
                self.kept_between[-1].append(child)
        if len(self.runs) == len(self.kept_between):
            self.runs.append([])
        self._wanted = _signature(token.children)
        self._cut_runs()
        hard = any(child.type == "hardbreak" for child in token.children)
        super().__init__(text, protected=(), accept=lambda translation: False if hard else self.same(translation))

    def _cut_runs(self) -> None:
        """`_pieces`: each run as ["", prefix, text, span, ..., text, suffix, ""], the runs joined by a NUL (for the
        tokens between them, never sent to the model). The spans are the run's verbatim ones; prefix and suffix
        are the spaces and punctuation touching an emphasis delimiter before or after the run (else "")."""
        self._pieces: list[str] = []
        self._slices: list[tuple[int, int]] = []     # each run's pieces in `_pieces`
        self._trim: dict[int, tuple[bool, bool]] = {}         # piece index -> (trim its start, trim its end)
        self._spans: Counter = Counter()
        for index, run in enumerate(self.runs):
            text = "".join(" " if child.type == "softbreak" else child.content for child in run)
            after = index > 0 and self.kept_between[index - 1][-1].type in EMPHASIS
            before = index < len(self.kept_between) and self.kept_between[index][0].type in EMPHASIS
            cut = cut_at(text, protected_spans(text, STRIKETHROUGH))
            self._spans.update(cut[1::2])
            prefix = cut[0][:_edge_length(cut[0])] if after else ""
            cut[0] = cut[0][len(prefix):]
            suffix = cut[-1][len(cut[-1]) - _edge_length(cut[-1], from_end=True):] if before else ""
            cut[-1] = cut[-1][:len(cut[-1]) - len(suffix)]
            if index:
                self._pieces.append("\0")
            start = len(self._pieces)
            self._pieces += ["", prefix, *cut, suffix, ""]
            self._slices.append((start, len(self._pieces)))
            first, last = start + 2, len(self._pieces) - 3
            self._trim[first] = (after, before and first == last)
            if last != first:
                self._trim[last] = (False, before)

    def same(self, translation: str) -> bool:
        """Whether a whole translation parses to the same tokens (text aside) and keeps every verbatim span."""
        children = self._parse(translation)
        if _signature(children) != self._wanted:
            return False
        text = "".join(child.content if child.type == "text" else "\n" for child in children)
        return keeps_spans(text, self._spans)

    def pieces(self) -> list[str]:
        return list(self._pieces)

    def apply(self) -> None:
        if self.whole:
            if self.translation != self.text:
                self.token.children = self._parse(self.translation)
                self.token.meta[TRANSLATED] = True
            return
        self.token.meta[TRANSLATED] = True
        source, children = list(self.token.children), []
        for index, run in enumerate(self.runs):
            if run:
                first = next((child for child in run if child.type == "text"), None)
                if first is not None:                  # a copy: the guard below may give the source back whole
                    first = copy.copy(first)
                    first.content = self._run_translation(index)
                    children.append(first)
                else:
                    children.extend(run)
            if index < len(self.kept_between):
                children.extend(self.kept_between[index])
        self.token.children = children
        if _signature(self._parse(self._render(self.token)), True) != _signature(self._parse(self.text), True):
            self.token.children = source       # a last guard, not met by construction: the source, not broken markup

    def _run_translation(self, index: int) -> str:
        """Run `index` from the translated pieces, with what a translation put against a delimiter trimmed."""
        start, end = self._slices[index]
        out = []
        for position in range(start, end):
            piece, source = self.parts[position], self._pieces[position]
            lead, trail = self._trim.get(position, (False, False))
            if source and (lead or trail):
                if lead:
                    piece = piece[_edge_length(piece):]
                if trail:
                    piece = piece[:len(piece) - _edge_length(piece, from_end=True)]
                piece = piece or source
            out.append(piece)
        return "".join(out)


def _edge_length(text: str, from_end: bool = False) -> int:
    """How many spaces, punctuation marks and symbols `text` starts (or ends) with: what decides, beside an
    emphasis delimiter, whether it opens or closes."""
    count = 0
    for character in (reversed(text) if from_end else text):
        if not (character.isspace() or unicodedata.category(character)[0] in "PS"):
            break
        count += 1
    return count


def _kept_inline(state: Any, silent: bool) -> bool:
    """Inline rule: an extension's span (`INLINE_KEPT`, or a task box where the text starts) as raw HTML is kept."""
    if state.src[state.pos] not in "[{$:@":
        return False
    match = INLINE_KEPT.match(state.src, state.pos, state.posMax)
    if match is None and state.pos == 0:
        match = TASK_MARKER.match(state.src, 0, state.posMax)
    if match is None:
        return False
    kept = match.group(0)
    if kept.startswith("[^") and kept.endswith(":") and state.pos:      # a definition's label starts its text
        kept = kept[:-1]
    if not silent:
        state.push("html_inline", "", 0).content = kept
    state.pos += len(kept)
    return True


def _mdx_inline(state: Any, silent: bool) -> bool:
    """Inline rule (MDX only): a JavaScript expression or a JSX tag (`jsx.JsxCodes`), kept as raw HTML is."""
    if state.src[state.pos] not in "{<":
        return False
    end = jsx_codes(state.src).end(state.pos, state.posMax)
    if end is None:
        return False
    if not silent:
        state.push("html_inline", "", 0).content = state.src[state.pos:end]
    state.pos = end
    return True


def _line(state: Any, line: int) -> str:
    """Line `line` of a block state's source, without its indentation."""
    return state.src[state.bMarks[line] + state.tShift[line]:state.eMarks[line]]


def _math_stop(state: Any, line: int, end: int) -> int:
    """The first line from `line` on, before `end`, that is blank or ends with `$$` (a `$$` block's end), else
    `end`. Remembered for every line passed on the way (keyed by its place and `end`): the rule is asked at every
    line of a paragraph, and each scanned on to the same end (8,000 lines of `$$x`: 18 s)."""
    memo = state.__dict__.setdefault("_math_stops", {})
    passed, stop = [], end
    while line < end:
        key = (state.bMarks[line] + state.tShift[line], state.eMarks[line], end)
        if key in memo:
            stop = memo[key]
            break
        passed.append(key)
        if state.isEmpty(line) or _line(state, line).rstrip().endswith("$$"):
            stop = line
            break
        line += 1
    for key in passed:
        memo[key] = stop
    return stop


def _kept_block(state: Any, start: int, end: int, silent: bool) -> bool:
    """Block rule: a line of Liquid/Jinja/Hugo block tags alone, or a `$$` math block, kept as raw HTML is."""
    if state.sCount[start] - state.blkIndent >= 4:
        return False
    line, last = _line(state, start), start
    if line.startswith("$$"):
        if not (line.rstrip().endswith("$$") and len(line.rstrip()) >= 4):
            last = _math_stop(state, start + 1, end)
            if last >= end or state.isEmpty(last):
                return False
    elif not (line.startswith("{") and TEMPLATE_LINE.fullmatch(line)):
        return False
    if silent:
        return True
    token = state.push("html_block", "", 0)
    token.map, token.content = [start, last + 1], state.getLines(start, last + 1, state.blkIndent, True)
    state.line = last + 1
    return True


def _footnote_definition(state: Any, start: int, end: int, silent: bool) -> bool:
    """Block rule: footnotes' definitions (`[^1]: text`, never link definitions) as GitHub and Pandoc read them,
    those that follow one another one group (written back a line after another where they were): each one's
    label kept as written, its text after it and the lines indented by 4 under it (more paragraphs, a list, code)
    its body, read as Markdown (translated), a paragraph's lazy lines included."""
    if state.sCount[start] - state.blkIndent >= 4 or state.parentType == "footnote" \
            or not FOOTNOTE_DEFINITION.match(_line(state, start)):
        return False                                # (one inside another: text, as GitHub reads it)
    if silent:
        return True
    group = state.push("footnote_group_open", "div", 1)
    line = start
    while True:
        _one_footnote(state, line, end, after_blank=line > start and state.isEmpty(line - 1))
        line = state.line
        if line >= end or state.sCount[line] - state.blkIndent >= 4 \
                or not FOOTNOTE_DEFINITION.match(_line(state, line)):
            break
    group.map = [start, state.line]
    state.push("footnote_group_close", "div", -1)
    return True


def _one_footnote(state: Any, start: int, end: int, after_blank: bool) -> None:
    """One footnote's definition from line `start` (`_footnote_definition`)."""
    head = state.bMarks[start] + state.tShift[start]
    after = head + FOOTNOTE_DEFINITION.match(_line(state, start)).end()       # past the label's colon
    text = after
    while text < state.eMarks[start] and state.src[text] in " \t":
        text += 1
    opening = state.push("footnote_definition_open", "div", 1)
    opening.markup, opening.map, opening.meta = state.src[head:after], [start, start], {"blank before": after_blank}
    saved = (state.bMarks[start], state.tShift[start], state.sCount[start], state.blkIndent, state.parentType)
    state.bMarks[start], state.tShift[start] = after, text - after
    state.blkIndent += 4
    state.sCount[start] = state.blkIndent + (text - after)
    state.parentType = "footnote"
    state.md.block.tokenize(state, start, end)
    state.bMarks[start], state.tShift[start], state.sCount[start], state.blkIndent, state.parentType = saved
    opening.map[1] = state.line
    state.push("footnote_definition_close", "div", -1)


def _render_footnote_group(node: Any, context: Any) -> str:
    """Footnotes' definitions that follow one another: a blank line between two where the source has one."""
    return "".join(("\n\n" if child.meta.get("blank before") else "\n") * (index > 0) + child.render(context)
                   for index, child in enumerate(node.children))


def _render_footnote_definition(node: Any, context: Any) -> str:
    """A footnote's definition: its label as written, its first block after it, the others indented by 4, each
    after a blank line where the source has one (a list right under the first line: else CommonMark, which reads
    no footnotes, would read it as code)."""
    lines = context.env.get(SOURCE_LINES) or []

    with context.indented(4):                           # (a paragraph wrapped as wide: its indentation counts)
        body = "".join(("\n" if blank_before(child, lines) is False else "\n\n") * (index > 0)
                       + child.render(context) for index, child in enumerate(node.children))
    first, *rest = body.split("\n") if body else [""]
    return "\n".join([f"{node.markup} {first}".rstrip(), *("    " + line if line else "" for line in rest)])


def _admonition(state: Any, start: int, end: int, silent: bool) -> bool:
    """Block rule: an admonition (`!!! note "Title"`, kept as written) and its body, the lines indented under it
    (Markdown, translated)."""
    if state.sCount[start] - state.blkIndent >= 4 or not ADMONITION.fullmatch(_line(state, start)):
        return False
    if silent:
        return True
    indent, last = state.sCount[start] + 4, start + 1
    while last < end and (state.isEmpty(last) or state.sCount[last] >= indent):
        last += 1
    while last > start + 1 and state.isEmpty(last - 1):
        last -= 1
    line = _line(state, start).rstrip()
    title = ADMONITION.fullmatch(line).span("title")
    opening = state.push("admonition_open", "div", 1)
    opening.markup, opening.map = line, [start, last]
    if title[1] > title[0] and any(character.isalpha() for character in line[title[0]:title[1]]):
        opening.markup, opening.info = line[:title[0]], line[title[1]:]      # `!!! tip "Title"`: the title is text
        opening.meta = {"title": line[title[0]:title[1]]}
        token = state.push("inline", "", 0)
        token.content, token.map, token.children = line[title[0]:title[1]], [start, start + 1], []
    saved = state.blkIndent, state.parentType, state.lineMax
    state.blkIndent, state.parentType, state.lineMax = indent, "admonition", last
    state.md.block.tokenize(state, start + 1, last)
    state.blkIndent, state.parentType, state.lineMax = saved
    state.push("admonition_close", "div", -1)
    state.line = last
    return True


def _render_admonition(node: Any, context: Any) -> str:
    """An admonition's line as written (its title translated, where the translation fits between its quotes: one
    line, no `"`, not empty), then its body's blocks indented under it."""
    source = node.meta.get("title")
    children = node.children[1:] if source is not None else node.children
    body = "\n\n".join(child.render(context) for child in children)
    line = node.markup
    if source is not None:
        title = node.children[0].render(context)
        line += (title if title.strip() and '"' not in title and "\n" not in title else source) + node.info
    return "\n".join([line, *("    " + line if line else "" for line in body.split("\n") if body)])


def _container(state: Any, start: int, end: int, silent: bool) -> bool:
    """Block rule: a Docusaurus / VitePress container (`:::note Title` ... `:::`): its fence lines kept as written
    but for a title after a space (text, translated), the lines between them Markdown (translated). One left open
    ends where its parent does, as markdown-it-container reads it."""
    match = CONTAINER.fullmatch(_line(state, start))
    if state.sCount[start] - state.blkIndent >= 4 or match is None:
        return False
    if silent:
        return True
    fence, last, closed = len(match.group("fence")), start + 1, False
    while last < end and (state.isEmpty(last) or state.sCount[last] >= state.blkIndent):
        closing = CONTAINER_CLOSE.fullmatch(_line(state, last))
        closed = bool(closing and len(closing.group("fence")) >= fence and state.sCount[last] - state.blkIndent < 4)
        if closed:
            break
        last += 1
    title = match.group("title") or ""
    opening = state.push("container_open", "div", 1)
    opening.markup = _line(state, start)[:match.start("title") if title else None].rstrip()
    opening.map = [start, last + closed]
    opening.info = _line(state, last).rstrip() if closed else ""
    opening.meta = {"before": start + 1 < last and state.isEmpty(start + 1),
                    "after": last - 1 > start and state.isEmpty(last - 1), "title": bool(title)}
    if title:                                       # `:::tip Title`: the title is text, translated
        token = state.push("inline", "", 0)
        token.content, token.map, token.children = title, [start, start + 1], []
    saved = state.parentType, state.lineMax
    state.parentType, state.lineMax = "container", last
    state.md.block.tokenize(state, start + 1, last)
    state.parentType, state.lineMax = saved
    state.push("container_close", "div", -1)
    state.line = last + closed
    return True


def _render_container(node: Any, context: Any) -> str:
    """A container's opening line as written (its title translated), its body's blocks, and its closing line as
    written (where it had one), with a blank line between them where the source had one."""
    children = node.children[1:] if node.meta.get("title") else node.children
    body = "\n\n".join(child.render(context) for child in children)
    out = node.markup + (" " + node.children[0].render(context) if node.meta.get("title") else "")
    if body:
        out += ("\n\n" if node.meta.get("before") else "\n") + body
    if node.info:
        out += ("\n\n" if body and node.meta.get("after") else "\n") + node.info
    return out


def _alert(state: Any, start: int, end: int, silent: bool) -> bool:
    """Block rule: a GitHub alert's marker (`[!NOTE]`), the first line of a block quote, kept as written on a line
    of its own, the quote's other lines Markdown (translated)."""
    if (not state.tokens or state.tokens[-1].type != "blockquote_open" or state.sCount[start] - state.blkIndent >= 4
            or not ALERT.fullmatch(_line(state, start))):
        return False
    if silent:
        return True
    opening = state.push("alert_open", "div", 1)
    opening.markup, opening.map = _line(state, start).rstrip(), [start, end]
    state.md.block.tokenize(state, start + 1, end)
    state.push("alert_close", "div", -1)
    state.line = end
    return True


def _render_alert(node: Any, context: Any) -> str:
    """A GitHub alert's marker, then the quote's blocks from the next line (as GitHub reads an alert)."""
    return "\n".join([node.markup, *(["\n\n".join(child.render(context) for child in node.children)]
                                      if node.children else [])])


def _text_token(state: Any, text: str, line: int) -> None:
    """An inline token of `text` (parsed, and translated, as a paragraph's content is)."""
    token = state.push("inline", "", 0)
    token.content, token.map, token.children = text, [line, line + 1], []


def _abbreviation(state: Any, start: int, end: int, silent: bool) -> bool:
    """Block rule: abbreviations' definitions (`*[HTML]: Hyper Text Markup Language`), one per line, consecutive
    lines one block: each label kept as written, each expansion translated."""
    if state.sCount[start] - state.blkIndent >= 4 or ABBREVIATION.match(_line(state, start)) is None:
        return False
    if silent:
        return True
    line = start
    opening = state.push("abbreviation_open", "div", 1)
    while line < end and state.sCount[line] - state.blkIndent < 4 and (match := ABBREVIATION.match(_line(state, line))):
        label = state.push("abbreviation_label", "", 0)
        label.markup = match.group(0).rstrip()
        expansion = _line(state, line)[match.end():].strip()
        if expansion:
            _text_token(state, expansion, line)
        line += 1
    opening.map = [start, line]
    state.push("abbreviation_close", "div", -1)
    state.line = line
    return True


def _render_abbreviation(node: Any, context: Any) -> str:
    """Each definition on its line: its label as written, then its expansion."""
    lines: list[str] = []
    for child in node.children:
        if child.type == "abbreviation_label":
            lines.append(child.markup)
        else:
            lines[-1] += " " + child.render(context)
    return "\n".join(lines)


def _definition_list(state: Any, start: int, end: int, silent: bool) -> bool:
    """Block rule: a definition list (`Term`, then `: definition` lines, a blank line between them or not): the
    term and each definition translated, each definition's marker (`:`, `:   `) and the blank lines as written; a
    definition's lines, indented below its first, are one text. A definition's further paragraphs (indented,
    after a blank line) end the list (they are read as the Markdown they are)."""
    def definition_at(line: int) -> bool:
        return line < end and state.sCount[line] - state.blkIndent < 4 and DEFINITION.match(_line(state, line))

    term = _line(state, start)
    if state.sCount[start] - state.blkIndent >= 4 or not term.strip() or DEFINITION.match(term):
        return False
    first = start + 2 if start + 1 < end and state.isEmpty(start + 1) else start + 1
    if not definition_at(first):
        return False
    if silent:
        return True
    opening = state.push("definition_list_open", "dl", 1)
    opening.map = [start, end]
    _text_token(state, term.strip(), start)
    line = first
    while definition_at(line):
        marker = DEFINITION.match(_line(state, line)).group(0)
        texts, last = [_line(state, line)[len(marker):].strip()], line + 1
        while (last < end and not state.isEmpty(last) and not definition_at(last)
               and state.sCount[last] > state.blkIndent):
            texts.append(_line(state, last).strip())
            last += 1
        item = state.push("definition_open", "dd", 1)
        item.markup, item.map, item.meta = marker.rstrip() or ":", [line, last], {"blank": state.isEmpty(line - 1)}
        item.info = marker[1:] if marker.strip() else " "
        if any(texts):
            _text_token(state, " ".join(text for text in texts if text), line)
        state.push("definition_close", "dd", -1)
        line = last + 1 if last + 1 < end and state.isEmpty(last) and definition_at(last + 1) else last
    state.push("definition_list_close", "dl", -1)
    state.line = line
    return True


def _render_definition_list(node: Any, context: Any) -> str:
    """The term, then each definition on its own line(s), a blank line before it where the source had one."""
    out = node.children[0].render(context)
    for definition in node.children[1:]:
        text = "".join(child.render(context) for child in definition.children)
        marker = definition.markup + (definition.info + text if text else "")
        out += ("\n\n" if definition.meta.get("blank") else "\n") + marker
    return out


def _mdx_statement(state: Any, start: int, end: int, silent: bool) -> bool:
    """Block rule: MDX's top-level `import` and `export` statements (`MDX_STATEMENT`, each import whole as
    `MDX_IMPORT`), kept as raw HTML is. A statement runs to a blank line, or past it while its brackets are open
    (`export function` with blank lines)."""
    if state.level or state.blkIndent or state.sCount[start] or not MDX_STATEMENT.match(_line(state, start)):
        return False
    paragraph = start
    while paragraph < end and not state.isEmpty(paragraph):
        paragraph += 1
    last, depth = start, 0
    while last < end and last - start < MDX_MAX_LINES and not (depth <= 0 and state.isEmpty(last)):
        line = _line(state, last)
        depth += sum(line.count(opening) - line.count(closing) for opening, closing in ("{}", "()", "[]"))
        last += 1
    if depth > 0 or (last < end and not state.isEmpty(last) and last - start >= MDX_MAX_LINES):
        last = paragraph                            # never closed (within reach): the paragraph alone
    text = state.getLines(start, last, 0, False)
    if not all(MDX_IMPORT.match(text, line.start()) for line in MDX_IMPORT_LINE.finditer(text)):
        return False                                # "import the data from 'x'": prose
    if silent:
        return True
    token = state.push("html_block", "", 0)
    token.map, token.content = [start, last], text
    state.line = last
    return True


def reference_spellings(text: str) -> dict[int, str]:
    """Each character beyond ASCII that `text` writes only as a character reference (`&nbsp;`, `&copy;`,
    `&#8212;`), never as itself, with its first spelling (for `str.translate`): written so again in the output,
    where the parser's text has the character itself (mdformat would write a no-break space as an invisible one)."""
    spellings: dict[int, str] = {}
    for match in ENTITY.finditer(text):               # a character reference, as CommonMark reads one
        character = html.unescape(match.group(0))
        if len(character) == 1 and not character.isascii():
            spellings.setdefault(ord(character), match.group(0))
    present = set(text)                                    # (once: a character tested against the whole text)
    return {code: spelling for code, spelling in spellings.items() if chr(code) not in present}


class _Defined:
    """The labels mdformat escapes brackets for (`[foo]` in text, where `[foo]: /u` is defined): those used, and,
    since every definition is written back (`markdown_layout`), every label defined."""

    def __init__(self, used: set[str], references: dict[str, Any]):
        self.used, self.references = used, references

    def __contains__(self, label: object) -> bool:
        return label in self.used or isinstance(label, str) and " ".join(label.split()) in self.references

    def __iter__(self) -> Any:
        return iter(self.used)

    def add(self, label: str) -> None:
        self.used.add(label)


def _render_text(node: Any, context: Any) -> str:
    """Text as mdformat writes it; in MDX, a brace or `<` escaped (`\\{`: an expression or a tag otherwise, where
    the source wrote `\\{` or `&#123;`); and, while a document is written out, the characters its source wrote only
    as references so again (`SPELLINGS`)."""
    from mdformat.renderer import DEFAULT_RENDERERS

    used = context.env["used_refs"]                   # every label defined, not only those used: all are written
    context.env["used_refs"] = _Defined(used, context.env.get("references", {}))
    try:
        text = DEFAULT_RENDERERS["text"](node, context)
    finally:
        context.env["used_refs"] = used
    if context.env.get("mdx"):
        text = mdx_escaped(text)
    spellings = context.env.get(SPELLINGS)
    if not spellings or not any(ord(character) in spellings for character in text):
        return text
    return "".join(spellings.get(ord(character), character) if not (
        text[at - 1:at] in ("*", "_") or text[at + 1:at + 2] in ("*", "_")) else character
        for at, character in enumerate(text))           # (beside `*` or `_`: as it is, `;` would let it emphasize)


@functools.cache
def _tables(plugin: Any) -> Any:
    """mdformat-tables' plugin, its tables written as the source writes them where they can be
    (`markdown_layout.table`)."""
    return type("Tables", (), {"RENDERERS": {**plugin.RENDERERS, "table": table(plugin.RENDERERS["table"])},
                               "POSTPROCESSORS": dict(getattr(plugin, "POSTPROCESSORS", {}))})


class Extensions:
    """The renderer's side of the extensions the parser reads (`with_extensions`): mdformat's plugin interface."""
    RENDERERS = {"admonition": _render_admonition, "container": _render_container, "alert": _render_alert,
                 "abbreviation": _render_abbreviation, "definition_list": _render_definition_list,
                 "footnote_group": _render_footnote_group, "footnote_definition": _render_footnote_definition,
                 **renderers(), "text": _render_text}
    POSTPROCESSORS: dict = {}


def with_extensions(md: Any, mdx: bool = False) -> Any:
    """`md` (a MarkdownIt) reading the extensions this module keeps (`INLINE_KEPT`, `_kept_block`, footnote
    definitions, admonitions and content tabs, Docusaurus containers, GitHub alerts, MDX statements; with `mdx`,
    MDX's expressions and JSX tags too)."""
    md.inline.ruler.before("text", "kept_extension", _kept_inline)
    if mdx:
        md.inline.ruler.before("kept_extension", "mdx_inline", _mdx_inline)
    interrupts = {"alt": ["paragraph", "reference", "blockquote", "list"]}
    md.block.ruler.before("fence", "kept_extension", _kept_block, interrupts)
    md.block.ruler.before("reference", "footnote_definition", _footnote_definition,
                          {"alt": ["paragraph", "reference"]})       # (it ends a paragraph, as GitHub reads it)
    md.block.ruler.before("fence", "admonition", _admonition)
    md.block.ruler.before("fence", "container", _container)
    md.block.ruler.before("fence", "alert", _alert)
    md.block.ruler.before("fence", "mdx_statement", _mdx_statement)
    md.block.ruler.before("reference", "abbreviation", _abbreviation)
    md.block.ruler.before("paragraph", "definition_list", _definition_list)
    md.inline.ruler2.at("fragments_join", _fragments_join)
    return keep_written(md)


def _fragments_join(state: Any) -> None:
    """markdown-it's `fragments_join`, in linear time: each run of adjacent text tokens (what emphasis delimiters
    that pair with none leave) becomes its last token, its content joined once, and every token's level is set
    again. markdown-it-py 3.0 adds each token's content to the run so far: a paragraph of 40,000 unpaired `*` and
    `_` (120 KB) took 12 s, and a megabyte of them would take a quarter of an hour."""
    tokens, kept, pieces, level = state.tokens, [], [], 0
    for index, token in enumerate(tokens):
        level -= token.nesting < 0
        token.level = level
        level += token.nesting > 0
        if token.type == "text" and index + 1 < len(tokens) and tokens[index + 1].type == "text":
            pieces.append(token.content)
            continue
        if pieces:
            token.content = "".join([*pieces, token.content])
            pieces = []
        kept.append(token)
    tokens[:] = kept


class MarkdownDocument(FollowsDirection):
    """A Markdown file: `segments`, and `render()` its bytes."""
    MDX = False

    def __init__(self, data: bytes, name: str = "document", direction: Direction | None = None):
        self.direction = direction
        markdown_it = require("markdown_it", "documents")
        plugins = require("mdformat.plugins", "documents")
        self._renderer = require("mdformat.renderer", "documents").MDRenderer()
        self._encoded = Encoded(data, name)
        text = self._encoded.text
        match = FRONT_MATTER.match(text)
        self._front = FrontMatter(match.group(0) if match else "")
        self._newline = "\r\n" if "\r\n" in text else "\n"
        options = {"maxNesting": MAX_NESTING, "store_labels": True}
        self._md = with_extensions(markdown_it.MarkdownIt("commonmark", options).enable("table"), self.MDX)
        self._env: dict = {"mdx": True} if self.MDX else {}   # reference-link definitions, shared by parse and
        #                                                         render, and whether text is MDX's
        self._options = {"parser_extension": [_tables(plugins.PARSER_EXTENSIONS["tables"]), Extensions],
                         "mdformat": {}}
        body = text[len(self._front.text):]
        self._gap = BLANK_LINES.match(body).group(0)         # (the renderer drops blank lines before the first block)
        self._tokens = self._md.parse(body.replace("\r\n", "\n"), self._env)
        self._env[SOURCE_LINES] = body.replace("\r\n", "\n").split("\n")     # (the layout's renderers read them)
        self._spellings = reference_spellings(body)
        self._inline: list[InlineSegment] = []
        self._anchors = HeadingAnchors(self._tokens)
        self._ends: list[tuple[Any, list[Any]]] = []        # a heading's attribute list, put back at its end
        for before, token in zip([None, *self._tokens], self._tokens):
            if token.type != "inline" or not token.children:
                continue
            if before is not None and before.type == "heading_open":
                self._detach_attributes(token)
            if not token.children:
                continue
            source = self._renderer.render([token], self._options, self._env, finalize=False).replace("\n", " ")
            self._inline.append(InlineSegment(token, source, self._reparse, self._render_inline))
        self._html = [] if self.MDX else [found for found in map(_html_block, self._tokens) if found is not None]
        self._jsx = [found for found in map(self._jsx_block, self._tokens) if found is not None] if self.MDX else []
        self._tags: dict[str, JsxTag] = {}           # each JSX start tag with a text attribute, by its text
        for tag in self._jsx_tags() if self.MDX else ():
            if tag not in self._tags and (read := JsxTag(tag)).segments:
                self._tags[tag] = read
        self.segments: list[Segment] = [*self._front.segments, *self._inline,
                                         *(segment for _, html, _ in self._html for segment in html.segments),
                                         *(segment for _, paragraphs in self._jsx for _, segment in paragraphs),
                                         *(segment for tag in self._tags.values() for segment in tag.segments)]

    def _jsx_tags(self) -> Any:
        """Each JSX start tag's text: in a paragraph's, a heading's or a cell's text, and in a block of JSX."""
        for token in self._tokens:
            if token.type == "html_block" and HTML_BLOCK.match(token.content):
                yield from (token.content[start:end] for start, end in jsx_start_tags(token.content))
            elif token.type == "inline":
                yield from (child.content for child in token.children or () if child.type == "html_inline"
                            and child.content.startswith("<") and not child.content.startswith("</"))

    def _translate_tags(self) -> None:
        """Each JSX start tag with a text attribute (`alt`, `title`, `label`) written with its translation."""
        for token in self._tokens:
            if token.type == "html_block" and HTML_BLOCK.match(token.content):
                pieces, at = [], 0
                for start, end in jsx_start_tags(token.content):
                    tag = self._tags.get(token.content[start:end])
                    if tag is not None:
                        pieces += [token.content[at:start], tag.written()]
                        at = end
                token.content = "".join([*pieces, token.content[at:]])
            elif token.type == "inline":
                for child in token.children or ():
                    if child.type == "html_inline" and child.content in self._tags:
                        child.content = self._tags[child.content].written()

    def _jsx_block(self, token: Any) -> tuple[Any, list[tuple[Paragraph, InlineSegment]]] | None:
        """An MDX block of JSX read as raw HTML (`jsx.jsx_paragraphs`): (its token, each paragraph of text in it as an
        inline segment, read as a paragraph's text is), where it has one that renders back as written."""
        if token.type != "html_block" or not HTML_BLOCK.match(token.content):    # not an import, an export
            return None
        found = []
        for paragraph in jsx_paragraphs(token.content):
            text = token.content[paragraph.start:paragraph.end]
            parsed = self._md.parseInline(text, dict(self._env))
            if not parsed or not parsed[0].children:
                continue
            inline = parsed[0]
            source = self._render_inline(inline)
            if _read(self._reparse(source)) != _read(inline.children):    # the renderer would change what it says
                continue                                # (`&amp;` written `&`, `_a_` as `*a*`: what it says, kept)
            found.append((paragraph, InlineSegment(inline, source.replace("\n", " "), self._reparse,
                                                   self._render_inline)))
        return (token, found) if found else None

    def _detach_attributes(self, heading: Any) -> None:
        """A heading's trailing attribute list (`## Setup {#setup .wide}`), which Python-Markdown, Pandoc and
        kramdown read only at its end: taken out of what the model reads, and put back at the end (`render`)."""
        children = heading.children
        last = children[-1]
        if last.type != "html_inline" or not ATTRIBUTE_LIST.fullmatch(last.content):
            return
        end = [last]
        children.pop()
        if children and children[-1].type == "text" and children[-1].content.endswith((" ", "\t")):
            space = copy.copy(children[-1])
            stripped = space.content.rstrip(" \t")
            space.content = space.content[len(stripped):]
            children[-1].content = stripped
            if not stripped:
                children.pop()
            end.insert(0, space)
        self._ends.append((heading, end))

    def _reparse(self, text: str) -> list[Any]:
        parsed = self._md.parseInline(text, dict(self._env))
        return parsed[0].children if parsed and parsed[0].children is not None else []

    def _render_inline(self, token: Any) -> str:
        return self._renderer.render([token], self._options, self._env, finalize=False)

    def render(self) -> bytes:
        self._env[SPELLINGS] = self._spellings            # the output only: the model reads the characters
        try:
            return self._render()
        finally:
            del self._env[SPELLINGS]

    def _render(self) -> bytes:
        for segment in self._inline:
            segment.apply()
        for token, block, closing in self._html:
            written = block.render()
            if written.endswith(closing):
                token.content = written[:len(written) - len(closing)]
        for token, paragraphs in self._jsx:
            pieces, at = [], 0
            for paragraph, segment in paragraphs:
                if segment.translation in (None, segment.text):
                    continue                            # kept as written, its lines too
                segment.apply()
                for child in segment.token.children:   # a line break left between runs: a space (its line's
                    if child.type == "softbreak":       # indentation would be lost); a tag's own lines as written
                        child.type, child.content = "text", " "
                pieces += [token.content[at:paragraph.start], self._render_inline(segment.token)]
                at = paragraph.end
            token.content = "".join([*pieces, token.content[at:]])
        if self._tags:
            self._translate_tags()
        for heading, end in self._ends:
            if not heading.children or heading.children[-1] is not end[-1]:
                heading.children = [*heading.children, *end]
        self._anchors.relink(self._tokens, self._env)
        body = self._renderer.render(self._tokens, self._options, self._env, finalize=False)
        body += "\n" if body else ""                    # (not finalized: no definitions gathered at the end)
        if self._newline != "\n":
            body = body.replace("\n", self._newline)
        return self._encoded.encode(self._front.render(self.output_direction) + self._gap + body)


def _html_block(token: Any) -> tuple[Any, HtmlText, str] | None:
    """A block of HTML (`<p align="center">A fast tool.</p>`, `<details><summary>More</summary>`, an image's
    `alt`), as READMEs open: (its token, its text for the model as an HTML page's is read, the end tags the
    parser adds to close what the block leaves open), where the parser writes the block back exactly as it is
    (else None: it is kept as written, as before)."""
    if token.type != "html_block" or not HTML_BLOCK.match(token.content):
        return None
    try:
        html = HtmlText(token.content)
    except ValueError:
        return None
    if not html.segments:
        return None
    written = html.render()
    closing = written[len(token.content):]
    if not written.startswith(token.content) or not CLOSING_TAGS.fullmatch(closing):
        return None
    return token, html, closing


class MdxDocument(MarkdownDocument):
    """An MDX file (Docusaurus, Next.js): Markdown with JavaScript expressions and JSX tags, which are kept."""
    MDX = True
