"""Reading, cleaning and splitting English-Italian sentence pairs.

Reads the formats users actually have: ManyThings' `ita-eng.zip` (read in place),
`ita.txt` with 2 or 3 tab-separated columns, gzipped or plain, CRLF or LF.
Malformed lines are skipped and counted by reason; they never stop a run.
"""
from __future__ import annotations

import gzip
import io
import re
import unicodedata
import zipfile
from collections import Counter
from pathlib import Path
from typing import IO, Iterator

import numpy as np

JOINER = "\uffed"  # marks punctuation attached to its neighbour; never allowed in input text
DROP_REASONS = ("blank_line", "wrong_column_count", "not_utf8", "control_characters",
                "empty_side", "duplicate", "too_long")
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


def clean_side(text: str) -> str:
    """NFC-normalise and collapse every run of (Unicode) whitespace to one space."""
    text = unicodedata.normalize("NFC", text).replace(JOINER, " ")
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
    english, italian = columns[0], columns[1]
    if _CONTROL.search(english) or _CONTROL.search(italian):
        return "control_characters"
    english, italian = clean_side(english), clean_side(italian)
    if not english or not italian:
        return "empty_side"
    return english, italian


def iter_lines(stream: IO[bytes], progress: bool = False) -> Iterator[bytes]:
    """Yield raw lines (LF-terminated; CR is stripped later), with an optional progress bar."""
    from tqdm import tqdm
    reader = io.BufferedReader(stream) if not isinstance(stream, io.BufferedIOBase) else stream
    yield from tqdm(reader, desc="read", unit=" lines", disable=not progress, mininterval=0.5)


def read_pairs(path: str | Path, progress: bool = False) -> tuple[list[tuple[str, str]], Counter]:
    """Read and clean a corpus; drop malformed lines and exact duplicate pairs, counted by reason."""
    dropped: Counter = Counter({reason: 0 for reason in DROP_REASONS})
    pairs: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    lines = 0
    with open_corpus(path) as stream:
        for raw in iter_lines(stream, progress):
            lines += 1
            result = parse_line(raw)
            if isinstance(result, str):
                dropped[result] += 1
            elif result in seen:
                dropped["duplicate"] += 1
            else:
                seen.add(result)
                pairs.append(result)
    if lines == 0:
        raise CorpusError(f"corpus file {path}: is empty")
    if not pairs:
        summary = ", ".join(f"{k}={v}" for k, v in dropped.items() if v)
        raise CorpusError(f"corpus file {path}: no valid sentence pairs in {lines} lines ({summary})")
    return pairs, dropped


def grouping_key(english: str) -> str:
    """The normalised English sentence that groups pairs for splitting."""
    return " ".join(english.casefold().split())


def split_by_source(english: list[str], valid_fraction: float, test_fraction: float,
                    seed: int) -> dict[str, np.ndarray]:
    """Deterministically split pair indices so no normalised English sentence spans two splits.

    Whole groups (all translations of one English sentence) go to one split; group order
    is a seeded permutation of the sorted keys, so it does not depend on corpus order.
    """
    keys = [grouping_key(s) for s in english]
    unique = sorted(set(keys))
    order = np.random.default_rng(seed).permutation(len(unique))
    n_test = int(round(test_fraction * len(unique)))
    n_valid = int(round(valid_fraction * len(unique)))
    split_of_group = np.full(len(unique), 0, dtype=np.int8)       # 0 train, 1 valid, 2 test
    split_of_group[order[:n_test]] = 2
    split_of_group[order[n_test:n_test + n_valid]] = 1
    group_index = {key: i for i, key in enumerate(unique)}
    split_of_pair = split_of_group[np.array([group_index[k] for k in keys], dtype=np.int64)]
    return {name: np.flatnonzero(split_of_pair == code)
            for code, name in enumerate(("train", "valid", "test"))}
