"""Glossaries: a user's term list (source -> target language) read from TSV, CSV or TBX, and found in source text.

A `Glossary` maps source terms (one or several words) to their target form, in a run's direction (English ->
Italian unless the run translates Italian -> English). An entry whose target equals its source
(`Pipeline -> Pipeline`) is a do-not-translate term: names, code and brands that must come out verbatim.

Formats (`Glossary.load(path, direction=...)`, chosen by the file's extension):
- `.tsv` / `.txt`: `source<TAB>target` per line; blank lines and lines starting with `#` are skipped.
- `.csv`: two columns, read by the standard library's `csv` module (quoting, embedded commas).
- `.tbx`: TermBase eXchange, parsed by lxml (TBX 2008 `<martif>`, TBX v3 / ISO 30042:2019 `<tbx>`, TBX-Min `<TBX>`,
  in the encoding its XML declaration names); each entry's language sets of the source and target languages
  (`en*`, `it*`) give its terms (every source term of an entry maps to its first target term).
A first row naming the columns (`en/it`, `english/italian`, `source/target`, `term/translation`) is a header; a
header naming the languages the other way round (`it/en` for an English -> Italian run, `en/it` for an Italian ->
English one) or the roles the other way round (`target/source`) swaps the columns.
Bad files are one-line `GlossaryError`s naming the file, the line and the reason: not UTF-8, a wrong column
count, an empty side, one source term with two different target ones.

Matching (`Glossary.find(text)`): every occurrence of every term, with one Aho-Corasick automaton over all terms
(pyahocorasick: a maintained C implementation, linear in the text whatever the number of terms), kept only at
word boundaries ("car" does not match "scar" or "cargo"; a term's edge that is not a letter or digit, as in
"C++", needs no boundary there). Overlapping matches are resolved longest first, then leftmost. Matching ignores
case unless the glossary is case-sensitive; offsets always refer to the text as given.
"""
from __future__ import annotations

import csv
import io
import os
import re
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any, Iterable, Mapping, Union

from pipeline.extras import require, safe_xml_parser
from pipeline.language import Direction, language_name
from pipeline.text import clean_side, free_numbers, gate_text

EXTRA = "glossary"
HEADERS = frozenset({("en", "it"), ("english", "italian"), ("source", "target"), ("term", "translation"),
                     ("src", "tgt"), ("eng", "ita")})
HEADER_LANGUAGES = {"en": "en", "english": "en", "eng": "en", "it": "it", "italian": "it", "ita": "it"}
HEADER_ROLES = {"source": "source", "src": "source", "term": "source", "target": "target", "tgt": "target",
                "translation": "target"}
MAX_TERM_CHARS = 500
CONTROL = re.compile(r"[\x00-\x08\x0e-\x1b\x7f-\x9f]")     # control characters that are not whitespace


GlossaryLike = Union["Glossary", Mapping[str, str], str, os.PathLike, None]


class GlossaryError(ValueError):
    """A glossary that cannot be used: the message names the file, the line and the reason."""


@dataclass(frozen=True)
class Term:
    source: str         # the source-language term (cleaned: NFC, single spaces)
    target: str         # its target-language form
    where: str          # "file line N" (or "entry N"), for messages

    @property
    def keep(self) -> bool:
        """A do-not-translate term: its target is its source."""
        return self.source == self.target


@dataclass(frozen=True)
class Match:
    start: int          # offsets into the text given to `find`
    end: int
    term: Term


def fold(text: str) -> str:
    """Lower case, one character for one, so that offsets in the folded text are offsets in the text."""
    return "".join(lowered if len(lowered := character.lower()) == 1 else character for character in text)


def is_word_character(character: str) -> bool:
    return character.isalnum() or character == "_"


def find_words(words: str, text: str) -> re.Match | None:
    """The first occurrence of `words` in `text` as whole words, ignoring case (offsets valid in `text`)."""
    return re.search(rf"(?<!\w){re.escape(fold(words))}(?!\w)", fold(text))


class Glossary:
    """Source terms -> target terms, matched at word boundaries (case-insensitive unless `case_sensitive`)."""

    def __init__(self, entries: Mapping[str, str] | Iterable[tuple[str, str]], case_sensitive: bool = False,
                 name: str = "glossary", direction: Direction = Direction()):
        pairs = entries.items() if isinstance(entries, Mapping) else entries
        rows = []
        for number, pair in enumerate(pairs, 1):
            if not isinstance(pair, tuple) or len(pair) != 2 or not all(isinstance(side, str) for side in pair):
                raise GlossaryError(f"{name} entry {number}: expected a (source, target) pair of strings")
            rows.append((f"{name} entry {number}", pair[0], pair[1]))
        self._fill(rows, case_sensitive, name, direction)

    def _fill(self, rows: Iterable[tuple[str, str, str]], case_sensitive: bool, name: str,
              direction: Direction) -> None:
        """The terms of (where, source, target) rows, and the automaton over them."""
        self.name, self.case_sensitive, self.direction = name, case_sensitive, direction
        self.terms: dict[str, Term] = {}                 # matching key -> term
        for where, source, target in rows:
            self._add(source, target, where)
        self._automaton = self._build()

    # -- reading ---------------------------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | os.PathLike, case_sensitive: bool = False,
             direction: Direction = Direction()) -> "Glossary":
        """Read a `.tsv`/`.txt`, `.csv` or `.tbx` glossary (see the module docstring) for a run translating
        `direction` (English -> Italian by default)."""
        path = Path(path)
        if path.is_dir():
            raise GlossaryError(f"glossary {path}: is a directory, expected a .tsv, .csv or .tbx file")
        if not path.is_file():
            raise GlossaryError(f"glossary {path}: not found")
        suffix = path.suffix.lower()
        if suffix == ".tbx":
            rows = read_tbx(path, direction)
        elif suffix in (".tsv", ".txt", ".csv"):
            rows = read_delimited(path, "," if suffix == ".csv" else "\t", direction)
        else:
            raise GlossaryError(f"glossary {path}: unknown extension {path.suffix!r}; expected .tsv, .csv or .tbx")
        glossary = cls.__new__(cls)
        glossary._fill(rows, case_sensitive, str(path), direction)
        if not glossary.terms:                   # a file that asks nothing is a mistake (a TBX of other languages)
            pair = " and ".join(language_name(code) for code in direction)
            raise GlossaryError(f"glossary {path}: no entries" + (f" with terms in both {pair}" if suffix == ".tbx"
                                                                  else ""))
        return glossary

    @classmethod
    def coerce(cls, glossary: GlossaryLike, direction: Direction = Direction()) -> "Glossary | None":
        """A `Glossary` from what the Python API accepts: a Glossary, a dict {source: target}, a path (read for
        `direction`), or None."""
        if glossary is None or isinstance(glossary, Glossary):
            return glossary
        if isinstance(glossary, Mapping):
            return cls(glossary, name="glossary dict", direction=direction)
        if isinstance(glossary, (str, os.PathLike)):
            return cls.load(glossary, direction=direction)
        raise TypeError(f"glossary: expected a Glossary, a dict or a path, got {type(glossary).__name__}")

    def _add(self, source: str, target: str, where: str) -> None:
        source, target = clean_side(gate_text(source)), clean_side(gate_text(target))
        source_side, target_side = (language_name(code) for code in self.direction)
        for side, text in ((source_side, source), (target_side, target)):
            if not text:
                raise GlossaryError(f"{where}: empty {side} side")
            if len(text) > MAX_TERM_CHARS:
                raise GlossaryError(f"{where}: {side} side over {MAX_TERM_CHARS} characters")
            control = CONTROL.search(text)
            if control:           # a NUL or an escape would be written into every translation that uses the term
                raise GlossaryError(f"{where}: {side} side holds the control character U+{ord(control.group()):04X}")
        key = source if self.case_sensitive else fold(source)
        known = self.terms.get(key)
        if known is not None:
            if known.target != target:
                raise GlossaryError(f"{where}: {source!r} is already {known.target!r} ({known.where}), "
                                    f"not {target!r}")
            return
        self.terms[key] = Term(source, target, where)

    def _build(self):
        import ahocorasick
        automaton = ahocorasick.Automaton()
        for key, term in self.terms.items():
            automaton.add_word(key, (len(key), term))
        if self.terms:
            automaton.make_automaton()
        return automaton

    # -- matching --------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.terms)

    def find(self, text: str) -> list[Match]:
        """The terms in `text`, at word boundaries, without overlaps (longest first, then leftmost), in order."""
        if not self.terms or not text:
            return []
        haystack = text if self.case_sensitive else fold(text)
        found = []
        for last, (length, term) in self._automaton.iter(haystack):
            start, end = last - length + 1, last + 1
            if (start > 0 and is_word_character(term.source[0]) and is_word_character(text[start - 1])) or \
                    (end < len(text) and is_word_character(term.source[-1]) and is_word_character(text[end])):
                continue
            found.append(Match(start, end, term))
        found.sort(key=lambda match: (match.start - match.end, match.start))
        taken: list[Match] = []
        used = bytearray(len(text))              # the characters a taken match covers (per match: each taken one's
        for match in found:                      # bounds compared cost the square of a text's matches)
            if used.find(1, match.start, match.end) < 0:
                taken.append(match)
                used[match.start:match.end] = b"\x01" * (match.end - match.start)
        return sorted(taken, key=lambda match: match.start)

    # -- applying it: terms written into the sentence before translation, restored after ---------------------
    def mask(self, sentence: str, style: str = "annotate") -> "Masked":
        """`sentence` as the model should read it, with each matched term annotated or replaced (see `STYLES`),
        and what `unmask` needs afterwards. A sentence without a match is returned unchanged."""
        if style not in STYLES:
            raise ValueError(f"glossary style {style!r}: expected one of {', '.join(STYLES)}")
        matches = self.find(clean_side(sentence))
        if not matches:
            return Masked(sentence, (), style)          # byte for byte what the model reads without a glossary
        sentence = clean_side(sentence)                 # as the engines clean it: the offsets refer to this
        if style in ("annotate", "replace"):
            text = annotate(sentence, [(m.start, m.end, m.term.target, style == "annotate") for m in matches])
            return Masked(text, tuple((m.term.target, m.term) for m in matches), style)
        out, slots, last = [], [], 0
        numbers = free_numbers(sentence)
        for match in matches:
            stand_in = match.term.target if style == "target" else next(numbers)
            out += [sentence[last:match.start], stand_in]
            slots.append((stand_in, match.term))
            last = match.end
        out.append(sentence[last:])
        return Masked("".join(out), tuple(slots), style)


def unmask(translation: str, masked: "Masked") -> str:
    """The translation with the glossary's terms as it writes them.

    `annotate` and `replace`: markers the model echoed are removed, and a term the model wrote in another case gets
    the glossary's ("IPHONE" -> "iPhone"), except a capital that starts a sentence (a do-not-translate term keeps
    its case even there). `target` and `placeholder`: each stand-in is replaced by its term's Italian, exactly as
    the glossary writes it: the first whole-word occurrence, ignoring case. Then a do-not-translate term the model
    copied nearly but not exactly ("űkasz" for "Łukasz": the vocabulary lacks some of its characters) is put back
    verbatim (`near_miss`). A term the model dropped cannot be placed and is left out (bench/bench_glossary.py
    measures how often)."""
    if masked.style in ("annotate", "replace"):
        translation = strip_markers(translation)
        for stand_in, term in masked.slots:
            found = find_words(term.target, translation)
            if found is None or translation[found.start():found.end()] == term.target:
                continue
            starts_sentence = re.search(r"(^|[.!?:]\s+)[\W_]*$", translation[:found.start()]) is not None
            if not term.keep and starts_sentence and \
                    translation[found.start():found.end()] == term.target[:1].upper() + term.target[1:]:
                continue
            translation = translation[:found.start()] + term.target + translation[found.end():]
    else:                  # every stand-in found in the model's output first, then all put in at once (a term's
        spans = []         # Italian that is a number, `71`, would read as a later stand-in: terms swapped)
        for stand_in, term in masked.slots:
            found = find_words(stand_in, translation)
            if found:
                spans.append((found.start(), found.end(), term.target))
        out, last = [], 0
        for start, end, target in sorted(spans):
            if start >= last:                  # (a `target` stand-in twice: its one occurrence, once)
                out += [translation[last:start], target]
                last = end
        translation = "".join(out) + translation[last:]
    repairs = 0
    for stand_in, term in masked.slots:
        if term.keep and term.target not in translation and repairs < MAX_NEAR_MISSES:
            repairs += 1                    # (each looks at every run of words: a few per text, never hundreds)
            span = near_miss(translation, term.target)
            if span is not None:
                translation = translation[:span[0]] + term.target + translation[span[1]:]
    return translation


MAX_NEAR_MISSES = 16   # kept terms looked for as near copies in one translation
NEAR_MISS = 0.6        # the least similarity (difflib's ratio, ignoring case) of a near copy of a kept term


def near_miss(text: str, term: str) -> tuple[int, int] | None:
    """The (start, end) of the run of words in `text` most like `term` (as many words as it has, or one more or
    less, without edge punctuation the term lacks), if at least `NEAR_MISS` alike, else None."""
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    size = len(term.split())
    matcher = SequenceMatcher(None, "", fold(term))        # the term indexed once, not once per run
    best, span = NEAR_MISS - 1e-9, None           # the first of equally good runs
    for count in sorted({max(1, size - 1), size, size + 1}):
        for first in range(len(words) - count + 1):
            start, end = words[first][0], words[first + count - 1][1]
            while end > start and not text[end - 1].isalnum() and not term.endswith(text[end - 1]):
                end -= 1
            while start < end and not text[start].isalnum() and not term.startswith(text[start]):
                start += 1
            if end <= start:
                continue
            matcher.set_seq1(fold(text[start:end]))     # difflib's cheap upper bounds first: most runs end there
            if matcher.real_quick_ratio() > best and matcher.quick_ratio() > best:
                ratio = matcher.ratio()
                if ratio > best:
                    best, span = ratio, (start, end)
    return span


def lacks_verbatim(translation: str, terms: Iterable[str]) -> bool:
    """Whether `translation` holds each of `terms` (do-not-translate terms: a term listed twice, twice) fewer times
    than asked, exactly as written, as whole words."""
    return any(len(re.findall(rf"(?<!\w){re.escape(term)}(?!\w)", translation)) < count
               for term, count in Counter(terms).items())


def terms_missing(translation: str, masked: "Masked") -> int:
    """How many of the terms of `masked` its translation lacks (their Italian as whole words, in any case)."""
    return sum(find_words(term.target, translation) is None for _, term in masked.slots)


# How a matched term reaches the model:
# - "annotate" (Dinu et al. 2019): the Italian is written after the English term, `car ‹ automobile ›`, for a model
#   trained to carry it over (prepare's `data.term_annotation`, pipeline/terms.py); it sees the whole sentence and
#   can make the words around the term agree ("the red car" -> "l'automobile rossa").
# - "target": the English term is replaced by its Italian, for the model to copy (no training needed).
# - "placeholder": a number the sentence does not hold (70, 71, ...: `text.free_numbers`), which the model copies and
#   which is restored afterwards (the model never sees the term). On the validation term sets, with a stand-in run,
#   numbers survived where `Term0` names did not: 47.1% against 2.2% term use on plain, 45.5% against 0.3% on hard.
# - "replace": the marked Italian in place of the English term, `the red ‹ automobile ›`, for the same models.
# A run trained with annotations uses "annotate"; any other uses "placeholder" (`default_style`).
STYLES = ("annotate", "replace", "target", "placeholder")
OPEN, CLOSE = "\u2039", "\u203a"             # ‹ ›: single pieces of our vocabularies that the corpora never use


# The methods tried, in order, on a piece whose own translation lacks one of its terms (`Engine.translate`), for a
# run that reads annotations and for one that does not; orders compared on the validation term sets
# (bench/bench_glossary.py --styles auto annotate+placeholder ..., README "Glossaries").
METHODS = {"annotate": ("annotate", "placeholder", "replace", "target"), "placeholder": ("placeholder", "target")}


def default_style(trained_with_annotations: bool) -> str:
    return "annotate" if trained_with_annotations else "placeholder"


def annotation(source: str, target: str, keep_source: bool = True) -> str:
    """The annotated form of one term: `source ‹ target ›`, or `‹ target ›` in its place."""
    return f"{source} {OPEN} {target} {CLOSE}" if keep_source else f"{OPEN} {target} {CLOSE}"


def annotate(sentence: str, spans: Iterable[tuple[int, int, str, bool]]) -> str:
    """`sentence` with each (start, end, italian, keep_source) span (in order, not overlapping) followed by its
    annotation (`keep_source`) or replaced by it."""
    out, last = [], 0
    for start, end, target, keep_source in spans:
        out += [sentence[last:start], annotation(sentence[start:end], target, keep_source)]
        last = end
    out.append(sentence[last:])
    return "".join(out)


def strip_markers(translation: str) -> str:
    """A translation without any annotation marker the model echoed (spacing tidied where one was)."""
    if OPEN not in translation and CLOSE not in translation:
        return translation
    stripped = re.sub(rf"{OPEN}\s?|\s?{CLOSE}", "", translation)          # a marker and the space inside it
    return re.sub(r"(?<=\S) {2,}(?=\S)", " ", stripped).strip()


@dataclass(frozen=True)
class Masked:
    text: str                                   # the sentence the model reads
    slots: tuple[tuple[str, Term], ...]         # (stand-in written into it, its term), in order
    style: str = "annotate"


# -- formats -----------------------------------------------------------------------------------------------------
def decoded_lines(path: Path) -> list[str]:
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8").removeprefix("\ufeff").splitlines()
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise GlossaryError(f"glossary {path} line {line}: not valid UTF-8") from None


def read_delimited(path: Path, delimiter: str, direction: Direction = Direction()) -> list[tuple[str, str, str]]:
    """(where, source, target) rows of a TSV or CSV file; comments, blank lines and a header skipped (a header
    naming the languages, or the roles, the other way round from `direction` swaps the columns)."""
    lines = decoded_lines(path)
    rows = []
    if delimiter == "\t":
        numbered = [(number, line.split("\t")) for number, line in enumerate(lines, 1)]
    else:
        numbered = []
        reader = csv.reader(io.StringIO("\n".join(lines)), delimiter=delimiter, strict=True)
        try:
            for fields in reader:
                numbered.append((reader.line_num, fields))
        except csv.Error as exc:
            raise GlossaryError(f"glossary {path} line {reader.line_num}: {exc}") from None
    first, swap = True, False
    for number, fields in numbered:
        if not any(field.strip() for field in fields) or fields[0].lstrip().startswith("#"):
            continue
        if len(fields) != 2:
            raise GlossaryError(f"glossary {path} line {number}: {len(fields)} columns, expected 2 "
                                f"(source{'<TAB>' if delimiter == chr(9) else ','}target)")
        header = (fields[0].strip().lower(), fields[1].strip().lower())
        if first and (header in HEADERS or header[::-1] in HEADERS):
            first = False
            swap = (tuple(HEADER_LANGUAGES.get(name) for name in header) == (direction.target, direction.source)
                    or tuple(HEADER_ROLES.get(name) for name in header) == ("target", "source"))
            continue
        first = False
        where = f"glossary {path} line {number}"
        rows.append((where, fields[1], fields[0]) if swap else (where, fields[0], fields[1]))
    return rows


# The TBX layouts read: root element -> (entry, language group) elements; every <term> inside a language group is a
# term of that language. TBX 2008 (`<martif>`), TBX v3 / ISO 30042:2019 (`<tbx>`) and TBX-Min (`<TBX>`).
TBX_LAYOUTS = {"martif": ("termEntry", "langSet"), "tbx": ("conceptEntry", "langSec"), "TBX": ("entry", "langGroup")}
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
# A term's status, as each TBX dialect writes it beside the term: TBX-Basic's and TBX v3's `termNote
# type="administrativeStatus"` (`preferredTerm-admn`), the older `normativeAuthorization`, TBX v3's DCT element
# `administrativeStatus`, TBX-Min's `termStatus` (`preferred`, `notRecommended`)
TBX_STATUS_NOTES = {"administrativeStatus", "normativeAuthorization"}
TBX_STATUS_ELEMENTS = {"administrativeStatus", "termStatus"}
PREFERRED_TERMS = {"preferred", "preferredterm", "standardizedterm", "legalterm", "regulatedterm"}
AVOIDED_TERMS = {"deprecated", "deprecatedterm", "supersededterm", "notrecommended", "obsolete"}


def _tbx_rank(term: Any) -> int:
    """0 for a term its TBX file prefers (`preferredTerm-admn`, TBX-Min's `preferred`), 2 for one it says to avoid
    (deprecated, superseded, not recommended, obsolete), 1 for any other (admitted, or no status)."""
    for sibling in term.itersiblings(preceding=False):
        if not isinstance(sibling.tag, str):
            continue
        local = sibling.tag.rpartition("}")[2]
        if (local == "termNote" and sibling.get("type") in TBX_STATUS_NOTES) or local in TBX_STATUS_ELEMENTS:
            status = "".join(sibling.itertext()).strip().lower().removesuffix("-admn")
            return 0 if status in PREFERRED_TERMS else 2 if status in AVOIDED_TERMS else 1
    return 1


def read_tbx(path: Path, direction: Direction = Direction()) -> list[tuple[str, str, str]]:
    """(where, source, target) of each source-language term of each TBX entry that has a target-language term it
    does not say to avoid: its preferred one (`_tbx_rank`), else the first. Every source-language term is read, a
    deprecated one too (a text that uses it still gets the preferred translation).

    Parsed with lxml from the file's bytes, so the XML declaration's encoding holds (UTF-16 with a byte-order mark,
    ISO-8859-1); nothing is loaded (no DTD, no network), entities are refused, and lxml's depth limit (256) holds."""
    etree = require("lxml.etree", EXTRA)
    parser = safe_xml_parser(EXTRA)
    try:
        root = etree.fromstring(path.read_bytes(), parser)
    except etree.XMLSyntaxError as exc:
        line = exc.lineno if exc.lineno else exc.position[0]
        raise GlossaryError(f"glossary {path} line {line}: not a TBX file ({exc.msg})") from None
    entity = next(root.iter(etree.Entity), None)
    if entity is not None:
        raise GlossaryError(f"glossary {path} line {entity.sourceline}: not a TBX file (entity {entity.text} "
                            "is not expanded: a TBX file needs none)")
    name = etree.QName(root).localname
    if name not in TBX_LAYOUTS:
        raise GlossaryError(f"glossary {path} line {root.sourceline}: not TBX: expected a <martif>, <tbx> or <TBX> "
                            f"root, got <{name}>")
    entry_name, group_name = TBX_LAYOUTS[name]
    entries = list(root.iter(f"{{*}}{entry_name}"))
    found: dict[int, dict[str, list[tuple[int, str]]]] = {id(entry): {direction.source: [], direction.target: []}
                                                          for entry in entries}
    for group in root.iter(f"{{*}}{group_name}"):      # each language's terms, in the entry nearest them only (an
        entry = next(group.iterancestors(f"{{*}}{entry_name}"), None)    # entry inside entries: its terms once)
        code = (group.get(XML_LANG) or group.get("lang") or "").lower().split("-")[0].split("_")[0]
        if entry is not None and code in found[id(entry)]:
            found[id(entry)][code] += [(_tbx_rank(term), "".join(term.itertext())) for term in group.iter("{*}term")]
    rows = []
    for number, entry in enumerate(entries, 1):
        terms = found[id(entry)]
        where = f"glossary {path} entry {number}" + (f" ({entry.get('id')})" if entry.get("id") else "")
        targets = sorted(((rank, term) for rank, term in terms[direction.target] if rank < 2),
                         key=lambda ranked: ranked[0])            # (stable: the first of a rank)
        if not terms[direction.source] or not targets:
            continue                                   # an entry without both languages says nothing to us
        for _, source in terms[direction.source]:
            rows.append((where, source, targets[0][1]))
    return rows
