"""Markdown (`.md`): parsed by `markdown-it-py` (CommonMark, with tables) and written back by `mdformat`'s
renderer (the formatter built on it), both well kept.

What survives exactly: front matter (a leading `---` YAML or `+++` TOML block), reference-link definitions, fenced and indented code blocks, inline code, link
and image targets and titles, autolinks, inline and block HTML; the structure of headings, lists, block quotes,
tables and emphasis. Each paragraph, heading or table cell is one text for the model, its markup included: the
translation is parsed again and kept only if it has the same code spans, links, images, emphasis and HTML;
else the text between them is translated piece by piece (`segments`). Layout is mdformat's: list markers,
heading style and a paragraph's line breaks are normalized (a paragraph comes back on one line), which
changes nothing a Markdown renderer shows.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

import regex

from pipeline.documents.encoding import Encoded
from pipeline.documents.segments import Segment
from pipeline.extras import require

FRONT_MATTER = regex.compile(r"\A(?:\ufeff)?(?:---[ \t]*\r?\n(?:.*?\r?\n)??(?:---|\.\.\.)|\+\+\+[ \t]*\r?\n(?:.*?\r?\n)??\+\+\+)"
                            r"[ \t]*(?:\r?\n|\Z)", regex.S)
MAX_NESTING = 200           # markdown-it's commonmark preset drops what is nested deeper than 20
RUN = ("text", "softbreak")
SOURCE_KEPT = ("code_inline", "html_inline", "image")


def _signature(children: list[Any]) -> Counter:
    """What must survive in an inline's children: every token but text, as its type, markup, attributes and (for
    code, HTML and images) content."""
    return Counter((child.type, child.markup, tuple(sorted((child.attrs or {}).items())),
                    child.content if child.type in SOURCE_KEPT else "")
                   for child in children if child.type not in RUN)


class InlineSegment(Segment):
    """An inline token (a paragraph's, a heading's or a cell's content) as one segment."""

    def __init__(self, token: Any, text: str, parse_inline: Any):
        self.token, self._parse = token, parse_inline
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
        hard = any(child.type == "hardbreak" for child in token.children)
        super().__init__(text, protected=(), accept=lambda translation: False if hard else self.same(translation))

    def same(self, translation: str) -> bool:
        return _signature(self._parse(translation)) == self._wanted

    def pieces(self) -> list[str]:
        out = []
        for index, run in enumerate(self.runs):
            out.append("".join(" " if child.type == "softbreak" else child.content for child in run))
            if index < len(self.kept_between):
                out.append("\0")          # stands for the tokens between runs; never sent to the model
        return out

    def apply(self) -> None:
        if self.whole:
            if self.translation != self.text:
                self.token.children = self._parse(self.translation)
            return
        children = []
        for index, run in enumerate(self.runs):
            if run:
                first = next((child for child in run if child.type == "text"), None)
                if first is not None:
                    first.content = self.parts[2 * index]
                    children.append(first)
                else:
                    children.extend(run)
            if index < len(self.kept_between):
                children.extend(self.kept_between[index])
        self.token.children = children


class MarkdownDocument:
    """A Markdown file: `segments`, and `render()` its bytes."""

    def __init__(self, data: bytes, name: str = "document"):
        markdown_it = require("markdown_it", "documents")
        plugins = require("mdformat.plugins", "documents")
        self._renderer = require("mdformat.renderer", "documents").MDRenderer()
        self._encoded = Encoded(data, name)
        text = self._encoded.text
        match = FRONT_MATTER.match(text)
        self._front = match.group(0) if match else ""
        self._newline = "\r\n" if "\r\n" in text else "\n"
        self._md = markdown_it.MarkdownIt("commonmark", {"maxNesting": MAX_NESTING, "store_labels": True}).enable("table")
        self._env: dict = {}                        # reference-link definitions, shared by parse and render
        self._options = {"parser_extension": [plugins.PARSER_EXTENSIONS["tables"]], "mdformat": {}}
        self._tokens = self._md.parse(text[len(self._front):].replace("\r\n", "\n"), self._env)
        self.segments: list[InlineSegment] = []
        for token in self._tokens:
            if token.type != "inline" or not token.children:
                continue
            source = self._renderer.render([token], self._options, self._env, finalize=False).replace("\n", " ")
            self.segments.append(InlineSegment(token, source, self._reparse))

    def _reparse(self, text: str) -> list[Any]:
        parsed = self._md.parseInline(text, dict(self._env))
        return parsed[0].children if parsed and parsed[0].children is not None else []

    def render(self) -> bytes:
        for segment in self.segments:
            segment.apply()
        body = self._renderer.render(self._tokens, self._options, self._env)
        if self._newline != "\n":
            body = body.replace("\n", self._newline)
        return self._encoded.encode(self._front + body)
