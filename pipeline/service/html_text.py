"""HTML in, HTML out: the text nodes to translate, and the document rebuilt around their translations.

BeautifulSoup with the standard library's `html.parser` backend (BeautifulSoup is what LibreTranslate's
own HTML path uses): maintained, lenient with broken markup, and no compiled dependency. Tags,
attributes (in their order) and comments come back as they were, void elements as `<br>`; entities
come back as characters, except `&`, `<`, `>` and no-break spaces, which stay escaped. Text inside
<script>, <style>, <code>, <pre>, <textarea> and comments, attribute values, and text without a
letter (`© 2024`) are not translated. Each text node is translated as one unit, so a sentence cut
by inline markup (`I <b>love</b> you`) is translated in pieces.
"""
from __future__ import annotations

import warnings
from typing import Sequence

from pipeline.extras import require

UNTRANSLATED = frozenset({"script", "style", "code", "pre", "textarea", "template"})


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\xa0", "&nbsp;")


def _formatter(bs4):
    class KeepOrder(bs4.formatter.HTMLFormatter):
        def attributes(self, tag):            # BeautifulSoup sorts them by default
            return list(tag.attrs.items())
    return KeepOrder(entity_substitution=_escape, void_element_close_prefix="")


class HtmlText:
    """`HtmlText(markup).texts` are the text nodes to translate (stripped); `render(translations)`
    is the markup with each node replaced by its translation, the node's surrounding spaces kept.
    ValueError for markup the parser rejects."""

    def __init__(self, markup: str):
        bs4 = require("bs4", "serve")
        self._formatter = _formatter(bs4)
        try:
            with warnings.catch_warnings():   # a client's text that looks like a URL or XML is not our warning
                warnings.simplefilter("ignore", bs4.MarkupResemblesLocatorWarning)
                warnings.simplefilter("ignore", bs4.XMLParsedAsHTMLWarning)
                self._soup = bs4.BeautifulSoup(markup, "html.parser")
        except bs4.ParserRejectedMarkup as exc:
            raise ValueError(f"cannot parse the HTML: {exc}") from None
        self._nodes = [node for node in self._soup.find_all(string=True)
                       if type(node) is bs4.NavigableString                      # not comments, doctypes
                       and any(character.isalpha() for character in node)
                       and not any(parent.name in UNTRANSLATED for parent in node.parents)]
        self.texts = [node.strip() for node in self._nodes]

    def render(self, translations: Sequence[str]) -> str:
        if len(translations) != len(self._nodes):
            raise ValueError(f"{len(self._nodes)} text nodes, got {len(translations)} translations")
        for node, translation in zip(self._nodes, translations):
            leading, trailing = node[:len(node) - len(node.lstrip())], node[len(node.rstrip()):]
            node.replace_with(leading + translation + trailing)
        return self._soup.decode(formatter=self._formatter)
