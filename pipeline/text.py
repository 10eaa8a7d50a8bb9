"""Reading, cleaning and splitting English-Italian sentence pairs.

Reads the formats users actually have: ManyThings' `ita-eng.zip` (read in place),
`ita.txt` with 2 or 3 tab-separated columns, or two line-aligned Moses/OPUS files
(`train.en train.it`), gzipped or plain, CRLF or LF, streamed line by line.
Malformed lines are skipped and counted by reason; they never stop a run. Duplicates and
split groups are found by stable 64-bit hashes, so no sentence has to stay in memory.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import itertools
import re
import unicodedata
import zipfile
from collections import Counter
from pathlib import Path
from typing import IO, Iterable, Iterator, Sequence

import numpy as np

JOINER = "\uffed"  # marks punctuation attached to its neighbour; never allowed in input text
# Characters that take no room and only tell where words may break or must not (soft hyphens, as in
# `inter&shy;national`; zero-width spaces; word joiners; a byte-order mark inside a text): the model reads the
# words without them, in training as in translation (its vocabulary has none)
INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u2060\ufeff"))
DROP_REASONS = ("blank_line", "wrong_column_count", "not_utf8", "control_characters",
                "empty_side", "duplicate", "excluded", "held_out_elsewhere", "too_long")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


class CorpusError(ValueError):
    """The corpus as a whole cannot be used (missing, a directory, empty, no valid pairs)."""


def _open_zip_member(path: Path) -> IO[bytes]:
    archive = zipfile.ZipFile(path)
    texts = [n for n in archive.namelist()
             if n.lower().endswith(".txt") and not Path(n).name.startswith(("_", "."))]
    if len(texts) != 1:
        raise CorpusError(f"corpus file {path}: expected one sentence-pair .txt inside the zip "
                          f"(besides _about.txt), found {texts or 'none'}")
    return archive.open(texts[0])


def open_corpus(path: str | Path) -> IO[bytes]:
    """Open a zip, gzip or plain corpus file as a binary stream, sniffing the format."""
    path = Path(path)
    if not path.exists():
        raise CorpusError(f"corpus file {path}: not found")
    if path.is_dir():
        raise CorpusError(f"corpus file {path}: is a directory, expected a .txt, .gz or .zip file")
    if path.stat().st_size == 0:
        raise CorpusError(f"corpus file {path}: is empty")
    with open(path, "rb") as handle:
        magic = handle.read(4)
    try:
        if magic.startswith(b"PK\x03\x04"):
            return _open_zip_member(path)
        if magic.startswith(b"\x1f\x8b"):
            return gzip.open(path, "rb")
    except zipfile.BadZipFile:
        raise CorpusError(f"corpus file {path}: not a readable zip archive") from None
    return open(path, "rb")


SURROGATE = re.compile("[\ud800-\udfff]")     # the only str code points that UTF-8 cannot encode
REPLACEMENT = "\ufffd"


def gate_text(text: str) -> str:
    """The one gate for incoming text: every door (CLI arguments and files, the Python API of both engines,
    the HTTP routes and so the page) passes texts through it before anything else. Surrogate code points
    (U+D800-U+DFFF: JSON's "\\ud800", a CLI argument's invalid bytes) are the only ones UTF-8 cannot encode: a
    high-low pair held as two code points becomes the character it stands for, and each lone one becomes
    U+FFFD, the replacement character, so such text translates like any other and the same input gives the
    same output everywhere. Anything but a str is a TypeError."""
    if not isinstance(text, str):
        raise TypeError(f"expected a str, got {type(text).__name__}")
    if SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def shortened(text: str, limit: int) -> str:
    """`text`, cut at `limit` characters with a note of how many more there were (for a log line or a message that
    quotes what a client sent)."""
    return text if len(text) <= limit else f"{text[:limit]}...(+{len(text) - limit:,} characters)"


def gate_texts(texts: Iterable[str]) -> list[str]:
    """`gate_text` of each; a str instead of a list of texts is a TypeError."""
    if isinstance(texts, str):
        raise TypeError("expected a list of texts, got one str: pass [text]")
    return [gate_text(text) for text in texts]


def free_numbers(text: str, start: int = 70) -> Iterator[str]:
    """Numbers from `start` up that `text` does not hold (as a run of ASCII digits): stand-ins that models copy far
    more reliably than invented names (`Term0`, `%(count)d`), and that cannot be mistaken for one of the text's own."""
    taken = set(re.findall(r"[0-9]+", text))
    return (str(n) for n in itertools.count(start) if str(n) not in taken)


def clean_side(text: str) -> str:
    """NFC-normalise, drop the characters that take no room (`INVISIBLE`) and collapse every run of (Unicode)
    whitespace to one space."""
    text = unicodedata.normalize("NFC", text).replace(JOINER, " ").translate(INVISIBLE)
    return " ".join(text.split())


def parse_line(raw: bytes) -> tuple[str, str] | str:
    """Return the cleaned (english, italian) pair, or the reason the line is dropped."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "not_utf8"
    line = line.rstrip("\n").rstrip("\r")
    if not line.strip():
        return "blank_line"
    columns = line.split("\t")
    if len(columns) not in (2, 3):  # English, Italian[, attribution]
        return "wrong_column_count"
    return checked_pair(columns[0], columns[1])


def iter_lines(stream: IO[bytes]) -> Iterator[bytes]:
    """Yield raw lines (LF-terminated; CR is stripped later)."""
    yield from (io.BufferedReader(stream) if not isinstance(stream, io.BufferedIOBase) else stream)


def parse_aligned(raw_english: bytes, raw_italian: bytes) -> tuple[str, str] | str:
    """One line of each Moses/OPUS file -> the cleaned (english, italian) pair, or why it is dropped."""
    try:
        english, italian = raw_english.decode("utf-8"), raw_italian.decode("utf-8")
    except UnicodeDecodeError:
        return "not_utf8"
    english, italian = english.rstrip("\n").rstrip("\r"), italian.rstrip("\n").rstrip("\r")
    if not english.strip() and not italian.strip():
        return "blank_line"
    return checked_pair(english, italian)


def nonblank(sentences: Iterable[str]) -> tuple[list[str], list[int]]:
    """Sentences through the gate and cleaned as a translator cleans them (`gate_text`, `clean_side`), and the
    indices of those left non-empty."""
    cleaned = [clean_side(sentence) for sentence in gate_texts(sentences)]
    return cleaned, [i for i, sentence in enumerate(cleaned) if sentence]


def checked_pair(english: str, italian: str) -> tuple[str, str] | str:
    """Both sides of a pair cleaned (`clean_side`), or why the pair is dropped."""
    if _CONTROL.search(english) or _CONTROL.search(italian):
        return "control_characters"
    english, italian = clean_side(english), clean_side(italian)
    if not english or not italian:
        return "empty_side"
    return english, italian


CORPUS_COLUMNS = ("en-it", "it-en")


class Corpus:
    """A sentence-pair corpus that can be streamed any number of times, line by line.

    Either one file of tab-separated pairs (zip, gzip or plain) or two line-aligned files,
    Moses/OPUS style (`train.en train.it`, each plain or gzipped). Nothing is held in memory.
    `columns` is the language order of its columns (or files): "en-it", or "it-en" for a corpus with Italian
    first; pairs always come out (English, Italian), whatever direction a run then trains.
    """

    def __init__(self, paths: str | Path | Sequence[str | Path], columns: str = "en-it"):
        paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
        if len(paths) not in (1, 2):
            raise CorpusError(f"corpus: expected one tab-separated file or two line-aligned files "
                              f"(in the order of its columns, {columns}), got {len(paths)} paths")
        if columns not in CORPUS_COLUMNS:
            raise CorpusError(f"corpus {paths[0]}: columns must be one of {', '.join(CORPUS_COLUMNS)}, got {columns!r}")
        self.italian_first = columns == "it-en"
        self.paths = [Path(p) for p in paths]
        for path in self.paths:
            open_corpus(path).close()          # fail now, with the file's name, rather than mid-run

    def __str__(self) -> str:
        return " ".join(str(p) for p in self.paths)

    @property
    def label(self) -> str:
        """How error messages name it."""
        return f"corpus file {self.paths[0]}" if len(self.paths) == 1 else f"line-aligned corpus {self}"

    def parsed(self, progress: bool = False, desc: str = "read") -> Iterator[tuple[str, str] | str]:
        """Each line's cleaned pair, or the reason it is dropped (see DROP_REASONS), in file order."""
        from tqdm import tqdm
        lines = self._parsed_tsv() if len(self.paths) == 1 else self._parsed_aligned()
        if self.italian_first:
            lines = (line if isinstance(line, str) else (line[1], line[0]) for line in lines)
        yield from tqdm(lines, desc=desc, unit=" lines", disable=not progress, mininterval=0.5)

    def _parsed_tsv(self) -> Iterator[tuple[str, str] | str]:
        with open_corpus(self.paths[0]) as stream:
            for raw in iter_lines(stream):
                yield parse_line(raw)

    def _parsed_aligned(self) -> Iterator[tuple[str, str] | str]:
        en_path, it_path = self.paths
        with open_corpus(en_path) as en_stream, open_corpus(it_path) as it_stream:
            english, italian = iter_lines(en_stream), iter_lines(it_stream)
            count = 0
            while (raw_english := next(english, None)) is not None and (raw_italian := next(italian, None)) is not None:
                count += 1
                yield parse_aligned(raw_english, raw_italian)
            # counted, not held: a missing line anywhere shifts every later pair, so the whole file is unusable
            english_lines = count + (raw_english is not None) + sum(1 for _ in english)
            italian_lines = count + sum(1 for _ in italian)
            if english_lines != italian_lines:
                raise CorpusError(f"line-aligned corpus: {en_path} has {english_lines:,} lines but {it_path} has "
                                  f"{italian_lines:,}; expected one line per sentence in each")


def read_pairs(path: str | Path | Sequence[str | Path], progress: bool = False) -> tuple[list[tuple[str, str]], Counter]:
    """Read and clean a whole corpus into memory; drop malformed lines and exact duplicates, counted by reason.

    For small corpora and tests; `pipeline.prepare` streams instead.
    """
    corpus = Corpus(path)
    dropped: Counter = Counter({reason: 0 for reason in DROP_REASONS})
    pairs: list[tuple[str, str]] = []
    seen: set[int] = set()
    lines = 0
    for result in corpus.parsed(progress):
        lines += 1
        if isinstance(result, str):
            dropped[result] += 1
        elif (key := pair_hash(*result)) in seen:
            dropped["duplicate"] += 1
        else:
            seen.add(key)
            pairs.append(result)
    check_usable(corpus, lines, len(pairs), dropped)
    return pairs, dropped


def check_usable(corpus: Corpus, lines: int, pairs: int, dropped: Counter) -> None:
    """A corpus with no lines or no valid pair is an error naming it."""
    if lines == 0:
        raise CorpusError(f"{corpus.label}: is empty")
    if pairs == 0:
        summary = ", ".join(f"{k}={v}" for k, v in dropped.items() if v)
        raise CorpusError(f"{corpus.label}: no valid sentence pairs in {lines} lines ({summary})")


def grouping_key(english: str) -> str:
    """The normalised English sentence that groups pairs for splitting."""
    return " ".join(english.casefold().split())


def _hash64(data: bytes, key: bytes = b"") -> int:
    return int.from_bytes(hashlib.blake2b(data, digest_size=8, key=key).digest(), "little")


def pair_hash(english: str, italian: str) -> int:
    """A stable 64-bit hash of a cleaned pair, for finding duplicates without keeping the sentences.

    Two different pairs share a hash with odds of about n^2 / 2^65: one in 3.6 million at 3.2M pairs."""
    return _hash64(f"{english}\t{italian}".encode("utf-8"))


def group_hash(english: str, seed: int) -> int:
    """A stable, seeded 64-bit hash of the pair's group (its normalised English sentence)."""
    return _hash64(grouping_key(english).encode("utf-8"), key=str(seed).encode("ascii"))


def assign_splits(group_hashes: np.ndarray, valid_fraction: float, test_fraction: float) -> np.ndarray:
    """Split code per pair (0 train, 1 valid, 2 test) from its seeded group hash.

    Groups are ranked by their seeded hash, which is a seeded random order that does not depend on
    corpus order; the first round(test_fraction x groups) go to test, the next to valid.
    """
    unique, group_of_pair = np.unique(np.asarray(group_hashes, dtype=np.uint64), return_inverse=True)
    n_test = int(round(test_fraction * len(unique)))
    n_valid = int(round(valid_fraction * len(unique)))
    split_of_group = np.zeros(len(unique), dtype=np.int8)
    split_of_group[:n_test] = 2
    split_of_group[n_test:n_test + n_valid] = 1
    return split_of_group[group_of_pair.reshape(-1)]


def split_by_source(english: Sequence[str], valid_fraction: float, test_fraction: float,
                    seed: int) -> dict[str, np.ndarray]:
    """Deterministically split pair indices so no normalised English sentence spans two splits."""
    hashes = np.fromiter((group_hash(s, seed) for s in english), dtype=np.uint64, count=len(english))
    codes = assign_splits(hashes, valid_fraction, test_fraction)
    return {name: np.flatnonzero(codes == code) for code, name in enumerate(("train", "valid", "test"))}


# -- held-out exclusion -------------------------------------------------------------------------------------------
def exclusion_key(text: str) -> str:
    """How a sentence is compared with an exclusion list: NFC, whitespace folded, casefolded."""
    return unicodedata.normalize("NFC", clean_side(text).casefold())


class ExclusionList:
    """Sentences no training pair may contain (public test sets, a parent run's held-out splits).

    Every line of each file is one sentence; in a tab-separated file (a test set `english<TAB>italian`,
    or a prepared `test.tsv`) each column of a line is one too. Files may be gzipped. A pair is excluded
    when its English or its Italian side equals one of them after `exclusion_key`. Only 64-bit hashes
    are kept.
    """

    def __init__(self, paths: Sequence[str | Path] = ()):
        self.paths = [Path(p) for p in paths]
        self.hashes: set[int] = set()
        for path in self.paths:
            self._read(path)

    def _read(self, path: Path) -> None:
        if not path.exists():
            raise CorpusError(f"exclusion file {path}: not found")
        if path.is_dir():
            raise CorpusError(f"exclusion file {path}: is a directory, expected a text file")
        if path.stat().st_size == 0:
            return
        with open_corpus(path) as stream:
            for number, raw in enumerate(iter_lines(stream), 1):
                try:
                    line = raw.decode("utf-8").rstrip("\n").rstrip("\r")
                except UnicodeDecodeError:
                    raise CorpusError(f"exclusion file {path} line {number}: not UTF-8") from None
                for column in line.split("\t"):
                    if column.strip():
                        self.hashes.add(_hash64(exclusion_key(column).encode("utf-8")))

    def __len__(self) -> int:
        return len(self.hashes)

    def excludes(self, english: str, italian: str) -> bool:
        """True when either side of the cleaned pair equals an excluded sentence."""
        return bool(self.hashes) and (_hash64(exclusion_key(english).encode("utf-8")) in self.hashes
                                      or _hash64(exclusion_key(italian).encode("utf-8")) in self.hashes)
