"""Terminology annotations: the inline form in which a model learns to honour a glossary (issue 26), and the
training-time annotator that writes them into prepared training pairs.

The method is Dinu et al. 2019 ("Training Neural Machine Translation to Apply Terminology Constraints"), append
variant, with inline markers instead of source factors: each English term is followed by the Italian the
translation must use,

    the red car is mine   ->   the red car ‹ automobile › is mine

and a model trained on pairs annotated so learns to carry the marked Italian into its output (inflecting the
words around it as the reference does). Both engines read the same text, so a glossary needs no decoder change.
The markers ‹ › are single pieces of our SentencePiece vocabularies that the corpora never use.

`TermAnnotator` (prepare's `data.term_annotation`): in a share of the training pairs, every dictionary headword
found in the English whose dictionary translation occurs in the Italian reference is annotated with the form the
reference uses; with `data.term_swap`, some annotations ask for another synonym of the same sense instead, and
the reference is rewritten to use it, so the model learns to obey an annotation it would not have chosen (the
hard case: a house style). Names and code that the reference keeps verbatim (a capital or digit inside the word)
are annotated as do-not-translate terms, `Tom ‹ Tom ›`; with `data.term_swap`, some become made-up names on both
sides (`Ꝏzë-7 ‹ Ꝏzë-7 ›`), so that the model learns to copy any string. With `data.term_replace`, a share of the
annotations replace their English term (`the red ‹ automobile ›`): the model cannot translate what is not there,
so it must carry the marked Italian over. Validation and test pairs are never annotated.
"""
from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.config import DataConfig
from pipeline.io_utils import read_text_lines
from pipeline.text import clean_side
from pipeline.glossary import Glossary, annotation, find_words, fold

DEFAULT_DICTIONARY = Path(__file__).resolve().parent.parent / "data" / "dictionaries" / "freedict-eng-ita.tsv"
ANNOTATE_TERM = 0.7            # in an annotated pair, the chance of each of its terms (at least one is annotated)
VERBATIM_WORD = re.compile(r"(?<![\w.+#-])(?=[\w.+#-]*[A-Z0-9])[\w][\w.+#-]*[\w+#](?![\w.+#-])")


def read_dictionary(path: str | Path) -> dict[str, list[list[str]]]:
    """english -> its senses, each a list of Italian synonyms, from `english<TAB>synonym|synonym` lines."""
    senses: dict[str, list[list[str]]] = {}
    for number, line in enumerate(read_text_lines(path, "term dictionary"), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 2 or not fields[0].strip() or not fields[1].strip():
            raise ValueError(f"term dictionary {path} line {number}: expected english<TAB>synonym|synonym")
        synonyms = [clean_side(s) for s in fields[1].split("|") if s.strip()]
        senses.setdefault(clean_side(fields[0]), []).append(synonyms)
    if not senses:
        raise ValueError(f"term dictionary {path}: no entries")
    return senses


@dataclass
class AnnotationStats:
    pairs: int = 0                  # training pairs seen
    annotated_pairs: int = 0
    terms: Counter = field(default_factory=Counter)      # dictionary / swapped / verbatim

    def to_dict(self) -> dict:
        return {"pairs": self.pairs, "annotated_pairs": self.annotated_pairs, "terms": dict(self.terms)}


class TermAnnotator:
    """Annotates a seeded share of training pairs (see the module docstring); the same seed, pair and position
    give the same annotation."""

    def __init__(self, dictionary: str | Path, share: float, swap: float, seed: int, replace: float = 0.0):
        self.senses: dict[str, list[list[str]]] = {}            # headwords that differ only in case are one
        for headword, senses in read_dictionary(dictionary).items():
            self.senses.setdefault(fold(headword), []).extend(senses)
        self.headwords = Glossary({headword: headword for headword in self.senses}, name=f"term dictionary {dictionary}")
        self.share, self.swap, self.seed, self.replace = share, swap, seed, replace
        self.stats = AnnotationStats()

    def __call__(self, english: str, italian: str, key: str) -> tuple[str, str]:
        """(english, italian) with annotations (and a swapped reference), or the pair unchanged."""
        self.stats.pairs += 1
        draw = random.Random(f"{self.seed}:{key}")
        if draw.random() >= self.share:
            return english, italian
        candidates = self._candidates(english, italian)
        if not candidates:
            return english, italian
        chosen = [c for c in candidates if draw.random() < ANNOTATE_TERM] or [draw.choice(candidates)]
        annotated = 0
        for start, end, kind, form, synonyms in sorted(chosen, reverse=True):     # right to left: offsets hold
            found = find_words(form, italian)
            if found is None:                   # an earlier swap of this pair rewrote the same Italian word
                continue
            source = english[start:end]
            if kind == "verbatim" and draw.random() < self.swap:     # a made-up name, to learn to copy any string
                source = form = invented_name(draw)
                italian = italian[:found.start()] + form + italian[found.end():]
                kind = "invented"
            others = [s for s in synonyms if fold(s) != fold(form) and find_words(s, italian) is None]
            if kind == "dictionary" and others and draw.random() < self.swap:
                replacement = draw.choice(others)
                if form[:1].isupper():
                    replacement = replacement[:1].upper() + replacement[1:]
                italian = italian[:found.start()] + replacement + italian[found.end():]
                form, kind = replacement, "swapped"
            english = english[:start] + annotation(source, form, draw.random() >= self.replace) + english[end:]
            annotated += 1
            self.stats.terms[kind] += 1
        self.stats.annotated_pairs += annotated > 0
        return english, italian

    def _candidates(self, english: str, italian: str) -> list[tuple[int, int, str, str, list[str]]]:
        """(start, end, kind, the Italian form the reference uses, same-sense synonyms) of each term in the pair."""
        found, taken = [], []
        for match in self.headwords.find(english):
            for sense in self.senses[fold(match.term.source)]:
                used = next((m for s in sense if (m := find_words(s, italian))), None)
                if used is not None:
                    found.append((match.start, match.end, "dictionary", italian[used.start():used.end()], sense))
                    taken.append((match.start, match.end))
                    break
        for word in VERBATIM_WORD.finditer(english):
            if word.start() == 0 or any(word.start() < end and start < word.end() for start, end in taken):
                continue
            if re.search(rf"(?<![\w.+#-]){re.escape(word.group())}(?![\w.+#-])", italian):
                found.append((word.start(), word.end(), "verbatim", word.group(), []))
        return found


def annotator_for(data: DataConfig, seed: int) -> TermAnnotator | None:
    """The annotator a `DataConfig` asks for (`term_annotation` > 0), else None."""
    if not data.term_annotation:
        return None
    return TermAnnotator(data.term_dictionary or DEFAULT_DICTIONARY, data.term_annotation, data.term_swap, seed,
                         data.term_replace)


NAME_PARTS = ("ab", "zë", "kö", "ra", "ŀl", "ß", "ø", "ñu", "ğa", "tō", "ɐ", "ꝏ", "x", "q", "vi", "ç", "ŵ", "đe",
              "7", "42", "-", "_", "+", ".", "Ǻ", "Ж", "λ", "ű", "ij", "q2", "h", "Ø", "é")


def invented_name(draw: random.Random) -> str:
    """A made-up name of letters (many outside any vocabulary), digits and joiners, starting with a capital."""
    parts = [draw.choice(NAME_PARTS) for _ in range(draw.randint(2, 5))]
    name = "".join(parts).strip("-_+.")
    name = re.sub(r"[-_+.]{2,}", "-", name) or "Zë"
    return name[:1].upper() + name[1:]

