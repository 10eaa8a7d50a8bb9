"""A round-trip checker: judges a translated document against its original with the tools of the format's own
ecosystem, and compares what must survive (URLs, tags, placeholders, cues, runs, zip entries), so that any loss
is a named problem. Independent of `pipeline.documents`: its own parsers and its own patterns.

    problems(name, original_bytes, translated_bytes) -> ["talk.srt: cue 3: tags ['<i>'] became []", ...]

Used by tests/test_real_files.py over tests/data/real/ (see its README).
"""
from __future__ import annotations

import io
import re
import subprocess
import tempfile
import zipfile
from collections import Counter
from pathlib import Path
from typing import Callable
from urllib.parse import unquote

from pipeline.documents.front_matter import PROSE_KEYS
from pipeline.documents.markdown import github_anchor

URL = re.compile(r"(?:https?|ftp)://[^\s<>\"'`)\]]+[^\s<>\"'`)\].,;:!?]|www\.[\w-]+(?:\.[\w-]+)+(?:/[^\s<>\"'`)\]]*[^\s<>\"'`)\].,;:!?])?")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
TAG = re.compile(r"</?[A-Za-z][^<>\n]*>|\{\\[^{}\n]*\}")
PRINTF = re.compile(r"%(?:\([\w.]+\)|[0-9]+\$)?[-+#0 ]*(?:[0-9]+|\*)?(?:\.(?:[0-9]+|\*))?(?:hh|h|ll|l|L|q|j|z|t)?"
                    r"[diouxXeEfFgGcrsab%]|\{[\w.]*\}")
TRANSLATED_ATTRIBUTES = {"alt", "title", "placeholder", "aria-label", "aria-placeholder", "aria-description",
                         "aria-roledescription", "aria-valuetext", "label", "abbr"}
BUTTON_TYPES = {"submit", "button", "reset"}                  # an <input> whose `value` is its visible label
META_PROSE = {"description", "keywords", "og:title", "og:description", "og:image:alt", "twitter:title",
              "twitter:description", "twitter:image:alt", "name", "og:locale", "content-language"}


def changeable(tag: str, attributes: dict) -> set[str]:
    """The attributes of an element that a translation may change (`tag` without its namespace)."""
    lowered = {key.lower(): value.strip().lower() for key, value in attributes.items()}
    if tag == "input" and lowered.get("type") in BUTTON_TYPES:
        return TRANSLATED_ATTRIBUTES | {"value"}
    if tag == "meta" and {lowered.get(key) for key in ("name", "property", "itemprop", "http-equiv")} & META_PROSE:
        return TRANSLATED_ATTRIBUTES | {"content"}
    if tag == "html":                                    # the page's language names the translation's
        return TRANSLATED_ATTRIBUTES | {"lang", "xml:lang", "{http://www.w3.org/XML/1998/namespace}lang"}
    return TRANSLATED_ATTRIBUTES


def reverse_words(texts: list[str]) -> list[str]:
    """The stand-in engine: each text's words in reverse order (spaces inside a tag or a URL split it, so a span
    that a format left to the model comes back broken, and the format must have protected it)."""
    return [" ".join(reversed(text.split(" "))) for text in texts]


def spans(text: str, *patterns: re.Pattern) -> Counter:
    return Counter(match.group(0) for pattern in patterns for match in pattern.finditer(text or ""))


def _differ(where: str, what: str, before: Counter, after: Counter) -> list[str]:
    if before == after:
        return []
    return [f"{where}: {what} {sorted((before - after).elements())} lost, {sorted((after - before).elements())} added"]


# -- gettext ------------------------------------------------------------------------------------------------------
def gettext_problems(name: str, original: bytes, translated: bytes) -> list[str]:
    import polib

    problems = []
    with tempfile.NamedTemporaryFile(suffix=".po") as out:
        out.write(translated)
        out.flush()
        checked = subprocess.run(["msgfmt", "-c", "-o", "/dev/null", out.name], capture_output=True, text=True)
        if checked.returncode:
            problems.append(f"{name}: msgfmt -c: {checked.stderr.strip().splitlines()[-1]}")
        before, after = polib.pofile(original.decode("utf-8")), polib.pofile(translated.decode("utf-8"))
    pairs = list(zip([e for e in before if not e.obsolete], [e for e in after if not e.obsolete]))
    if len(pairs) != len([e for e in before if not e.obsolete]) or len(before) != len(after):
        problems.append(f"{name}: {len(before)} entries became {len(after)}")
    for old, new in pairs:
        where = f"{name}: msgid {old.msgid[:40]!r}"
        if (old.msgid, old.msgctxt, old.msgid_plural) != (new.msgid, new.msgctxt, new.msgid_plural):
            problems.append(f"{where}: its msgid, context or plural changed")
            continue
        forms = list(new.msgstr_plural.values()) if new.msgid_plural else [new.msgstr]
        sources = [old.msgid, old.msgid_plural] if new.msgid_plural else [old.msgid]
        for index, form in enumerate(forms):
            if not form:
                continue
            source = sources[min(index, len(sources) - 1)]
            problems += _differ(where, "URLs, e-mails and tags", spans(source, URL, EMAIL, TAG),
                                spans(form, URL, EMAIL, TAG))
            problems += _differ(where, "placeholders", spans(source, PRINTF), spans(form, PRINTF))
    return problems


# -- HTML and XHTML -------------------------------------------------------------------------------------------------
def html_problems(name: str, original: bytes, translated: bytes) -> list[str]:
    from lxml import etree

    try:
        before = etree.fromstring(original)
    except etree.XMLSyntaxError:
        return _soup_problems(name, original, translated)
    try:
        after = etree.fromstring(translated)
    except etree.XMLSyntaxError as exc:
        return [f"{name}: well-formed XML came back malformed: {exc}"]
    problems = []
    if original.startswith(b"<?xml") and translated.split(b"?>")[0] != original.split(b"?>")[0]:
        problems.append(f"{name}: the XML declaration changed")
    def element(e) -> tuple:
        changing = changeable(etree.QName(e).localname if isinstance(e.tag, str) else "", dict(e.attrib))
        return (tuple(str(a.tag) for a in e.iterancestors()), str(e.tag),
                frozenset((k, v) for k, v in e.attrib.items() if k not in changing))

    found = [Counter(element(e) for e in tree.iter()) for tree in (before, after)]
    return problems + _element_problems(name, *found)


def _element_problems(name: str, old: Counter, new: Counter) -> list[str]:
    """Elements as (their ancestors' tags, tag, attributes a translation may not change): an inline element may move
    within its parent (to where its words land in the sentence), none may appear, vanish or change."""
    if old == new:
        return []
    lost, added = old - new, new - old
    return [f"{name}: the elements changed: {sum(lost.values())} lost or changed ({sorted(lost)[:3]}), "
            f"{sum(added.values())} added ({sorted(added)[:3]})"]


def _soup_problems(name: str, original: bytes, translated: bytes) -> list[str]:
    from bs4 import BeautifulSoup

    found = []
    for data in (original, translated):
        tags = BeautifulSoup(data, "html.parser").find_all(True)
        found.append(Counter((tuple(parent.name for parent in tag.parents), tag.name,
                              frozenset((k, str(v)) for k, v in tag.attrs.items() if k not in changeable(
                                  tag.name, {k: v for k, v in tag.attrs.items() if isinstance(v, str)})))
                             for tag in tags))
    return _element_problems(name, *found)


# -- subtitles ------------------------------------------------------------------------------------------------------
def srt_problems(name: str, original: bytes, translated: bytes, encoding: str) -> list[str]:
    import srt

    before = list(srt.parse(original.decode(encoding)))
    after = list(srt.parse(translated.decode(encoding)))
    if len(before) != len(after):
        return [f"{name}: {len(before)} cues became {len(after)}"]
    problems = []
    for number, (a, b) in enumerate(zip(before, after), 1):
        if (a.index, a.start, a.end, a.proprietary) != (b.index, b.start, b.end, b.proprietary):
            problems.append(f"{name}: cue {number}: its number, timing or position changed")
        problems += _differ(f"{name}: cue {number}", "tags and URLs", spans(a.content, TAG, URL),
                            spans(b.content, TAG, URL))
        if any(len(line) > 42 and " " in line and not TAG.search(line) and not line.lstrip().startswith(("-", "–"))
               for line in b.content.splitlines()):                       # a dialogue line is one speaker's
            problems.append(f"{name}: cue {number}: a line over 42 characters that could wrap")
    return problems


def vtt_problems(name: str, original: bytes, translated: bytes) -> list[str]:
    import webvtt

    before, after = (webvtt.from_string(data.decode("utf-8-sig")) for data in (original, translated))
    if len(before.captions) != len(after.captions):
        return [f"{name}: {len(before.captions)} cues became {len(after.captions)}"]
    problems = []
    for number, (a, b) in enumerate(zip(before.captions, after.captions), 1):
        if (a.identifier, a.start, a.end) != (b.identifier, b.start, b.end):
            problems.append(f"{name}: cue {number}: its identifier or timing changed")
        problems += _differ(f"{name}: cue {number}", "tags and URLs", spans(a.raw_text, TAG, URL),
                            spans(b.raw_text, TAG, URL))
    for block in ("STYLE", "REGION", "NOTE"):
        if original.count(block.encode()) != translated.count(block.encode()):
            problems.append(f"{name}: a {block} block was lost")
    return problems


def _front_data(block: str) -> object:
    """A YAML front matter's data, its shown values (`PROSE_KEYS`) left out."""
    import yaml

    data = yaml.safe_load(block.strip().strip("-")) if block else None
    return {key: value for key, value in data.items() if key not in PROSE_KEYS} if isinstance(data, dict) else data


def _without_prose(block: str) -> str:
    """A front matter's lines but those of its shown values (`PROSE_KEYS`): the rest comes back byte for byte."""
    return "\n".join(line for line in block.split("\n") if line.split(":", 1)[0] not in PROSE_KEYS)


# -- Markdown ---------------------------------------------------------------------------------------------------------
def markdown_problems(name: str, original: bytes, translated: bytes) -> list[str]:
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark").enable("table").enable("strikethrough")
    front = re.compile(r"\A---\n.*?\n---\n", re.S)
    problems = []
    before_text, after_text = original.decode("utf-8"), translated.decode("utf-8")
    fronts = [(front.match(text) or [""])[0] for text in (before_text, after_text)]
    if [_front_data(block) for block in fronts] != [_front_data(fronts[0])] * 2 or \
            [_without_prose(block) for block in fronts] != [_without_prose(fronts[0])] * 2:
        problems.append(f"{name}: the front matter changed but for the values a site shows (PROSE_KEYS)")
    before_text, after_text = front.sub("", before_text), front.sub("", after_text)
    old, new = parser.parse(before_text), parser.parse(after_text)
    if [t.type for t in old] != [t.type for t in new]:
        return problems + [f"{name}: the block structure changed ({len(old)} tokens became {len(new)})"]
    headings = [_heading_anchors(tokens) for tokens in (old, new)]
    for a, b in zip(old, new):
        if a.type in ("fence", "code_block") and a.content != b.content:
            problems.append(f"{name}: a {a.type} changed")
        if a.type == "html_block" and a.content != b.content:      # its text may be translated, its tags not
            problems += _soup_problems(f"{name}: line {a.map[0] + 1 if a.map else '?'}: HTML", a.content.encode(),
                                       b.content.encode())
        if a.type != "inline":
            continue
        kept = [lambda c, _: (c.type, c.content) if c.type in ("code_inline", "html_inline") else None,
                lambda c, anchors: (c.type, _link_target(c.attrGet("href"), anchors)) if c.type == "link_open" else None,
                lambda c, _: (c.type, c.attrGet("src")) if c.type == "image" else None,
                lambda c, _: c.type if c.type in ("strong_open", "em_open", "s_open") else None]
        for key in kept:
            was = Counter(k for k in (key(c, headings[0]) for c in a.children or []) if k)
            now = Counter(k for k in (key(c, headings[1]) for c in b.children or []) if k)
            problems += _differ(f"{name}: line {a.map[0] + 1 if a.map else '?'}", "inline markup", was, now)
        texts = lambda token: " ".join(c.content for c in token.children or [] if c.type == "text")   # noqa: E731
        problems += _differ(f"{name}: line {a.map[0] + 1 if a.map else '?'}", "bare URLs", spans(texts(a), URL),
                            spans(texts(b), URL))
    return problems


def _heading_anchors(tokens: list) -> list[str]:
    """The GitHub anchors of a parsed document's headings, in order (a repeat numbered `-1`, `-2`)."""
    seen: Counter = Counter()
    anchors = []
    for token, after in zip(tokens, tokens[1:]):
        if token.type == "heading_open":
            base = github_anchor("".join(c.content for c in after.children or [] if c.type in ("text", "code_inline")))
            anchors.append(base if not seen[base] else f"{base}-{seen[base]}")
            seen[base] += 1
    return anchors


def _link_target(href: str | None, anchors: list[str]) -> str | tuple | None:
    """A link's target, where a link to a heading is to that heading (its anchor follows the heading's text; the
    parser percent-encodes a link's letters with marks, `#non-è` as `#non-%C3%A8`, as a browser sends it)."""
    fragment = unquote(href[1:]) if href and href.startswith("#") else None
    if fragment is not None and fragment in anchors:
        return ("heading", anchors.index(fragment))
    return href


# -- office ------------------------------------------------------------------------------------------------------------
def _zip_names(data: bytes) -> list[str]:
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        return sorted(package.namelist())


def _zip_problems(name: str, original: bytes, translated: bytes) -> list[str]:
    """An office package must keep every entry: the ones lost or added, named."""
    before, after = set(_zip_names(original)), set(_zip_names(translated))
    return [] if before == after else [f"{name}: zip entries changed ({sorted(before ^ after)})"]


def docx_problems(name: str, original: bytes, translated: bytes) -> list[str]:
    import docx

    problems = _zip_problems(name, original, translated)
    old, new = docx.Document(io.BytesIO(original)), docx.Document(io.BytesIO(translated))
    count = lambda d, test: sum(test(r) for p in d.paragraphs for r in p.runs)   # noqa: E731
    for what, test in (("bold runs", lambda r: bool(r.bold)), ("italic runs", lambda r: bool(r.italic))):
        if count(old, test) > count(new, test):
            problems.append(f"{name}: {what} {count(old, test)} became {count(new, test)}")
    if (len(old.paragraphs), len(old.tables)) != (len(new.paragraphs), len(new.tables)):
        problems.append(f"{name}: paragraphs or tables changed in number")
    return problems


def pptx_problems(name: str, original: bytes, translated: bytes) -> list[str]:
    import pptx

    problems = _zip_problems(name, original, translated)
    old, new = pptx.Presentation(io.BytesIO(original)), pptx.Presentation(io.BytesIO(translated))

    def charts(deck):
        found = []
        for slide in deck.slides:
            for shape in slide.shapes:
                if shape.has_chart:
                    chart = shape.chart
                    found.append((len(chart.plots[0].categories), [len(s.values) for s in chart.series]))
        return found
    if charts(old) != charts(new):
        problems.append(f"{name}: the charts' categories or series changed")
    if len(old.slides) != len(new.slides):
        problems.append(f"{name}: {len(old.slides)} slides became {len(new.slides)}")
    return problems


def odt_problems(name: str, original: bytes, translated: bytes) -> list[str]:
    from odf import opendocument, text

    problems = _zip_problems(name, original, translated)
    old, new = (opendocument.load(io.BytesIO(data)) for data in (original, translated))
    for element, what in ((text.P, "paragraphs"), (text.H, "headings"), (text.Span, "spans"), (text.Tab, "tabs")):
        a, b = len(old.getElementsByType(element)), len(new.getElementsByType(element))
        if a != b:
            problems.append(f"{name}: {what} {a} became {b}")
    for toc_old, toc_new in zip(old.getElementsByType(text.TableOfContent), new.getElementsByType(text.TableOfContent)):
        page = lambda p: str(p).rsplit("\t", 1)[-1] if "\t" in str(p) else None    # noqa: E731
        if [page(p) for p in toc_old.getElementsByType(text.P)] != [page(p) for p in toc_new.getElementsByType(text.P)]:
            problems.append(f"{name}: table-of-contents page numbers changed")
    return problems


def text_problems(name: str, original: bytes, translated: bytes) -> list[str]:
    before, after = original.decode("utf-8-sig"), translated.decode("utf-8-sig")
    problems = []
    if [not line.strip() for line in before.splitlines()] != [not line.strip() for line in after.splitlines()]:
        problems.append(f"{name}: the blank lines moved")
    return problems + _differ(name, "URLs and e-mails", spans(before, URL, EMAIL), spans(after, URL, EMAIL))


CHECKERS: dict[str, Callable[[str, bytes, bytes], list[str]]] = {
    ".po": gettext_problems, ".pot": gettext_problems, ".html": html_problems, ".htm": html_problems,
    ".vtt": vtt_problems, ".md": markdown_problems, ".docx": docx_problems, ".pptx": pptx_problems,
    ".odt": odt_problems, ".odp": odt_problems, ".txt": text_problems, ".mdx": markdown_problems,
    ".xhtml": html_problems}


def problems(name: str, original: bytes, translated: bytes, encoding: str = "utf-8") -> list[str]:
    """Everything `translated` lost or broke of `original`, judged by `name`'s extension; [] when nothing."""
    suffix = Path(name).suffix.lower()
    if suffix == ".srt":
        return srt_problems(name, original, translated, encoding)
    return CHECKERS[suffix](name, original, translated)
