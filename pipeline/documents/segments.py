"""The one path from a document's segments to the engine and back, shared by every format.

A format reader cuts a document into `Segment`s. Each is translated whole first, in one large batch for the
whole document; where a segment holds spans that must come back verbatim (a subtitle's `<i>` tag, a gettext
placeholder `%(count)d`, a Markdown code span or link), a whole translation that lost or changed one is
refused, and the text between the spans is translated piece by piece instead (a second batch), with the spans
put back between the pieces in their order. So the spans survive by construction, and most segments still
read as whole sentences.

Pure text: no model here. `translate_segments` takes any `translate(texts) -> texts` callable.
"""
from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import regex

from pipeline.text import free_numbers
from pipeline.translate.splitting import translate_between, with_spacing

Translate = Callable[[list[str]], list[str]]


@dataclass
class Segment:
    """One unit of a document for the model.

    `text`: what the model reads. `protected`: spans of `text` that must come back verbatim (in `text`'s order);
    `accept(translation)` decides whether a whole translation kept them (default: each occurs in it as often as
    in `text`). When it did not, `translation` is built from the pieces of `text` between the spans.
    `numbered`: the model reads each span as a number instead (`70`, `71`, ...: numbers none of the text holds),
    which models copy far more reliably than `%(count)d` or `{0}`; each number must come back once, and is
    replaced by its span again.
    After `translate_segments`, `translation` holds the result and `whole` whether it came from one pass; when
    it did not, `parts` holds `pieces()` with the text ones translated.
    """
    text: str
    protected: Sequence[str] = ()
    accept: Callable[[str], bool] | None = None
    numbered: bool = False
    translation: str | None = field(default=None, init=False)
    whole: bool = field(default=True, init=False)
    parts: list[str] | None = field(default=None, init=False)

    def pieces(self) -> list[str]:
        """`text` cut at its protected spans: text, span, text, span, ..., text (even indices are text)."""
        return cut_at(self.text, self.protected)

    def stand_ins(self) -> list[str] | None:
        """One number per run of protected spans (`<b>%s</b>`: three spans side by side, one number, as numbers
        side by side would read as one: `707172`), none of which occurs in `text`, given to the run's first span
        ("" to the others), when `numbered` and no span touches a letter or digit (`70%%` would read as one
        number); else None."""
        if not (self.numbered and self.protected):
            return None
        pieces = self.pieces()
        for index in range(1, len(pieces), 2):
            before, after = pieces[index - 1][-1:], pieces[index + 1][:1]
            if before.isalnum() or after.isalnum():
                return None
        free = free_numbers(self.text)
        return ["" if index > 1 and not pieces[index - 1] else next(free) for index in range(1, len(pieces), 2)]

    def first_text(self) -> str:
        """What the model reads first: `text`, with numbers for its spans where `stand_ins` gives them."""
        numbers = self.stand_ins()
        if numbers is None:
            return self.text
        out = self.pieces()
        for index, number in enumerate(numbers):
            out[2 * index + 1] = number
        return "".join(out)

    def restored(self, output: str) -> str | None:
        """A first-pass output with its spans back, or None where a number was lost or repeated."""
        numbers = self.stand_ins()
        if numbers is None:
            return output
        spans: dict[str, str] = {}                          # each number -> its run of spans
        last = ""
        for number, span in zip(numbers, self.protected):
            last = number or last
            spans[last] = spans.get(last, "") + span
        found = Counter(run for run in DIGITS.findall(output) if run in spans)   # (each digit run read once)
        if len(found) != len(spans) or any(count != 1 for count in found.values()):
            return None
        return DIGITS.sub(lambda run: spans.get(run.group(0), run.group(0)), output)

    def kept(self, translation: str) -> bool:
        if self.accept is not None:
            return self.accept(translation)
        return keeps_spans(translation, Counter(self.protected))


def cut_at(text: str, spans: Sequence[str]) -> list[str]:
    """`text` cut at `spans`, found in order, each after the one before: [text, span, text, ..., span, text] (even
    indices are text), in one pass by position (not the rest copied at each span: its square)."""
    out, position = [], 0
    for span in spans:
        found = text.find(span, position)
        if found < 0:
            raise ValueError(f"protected span {span!r} is not in the segment's text (in order)")
        out += [text[position:found], span]
        position = found + len(span)
    return out + [text[position:]]


def keeps_spans(text: str, wanted: Counter) -> bool:
    """Whether `text` holds each of `wanted`'s spans at least as often as it counts them (`span_counts`)."""
    found = span_counts(text, wanted)
    return all(found[span] >= count for span, count in wanted.items())


def span_counts(text: str, spans: Iterable[str]) -> Counter:
    """How often each of `spans` occurs in `text`, as `str.count` counts (from the left, never overlapping
    itself), in one pass over `text` however many they are (pyahocorasick's automaton, a maintained C
    implementation): counted one by one, thousands of a paragraph's spans cost their number times its length."""
    distinct = set(spans) - {""}
    if len(distinct) <= 16:
        return Counter({span: text.count(span) for span in distinct})
    import ahocorasick
    automaton = ahocorasick.Automaton()
    for span in distinct:
        automaton.add_word(span, span)
    automaton.make_automaton()
    counts: Counter = Counter()
    free: dict[str, int] = {}                               # where each span may next start
    for end, span in automaton.iter(text):
        if end - len(span) + 1 >= free.get(span, 0):
            counts[span] += 1
            free[span] = end + 1
    return counts


def _checked(texts: list[str], translate: Translate) -> list[str]:
    outputs = list(translate(texts)) if texts else []
    if len(outputs) != len(texts):
        raise ValueError(f"translate gave {len(outputs)} outputs for {len(texts)} texts")
    return outputs


LETTER = regex.compile(r"\p{L}")
DIGITS = regex.compile(r"[0-9]+")                  # a run of ASCII digits: a stand-in number, whole


def translate_segments(segments: Sequence[Segment], translate: Translate) -> None:
    """Fill each segment's `translation`: a whole pass over every segment with a letter, then one pass over the
    pieces of those whose whole translation lost a protected span. Others (numbers, symbols and punctuation alone:
    a table cell `12%`, a page number, a year, which a model given nothing to translate fills with words; or
    whose letters are all in protected spans: a URL, a tag, an MDX expression alone) are copied as they are, as
    HTML's texts without a letter always were."""
    todo = [segment for segment in segments
            if LETTER.search(segment.text) and LETTER.search("".join(segment.pieces()[::2]))]
    for segment in segments:
        segment.translation, segment.whole = segment.text, True
    firsts = [segment.first_text() for segment in todo]
    edges = [symbol_edges(first) for first in firsts]
    outputs = _checked([first[len(head):len(first) - len(tail)].strip()
                        for first, (head, tail) in zip(firsts, edges)], translate)
    retry = []
    for segment, first, output, (head, tail) in zip(todo, firsts, outputs, edges):
        if head or tail:                        # the symbols back, with the spaces that part them from the text
            output = head.lstrip() + output.strip() + tail.rstrip()
        restored = segment.restored(output)
        translation = None if restored is None else with_spacing(first, restored)
        if translation is None or not segment.kept(translation):
            retry.append(segment)
        else:
            segment.translation = translation
    if not retry:
        return
    cuts = translate_between([segment.pieces() for segment in retry], lambda texts: _checked(texts, translate))
    for segment, out in zip(retry, cuts):
        segment.translation, segment.whole, segment.parts = "".join(out), False, out


# What no translation may change, in any format that carries it: URLs, e-mail addresses, inline HTML/XML tags,
# character entities, file paths (absolute, home- or dot-relative, Windows drive paths), symbols, and templates'
# tags (Jinja, Django, Liquid, Twig, Handlebars, Angular and Vue: `{{ user.name }}`, `{% if admin %}`, `{# note #}`).
URL = (r"(?:(?:https?|ftp|file)://|www\.)[^\s<>\"'`]*[^\s<>\"'`.,;:!?)\]}*_]")
EMAIL = r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+"
HTML_TAG = r"</?[A-Za-z][\w:.-]*(?:\s[^<>]{0,2000})?/?>"      # (one space first: no two ways to read spaces)
ENTITY = r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});"
PATH = (r"(?<![\w/.~\\-])(?:~|\.{1,2})?/(?:[\w.+@-]+/)*[\w.+@-]*[\w+@-]"
        r"|(?<![\w\\])[A-Za-z]:\\(?:[\w.-]+\\)*[\w.-]+")
# Symbols a model whose vocabulary lacks them drops: © ™ ♪ ❤️ 🚀 (with their modifiers), arrows (`File → Open`),
# keycaps (1️⃣ #️⃣)
SYMBOL = r"(?:(?=[\p{So}\u2190-\u21ff\u27f0-\u27ff\u2900-\u297f])\X|[0-9#*]\ufe0f?\u20e3)+"
TEMPLATE = (r"\{\{\{(?:(?!\{\{|\}\}).){1,200}\}\}\}|\{\{(?:(?!\{\{|\}\}).){1,200}\}\}"    # (`{{{ raw }}}`: Handlebars')
            r"|\{%(?:(?!\{%|%\}).){1,200}%\}|\{#(?:(?!\{#|#\}).){1,200}#\}")    # never across another tag's opening
VERBATIM = regex.compile("|".join(f"(?:{pattern})" for pattern in (URL, EMAIL, HTML_TAG, ENTITY, PATH, SYMBOL,
                                                                    TEMPLATE)))
LEADING_SYMBOLS = regex.compile(rf"\s*(?:{SYMBOL}\s*)+")
TRAILING_SYMBOLS = regex.compile(rf"(?:\G|(?<!\s))(?:\s*+{SYMBOL})++\s*+")   # runs of them, for `run_at_end`


def run_at_end(runs: regex.Pattern, text: str, pos: int = 0) -> regex.Match | None:
    """The match of `runs` that ends `text` (None: none does), searched from `pos` left to right in linear time.
    `runs` matches a run of what an edge holds (tags, symbols) and may not start just after a space
    (`(?<!\\s)`), so that neither a long run of tags nor one of spaces is read again from each of its positions.
    (A `$`-anchored search is quadratic in them, and regex's REVERSE search reads `\\X` as one code point: `👍🏽`
    would be no symbol.)"""
    last = None
    for last in runs.finditer(text, pos):
        pass
    return last if last is not None and last.end() == len(text) else None


def symbol_edges(text: str) -> tuple[str, str]:
    """The symbols (and spaces) `text` opens and ends with (`🚀 Fast start`, `Never gonna give you up ♪`), where a
    word lies between them: never given to the model, which would drop or misplace them, and put back around its
    translation."""
    head = LEADING_SYMBOLS.match(text)
    tail = run_at_end(TRAILING_SYMBOLS, text, head.end() if head else 0)
    head_text, tail_text = head.group(0) if head else "", tail.group(0) if tail else ""
    if not LETTER.search(text[len(head_text):len(text) - len(tail_text)]):
        return "", ""
    return head_text, tail_text


def protected_spans(text: str, pattern: regex.Pattern | Sequence[regex.Pattern] | None = None,
                    verbatim: bool = True) -> list[str]:
    """The spans of `text` a translation must keep, in order (a segment's `protected`): the matches of `pattern`
    and (`verbatim`) of `VERBATIM` (URLs, e-mail addresses, inline tags, entities, file paths), the leftmost
    first, the longer of two that start together, never overlapping. Several patterns for `pattern` are read as
    their alternation (`a|b|c`: the first one's match where two start together): a message part's own codes are
    one small pattern, not compiled again with the large shared ones (3 ms for each of thousands of parts)."""
    group = [pattern] if isinstance(pattern, regex.Pattern) else list(pattern or [])
    patterns = [*group, *([VERBATIM] if verbatim else [])]
    upcoming = [_next_match(p, text, 0) for p in patterns]        # each pattern's next match, searched once
    spans, position = [], 0
    while True:
        for index, match in enumerate(upcoming):
            if match is not None and match.start() < position:
                upcoming[index] = _next_match(patterns[index], text, position)
        firsts = [(match.start(), index) for index, match in enumerate(upcoming[:len(group)]) if match is not None]
        found = [upcoming[min(firsts)[1]]] if firsts else []
        found += [match for match in upcoming[len(group):] if match is not None]
        if not found:
            break
        match = min(found, key=lambda m: (m.start(), -m.end()))
        spans.append(match.group(0))
        position = match.end()
    return spans


def _next_match(pattern: regex.Pattern, text: str, position: int) -> regex.Match | None:
    """`pattern`'s first non-empty match in `text` from `position`."""
    for match in pattern.finditer(text, position):
        if match.end() > match.start():
            return match
    return None


MAX_NESTING = 32           # groups within groups in `literal_alternation`'s trie; deeper, its words listed


def literal_alternation(words: Iterable[str]) -> str:
    """A pattern that matches, at a place, the longest of `words` found there, as their alternation longest first
    does (`(?!)` for none; an empty word is none), written as their trie: `@:k(?:1|2)`. A message's inline codes
    are thousands in a hostile file, and an alternation tries each of them at every place; the trie tries a
    character. Where the trie nests deeper than `MAX_NESTING` (words that are each other's prefixes), a branch
    lists its words' ends. Built and written without recursion, in time linear in the words' length."""
    root: dict[str, dict] = {}
    for word in set(words) - {""}:
        node = root
        for character in word:
            node = node.setdefault(character, {})
        node[""] = {}                                        # a word ends here
    if not root:
        return "(?!)"
    depths: dict[int, int] = {}                              # how deep each node's groups nest
    listed: set[int] = set()                                 # nodes written as a list of their words' ends
    stack: list[tuple[dict, bool]] = [(root, False)]
    while stack:                                             # children before their parent
        node, ready = stack.pop()
        children = [child for key, child in node.items() if key]
        if not ready:
            stack += [(node, True), *((child, False) for child in children)]
            continue
        deepest = max((depths.pop(id(child)) for child in children), default=0)
        depth = 0 if not children else deepest if len(children) == 1 and "" not in node else deepest + 1
        if depth > MAX_NESTING:
            listed.add(id(node))
            depth = 1
        depths[id(node)] = depth
    out: list[str] = []
    todo: list[dict | str] = [root]                          # nodes to write, and text to write as it is
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        branches = sorted((key, child) for key, child in item.items() if key)
        if not branches:
            continue
        if id(item) in listed:
            out.append("(?:" + "|".join(map(regex.escape, sorted(_ends(item), key=len, reverse=True))) + ")")
        elif len(branches) == 1 and "" not in item:
            todo += [branches[0][1], regex.escape(branches[0][0])]
        else:
            todo.append(")?" if "" in item else ")")
            for index, (key, child) in enumerate(reversed(branches)):
                todo += (["|"] if index else []) + [child, regex.escape(key)]
            todo.append("(?:")
    return "".join(out)


def literal_pattern(words: Iterable[str]) -> regex.Pattern:
    """`literal_alternation(words)` compiled, once for each set of words (a message part asks for its codes'
    several times)."""
    return _compiled_literals(frozenset(words))


@functools.lru_cache(maxsize=256)
def _compiled_literals(words: frozenset[str]) -> regex.Pattern:
    return regex.compile(literal_alternation(words))


def _ends(node: dict) -> list[str]:
    """The ends of the words below a trie's node (`""`: one ends at it), each joined once."""
    ends, path = [""] if "" in node else [], []
    stack = [iter([key for key in node if key])]
    frames = [node]
    while stack:
        key = next(stack[-1], None)
        if key is None:
            stack.pop()
            frames.pop()
            if path:
                path.pop()
            continue
        child = frames[-1][key]
        path.append(key)
        if "" in child:
            ends.append("".join(path))
        stack.append(iter([key for key in child if key]))
        frames.append(child)
    return ends


# A word for line breaking: a run of characters other than spaces, where a tag (`<font color="red">`, `<v John
# Smith>`, `{\\an8}`) is one unbreakable piece, spaces and all, that takes no width on the screen.
WRAP_TAG = regex.compile(r"<[^\s<>][^<>\n]{0,2000}>|\{\\[^{}\n]{0,2000}\}")
WRAP_WORD = regex.compile(rf"(?:{WRAP_TAG.pattern}|[^\s])+")


def wrap_balanced(text: str, width: int, max_lines: int = 2) -> list[str]:
    """`text` on lines of at most `width` characters where it can be: one line if it fits, else `max_lines`
    lines of about equal length cut at spaces (as subtitles want), else as many lines of `width` as it takes.
    A line is never cut inside a tag (`<font color="red">`, `<v John Smith>`, `{\\an8}`), and tags take no width:
    a line's width is what a viewer sees."""
    words = WRAP_WORD.findall(text)
    sizes = [len(word) - sum(len(tag) for tag in WRAP_TAG.findall(word)) for word in words]
    total = sum(sizes) + max(len(words) - 1, 0)

    def wrapped(target: int) -> list[list]:
        lines: list[list] = []                               # greedy: each line's words and its width
        for word, size in zip(words, sizes):
            if lines and lines[-1][1] + 1 + size <= target:
                lines[-1][0].append(word)
                lines[-1][1] += 1 + size
            else:
                lines.append([[word], size])
        return lines

    def joined(lines: list[list]) -> list[str]:
        return [" ".join(line) for line, _ in lines] or [""]

    if total <= width:
        return [" ".join(words)]
    for count in range(2, max_lines + 1):
        target = -(-total // count)
        lines = wrapped(target)
        while len(lines) > count and target < width:
            target += 1
            lines = wrapped(target)
        if len(lines) <= count and all(size <= width for _, size in lines):
            return joined(lines)
    return joined(wrapped(width))
