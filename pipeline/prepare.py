"""The data stage: clean -> grouped split -> fit tokenizers on train -> id arrays -> drop too-long pairs.

Three streaming passes over the corpus, so memory does not grow with it: (1) hash every pair, to
drop duplicates and assign each English sentence's group to a split; (2) collect a seeded sample of
at most `data.tokenizer_max_sentences` training sentences and train the tokenizers; (3) encode the
pairs in blocks into sharded `.npy` arrays (`pipeline/shards.py`). Everything lands in
`<workdir>/prepared/` at once (built in a temporary directory, then renamed), and the same input and
config give byte-identical outputs. No TensorFlow is needed.
"""
from __future__ import annotations

import time
from array import array
from collections import Counter
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from pipeline.config import Config, DataConfig
from pipeline.io_utils import atomic_directory, atomic_write_bytes, atomic_write_json
from pipeline.rundir import SPLITS_INDEX_FILE, VECTORIZERS_FILE, check_output_dir
from pipeline.shards import ShardWriter, index_bytes
from pipeline.text import DROP_REASONS, Corpus, assign_splits, check_usable, group_hash, pair_hash
from pipeline.tokenizers import WORD_END, WORD_START, SentencePieceTokenizer, Tokenizer, WordTokenizer, word_tokens
from pipeline.vectorizers import Vectorizers, vectorizers_to_bytes

DEFAULT_SAMPLE = Path(__file__).resolve().parent.parent / "data" / "ita-eng-sample.txt.gz"
SPLITS = ("train", "valid", "test")         # in the order of their split codes 0, 1, 2
ENCODE_BLOCK = 8192                         # pairs encoded at a time in the last pass


def percentiles(lengths: np.ndarray) -> dict[str, int]:
    if len(lengths) == 0:
        return {}
    points = {f"p{p}": int(np.percentile(lengths, p)) for p in (50, 90, 95, 99)}
    return {**points, "max": int(lengths.max())}


def fit_tokenizers(data: DataConfig, english: Sequence[str], italian: Sequence[str],
                   seed: int) -> tuple[Tokenizer, Tokenizer]:
    """Train the English and Italian tokenizers (one joint tokenizer when data.joint_vocab_size > 0)
    on the sampled training sentences (see `tokenizer_sample`)."""
    if data.tokenizer == "sentencepiece":
        def train(sentences, size):
            return SentencePieceTokenizer.train(sentences, size, data.sentencepiece_type,
                                                data.tokenizer_max_sentences, seed)
        if data.joint_vocab_size:
            joint = train([*english, *italian], data.joint_vocab_size)
            return joint, joint
        return train(english, data.en_vocab_size), train(italian, data.it_vocab_size)
    en_tokens = (word_tokens(s) for s in english)
    it_tokens = (word_tokens(s) for s in italian)
    specials = (WORD_START, WORD_END)
    if data.joint_vocab_size:
        joint = WordTokenizer.fit(chain(en_tokens, it_tokens), data.joint_vocab_size, extra=specials)
        return joint, joint
    return WordTokenizer.fit(en_tokens, data.en_vocab_size), WordTokenizer.fit(it_tokens, data.it_vocab_size, specials)


def encode_pairs(vectorizers: Vectorizers, pairs: Sequence[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(english (N, L), italian (N, L + 2) with [start]/[end], fits (N,) bool) for max_length L.

    One spare column on each side tells a pair that fits from one that is too long, without ever
    holding a corpus-wide array wider than L + 3.
    """
    length = vectorizers.max_length
    english = vectorizers.english.encode([en for en, _ in pairs], length + 1)
    italian = vectorizers.italian.encode([it for _, it in pairs], length + 3, add_start_end=True)
    fits = (english[:, length] == 0) & (italian[:, length + 2] == 0)
    return english[:, :length], italian[:, :length + 2], fits


def round_trip_check(italian_ids: np.ndarray, originals: Sequence[str], tokenizer: Tokenizer) -> dict[str, Any]:
    """Exact-match rate of ids -> text against the cleaned Italian, over every sentence and over those
    without an unknown token (all of them with SentencePiece's byte fallback)."""
    exact = in_vocab = exact_in_vocab = 0
    for ids, original in zip(italian_ids, originals):
        ok = tokenizer.decode(ids) == original
        exact += ok
        if not (ids == tokenizer.unk_id).any():
            in_vocab += 1
            exact_in_vocab += ok
    total = len(originals)
    return {"sentences": total, "exact_matches": exact, "exact_match_rate": exact / total if total else None,
            "sentences_in_vocabulary": in_vocab, "exact_matches_in_vocabulary": exact_in_vocab,
            "exact_match_rate_in_vocabulary": exact_in_vocab / in_vocab if in_vocab else None}


def coverage(ids: np.ndarray, unk_id: int = 1) -> float:
    """Share of non-padding tokens that are not unknown."""
    real = ids != 0
    return float(1.0 - (ids[real] == unk_id).sum() / max(int(real.sum()), 1))


@dataclass
class Scan:
    """What the first pass learns, per valid pair in corpus order, without keeping any sentence."""
    lines: int
    dropped: Counter
    group_hashes: np.ndarray        # (pairs,) uint64, seeded hash of the normalised English sentence
    keep: np.ndarray                # (pairs,) bool, False for a repeat of an earlier identical pair
    split: np.ndarray               # (pairs,) int8 split code: 0 train, 1 valid, 2 test


def scan_corpus(corpus: Corpus, data: DataConfig, seed: int, progress: bool) -> Scan:
    """Pass 1: count drops by reason, find duplicates by pair hash and assign splits by group hash."""
    dropped: Counter = Counter({reason: 0 for reason in DROP_REASONS})
    pair_hashes, group_hashes = array("Q"), array("Q")
    lines = 0
    for result in corpus.parsed(progress, desc="prepare 1/3: hash"):
        lines += 1
        if isinstance(result, str):
            dropped[result] += 1
        else:
            pair_hashes.append(pair_hash(*result))
            group_hashes.append(group_hash(result[0], seed))
    check_usable(corpus, lines, len(pair_hashes), dropped)
    pairs = np.frombuffer(pair_hashes, dtype=np.uint64).copy()
    del pair_hashes
    _, first = np.unique(pairs, return_index=True)       # the first of identical pairs is kept
    keep = np.zeros(len(pairs), dtype=bool)
    keep[first] = True
    dropped["duplicate"] = int(len(pairs) - len(first))
    groups = np.frombuffer(group_hashes, dtype=np.uint64).copy()
    return Scan(lines, dropped, groups, keep, assign_splits(groups, data.valid_fraction, data.test_fraction))


def sample_mask(candidates: np.ndarray, limit: int, seed: int) -> np.ndarray:
    """A boolean mask of at most `limit` of the True positions of `candidates`, chosen with `seed`."""
    positions = np.flatnonzero(candidates)
    if len(positions) > limit:
        positions = positions[np.sort(np.random.default_rng(seed).choice(len(positions), limit, replace=False))]
    mask = np.zeros(len(candidates), dtype=bool)
    mask[positions] = True
    return mask


def tokenizer_sample(corpus: Corpus, scan: Scan, limit: int, seed: int, progress: bool) -> tuple[list[str], list[str]]:
    """Pass 2: a seeded sample of at most `limit` training sentences per side, in corpus order."""
    train = scan.keep & (scan.split == 0)
    take_english, take_italian = sample_mask(train, limit, seed), sample_mask(train, limit, seed + 1)
    english, italian = [], []
    for index, (en, it) in enumerate(_valid_pairs(corpus, progress, "prepare 2/3: sample")):
        if take_english[index]:
            english.append(en)
        if take_italian[index]:
            italian.append(it)
    return english, italian


def _valid_pairs(corpus: Corpus, progress: bool, desc: str) -> Iterator[tuple[str, str]]:
    """The valid pairs in corpus order: index i here is index i of the `Scan` arrays."""
    return (result for result in corpus.parsed(progress, desc=desc) if not isinstance(result, str))


@dataclass
class SplitStats:
    """What the report needs from one split, gathered block by block while its shards are written."""
    rows: int = 0
    groups: list = field(default_factory=list)          # group hashes of the written rows
    english_lengths: list = field(default_factory=list)
    italian_lengths: list = field(default_factory=list)


class SplitWriters:
    """Pass 3: encode the kept pairs in blocks and append them to each split's shards (and .tsv)."""

    def __init__(self, out: Path, vectorizers: Vectorizers, scan: Scan, shard_rows: int):
        widths = {"english": vectorizers.max_length, "italian": vectorizers.max_length + 2}
        self.vectorizers, self.scan = vectorizers, scan
        self.shards = {name: ShardWriter(out, name, widths, shard_rows) for name in SPLITS}
        self.tsv = {name: open(out / f"{name}.tsv", "w", encoding="utf-8", newline="\n") for name in ("valid", "test")}
        self.pending: dict[str, list[tuple[int, tuple[str, str]]]] = {name: [] for name in SPLITS}
        self.stats = {name: SplitStats() for name in SPLITS}
        self.too_long = 0
        self.valid_ids: list[tuple[np.ndarray, np.ndarray]] = []
        self.valid_italian: list[str] = []

    def add(self, position: int, pair: tuple[str, str]) -> None:
        """Queue the valid pair at `position` (its index in the `Scan` arrays) unless it is a duplicate."""
        if not self.scan.keep[position]:
            return
        name = SPLITS[self.scan.split[position]]
        self.pending[name].append((position, pair))
        if len(self.pending[name]) == ENCODE_BLOCK:
            self._flush(name)

    def close(self) -> dict[str, dict[str, Any]]:
        """Flush everything; returns the shard index entry of each split."""
        for name in SPLITS:
            self._flush(name)
        for handle in self.tsv.values():
            handle.close()
        return {name: writer.close() for name, writer in self.shards.items()}

    def discard(self) -> None:
        """Close the open files after a failure (the temporary directory is then removed whole)."""
        for handle in self.tsv.values():
            handle.close()

    def _flush(self, name: str) -> None:
        if not self.pending[name]:
            return
        indices = np.array([i for i, _ in self.pending[name]], dtype=np.int64)
        pairs = [pair for _, pair in self.pending[name]]
        self.pending[name] = []
        en_ids, it_ids, fits = encode_pairs(self.vectorizers, pairs)
        self.too_long += int((~fits).sum())
        en_ids, it_ids = en_ids[fits], it_ids[fits]
        self.shards[name].append(en_ids, it_ids)
        stats = self.stats[name]
        stats.rows += len(en_ids)
        stats.groups.append(self.scan.group_hashes[indices[fits]])
        stats.english_lengths.append((en_ids != 0).sum(axis=1).astype(np.int16))
        stats.italian_lengths.append(((it_ids != 0).sum(axis=1) - 2).astype(np.int16))
        kept = [pair for pair, ok in zip(pairs, fits) if ok]
        if name in self.tsv:
            self.tsv[name].write("".join(f"{en}\t{it}\n" for en, it in kept))
        if name == "valid":              # the valid split is small: the report checks it whole
            self.valid_ids.append((en_ids, it_ids))
            self.valid_italian.extend(it for _, it in kept)


def _concatenate(blocks: list[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(blocks) if blocks else np.zeros(0, dtype=dtype)


def build_report(corpus: Corpus, data: DataConfig, dropped: Counter, writers: SplitWriters) -> dict[str, Any]:
    """report.json, from the counts and the per-split statistics gathered while writing."""
    english, italian = writers.vectorizers.english, writers.vectorizers.italian
    stats = writers.stats
    groups = {name: _concatenate(stats[name].groups, np.uint64) for name in SPLITS}
    en_lengths = _concatenate([b for n in SPLITS for b in stats[n].english_lengths], np.int16)
    it_lengths = _concatenate([b for n in SPLITS for b in stats[n].italian_lengths], np.int16)
    valid_en = _concatenate([en for en, _ in writers.valid_ids], np.int32).reshape(-1, writers.vectorizers.max_length)
    valid_it = _concatenate([it for _, it in writers.valid_ids], np.int32).reshape(-1, writers.vectorizers.max_length + 2)
    return {
        "input": str(corpus),
        "tokenizer": data.tokenizer if data.tokenizer == "word" else f"sentencepiece ({data.sentencepiece_type})",
        "pairs_kept": int(sum(stats[name].rows for name in SPLITS)),
        "dropped": {reason: int(dropped[reason]) for reason in DROP_REASONS},
        "split_sizes": {name: int(stats[name].rows) for name in SPLITS},
        "distinct_english": {name: int(len(np.unique(groups[name]))) for name in SPLITS},
        "distinct_english_total": int(len(np.unique(np.concatenate(list(groups.values()))))),
        "vocabulary_sizes": {"english": len(english), "italian": len(italian), "joint": writers.vectorizers.joint},
        "valid_coverage": {"english": coverage(valid_en, english.unk_id), "italian": coverage(valid_it, italian.unk_id)},
        "length_percentiles": {"english": percentiles(en_lengths), "italian": percentiles(it_lengths)},
        "round_trip_valid": round_trip_check(valid_it, writers.valid_italian, italian),
    }


def prepare(config: Config, input_path: str | Path | Sequence[str | Path] | None = None,
            progress: bool = True) -> dict[str, Any]:
    """Run the whole data stage in three streaming passes; returns the report also written to report.json.

    `input_path` is one tab-separated corpus file, or two line-aligned files (English, Italian).
    """
    started = time.perf_counter()
    corpus = Corpus(input_path if input_path is not None else DEFAULT_SAMPLE)
    check_output_dir(config.prepared_dir, "prepared directory")
    data = config.data
    scan = scan_corpus(corpus, data, config.seed, progress)
    if not (scan.keep & (scan.split == 0)).any():
        raise ValueError(f"{corpus.label}: the train split is empty; lower the validation/test fractions")

    english, italian = fit_tokenizers(data, *tokenizer_sample(corpus, scan, data.tokenizer_max_sentences,
                                                              config.seed, progress), config.seed)
    metadata = {"max_length": data.max_length, "seed": config.seed, "source": str(corpus),
                "tokenizer": data.tokenizer, "splits": SPLITS_INDEX_FILE}
    vectorizers = Vectorizers(english, italian, metadata)

    with atomic_directory(config.prepared_dir) as out:
        writers = SplitWriters(out, vectorizers, scan, data.shard_rows)
        try:
            for position, pair in enumerate(_valid_pairs(corpus, progress, "prepare 3/3: encode")):
                writers.add(position, pair)
        except BaseException:
            writers.discard()
            raise
        shard_index = writers.close()
        if writers.stats["train"].rows == 0:
            raise ValueError(f"{corpus.label}: every training pair is longer than "
                             f"data.max_length={data.max_length} tokens")
        scan.dropped["too_long"] = writers.too_long
        report = build_report(corpus, data, scan.dropped, writers)
        atomic_write_bytes(out / SPLITS_INDEX_FILE, index_bytes(shard_index))
        atomic_write_bytes(out / VECTORIZERS_FILE, vectorizers_to_bytes(vectorizers))
        report["seconds"] = round(time.perf_counter() - started, 2)
        atomic_write_json(out / "report.json", report)
    return report


def format_report(report: dict[str, Any]) -> str:
    """A human summary of a prepare report."""
    dropped = ", ".join(f"{k} {v}" for k, v in report["dropped"].items() if v) or "none"
    sizes = report["split_sizes"]
    rt = report["round_trip_valid"]
    rate = "n/a" if rt["exact_match_rate"] is None else f"{100 * rt['exact_match_rate']:.2f}%"
    lengths = report["length_percentiles"]
    return "\n".join([
        f"kept {report['pairs_kept']:,} pairs; dropped: {dropped}",
        f"splits: train {sizes['train']:,} / valid {sizes['valid']:,} / test {sizes['test']:,} pairs "
        f"({report['distinct_english']['train']:,} / {report['distinct_english']['valid']:,} / "
        f"{report['distinct_english']['test']:,} distinct English sentences)",
        f"{report['tokenizer']} vocabulary: English {report['vocabulary_sizes']['english']:,}, "
        f"Italian {report['vocabulary_sizes']['italian']:,}{' (joint)' if report['vocabulary_sizes']['joint'] else ''}; "
        f"valid coverage English {100 * report['valid_coverage']['english']:.2f}%, "
        f"Italian {100 * report['valid_coverage']['italian']:.2f}%",
        f"tokens per sentence p50/p95/max: English {lengths['english'].get('p50')}/{lengths['english'].get('p95')}/"
        f"{lengths['english'].get('max')}, Italian {lengths['italian'].get('p50')}/{lengths['italian'].get('p95')}/"
        f"{lengths['italian'].get('max')}",
        f"ids->text round trip on valid: {rt['exact_matches']:,}/{rt['sentences']:,} sentences exact ({rate}); "
        f"{rt['sentences_in_vocabulary']:,} without unknown tokens",
    ])
