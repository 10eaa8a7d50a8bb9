"""The data stage: clean -> grouped split -> fit tokenizers on train -> id arrays -> drop too-long pairs.

Three streaming passes over each corpus, so memory does not grow with them: (1) hash every pair, to
drop duplicates and excluded sentences and to assign each English sentence's group to a split; (2)
collect a seeded sample of at most `data.tokenizer_max_sentences` training sentences of all corpora
and train the tokenizers (or take a parent run's, `vectorizers_from`); (3) encode the pairs in blocks
into sharded `.npy` arrays (`pipeline/shards.py`).

Several corpora (`data.corpora`) are prepared together: each is split on its own, exactly as if it
were prepared alone, then any training pair whose English sentence is held out (valid or test) in
another corpus is dropped too, so no source sentence is both trained on and scored. Each split holds
the corpora one after another, and `splits.json` records each corpus's rows, which the batch plan
mixes by weight (`pipeline.datasets.Mixture`). Everything lands in `<workdir>/prepared/` at once
(built in a temporary directory, then renamed), and the same inputs and config give byte-identical
outputs. No TensorFlow is needed.
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

from pipeline.config import Config, DataConfig, default_corpus_name
from pipeline.language import LANGUAGE_TAGS, Direction, language_name
from pipeline.io_utils import atomic_directory, atomic_write_bytes, atomic_write_json
from pipeline.rundir import (REPORT_FILE, SPLITS_INDEX_FILE, VECTORIZERS_FILE, RunDir, check_output_dir,
                             split_text_file)
from pipeline.shards import ShardWriter, index_bytes
from pipeline.terms import AnnotationStats, TermAnnotator, annotator_for
from pipeline.text import (DROP_REASONS, Corpus, ExclusionList, assign_splits, check_usable, group_hash,
                           pair_hash)
from pipeline.tokenizers import WORD_END, WORD_START, SentencePieceTokenizer, Tokenizer, WordTokenizer, word_tokens
from pipeline.vectorizers import Vectorizers, vectorizers_to_bytes
from pipeline.rundir import prepared_path

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
    on the sampled training sentences (see `tokenizer_sample`); returned (English, Italian)."""
    if data.tokenizer == "sentencepiece":
        def train(sentences, size, symbols=()):
            return SentencePieceTokenizer.train(sentences, size, data.sentencepiece_type,
                                                data.tokenizer_max_sentences, seed, symbols=symbols)
        if data.joint_vocab_size:
            joint = train([*english, *italian], data.joint_vocab_size,
                          tuple(LANGUAGE_TAGS.values()) if data.bidirectional else ())
            return joint, joint
        return train(english, data.en_vocab_size), train(italian, data.it_vocab_size)
    en_tokens = (word_tokens(s) for s in english)
    it_tokens = (word_tokens(s) for s in italian)
    specials = (WORD_START, WORD_END)
    if data.joint_vocab_size:
        joint = WordTokenizer.fit(chain(en_tokens, it_tokens), data.joint_vocab_size, extra=specials)
        return joint, joint
    target_is_english = data.target_language == "en"      # the target side's vocabulary holds [start] and [end]
    return (WordTokenizer.fit(en_tokens, data.en_vocab_size, specials if target_is_english else ()),
            WordTokenizer.fit(it_tokens, data.it_vocab_size, () if target_is_english else specials))


def encode_pairs(vectorizers: Vectorizers, pairs: Sequence[tuple[str, str]],
                 targets: Sequence[str] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source (N, L), target (N, L + 2) with [start]/[end], fits (N,) bool) for max_length L, from (source,
    target) pairs; a bidirectional run's source rows start with their target language's tag (`targets`).

    One spare column on each side tells a pair that fits from one that is too long, without ever
    holding a corpus-wide array wider than L + 3.
    """
    length = vectorizers.max_length
    source = vectorizers.source_rows([src for src, _ in pairs], length + 1, targets)
    target = vectorizers.target.encode([tgt for _, tgt in pairs], length + 3, add_start_end=True)
    fits = (source[:, length] == 0) & (target[:, length + 2] == 0)
    return source[:, :length], target[:, :length + 2], fits


def round_trip_check(target_ids: np.ndarray, originals: Sequence[str], tokenizer: Tokenizer) -> dict[str, Any]:
    """Exact-match rate of ids -> text against the cleaned target sentences, over every sentence and over those
    without an unknown token (all of them with SentencePiece's byte fallback)."""
    exact = in_vocab = exact_in_vocab = 0
    for ids, original in zip(target_ids, originals):
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


@dataclass
class Source:
    """One corpus of a prepare: its name (in reports, split files and metrics), its reader and its weight."""
    name: str
    corpus: Corpus
    weight: float = 1.0


def corpus_sources(data: DataConfig, input_path: str | Path | Sequence[str | Path] | None = None) -> list[Source]:
    """What to prepare: `input_path` (one corpus), else `data.corpora`, else the bundled sample."""
    if input_path is not None:
        paths = [input_path] if isinstance(input_path, (str, Path)) else list(input_path)
        return [Source(default_corpus_name([str(p) for p in paths]), Corpus(paths))]
    if data.corpora:
        return [Source(c.name, Corpus(c.paths, c.columns), c.weight) for c in data.corpora]
    return [Source(default_corpus_name([str(DEFAULT_SAMPLE)]), Corpus(DEFAULT_SAMPLE))]


def scan_corpus(corpus: Corpus, data: DataConfig, seed: int, progress: bool,
                exclusion: ExclusionList | None = None, desc: str = "prepare 1/3: hash") -> Scan:
    """Pass 1: count drops by reason, find duplicates by pair hash, drop excluded sentences and assign
    splits by group hash (over every valid pair, so exclusion does not move the split)."""
    dropped: Counter = Counter({reason: 0 for reason in DROP_REASONS})
    pair_hashes, group_hashes, excluded = array("Q"), array("Q"), array("B")
    lines = 0
    for result in corpus.parsed(progress, desc=desc):
        lines += 1
        if isinstance(result, str):
            dropped[result] += 1
        else:
            pair_hashes.append(pair_hash(*result))
            group_hashes.append(group_hash(result[0], seed))
            excluded.append(exclusion is not None and exclusion.excludes(*result))
    check_usable(corpus, lines, len(pair_hashes), dropped)
    pairs = np.frombuffer(pair_hashes, dtype=np.uint64).copy()
    del pair_hashes
    _, first = np.unique(pairs, return_index=True)       # the first of identical pairs is kept
    keep = np.zeros(len(pairs), dtype=bool)
    keep[first] = True
    dropped["duplicate"] = int(len(pairs) - len(first))
    is_excluded = np.frombuffer(excluded, dtype=np.uint8).astype(bool)
    dropped["excluded"] = int((keep & is_excluded).sum())
    keep &= ~is_excluded
    groups = np.frombuffer(group_hashes, dtype=np.uint64).copy()
    return Scan(lines, dropped, groups, keep, assign_splits(groups, data.valid_fraction, data.test_fraction))


def drop_held_out_elsewhere(scans: Sequence[Scan]) -> None:
    """Across corpora: drop each training pair whose English sentence is held out in any corpus.

    Splits rank groups by the same seeded hash in every corpus, so a sentence is nearly always held out
    everywhere or nowhere; this catches the few that fall on either side of two corpora's cut-offs."""
    if len(scans) < 2:
        return
    held_out = np.unique(np.concatenate([s.group_hashes[s.keep & (s.split != 0)] for s in scans]))
    for scan in scans:
        clash = scan.keep & (scan.split == 0) & np.isin(scan.group_hashes, held_out)
        scan.dropped["held_out_elsewhere"] = int(clash.sum())
        scan.keep &= ~clash


def sample_mask(candidates: np.ndarray, limit: int, seed: int) -> np.ndarray:
    """A boolean mask of at most `limit` of the True positions of `candidates`, chosen with `seed`."""
    positions = np.flatnonzero(candidates)
    if len(positions) > limit:
        positions = positions[np.sort(np.random.default_rng(seed).choice(len(positions), limit, replace=False))]
    mask = np.zeros(len(candidates), dtype=bool)
    mask[positions] = True
    return mask


def pair_key(corpus_number: int, position: int) -> str:
    """What seeds a training pair's term annotation: its corpus (1-based, in config order) and its position."""
    return f"{corpus_number}:{position}"


def tokenizer_sample(sources: Sequence[Source], scans: Sequence[Scan], limit: int, seed: int,
                     progress: bool, annotator: TermAnnotator | None = None) -> tuple[list[str], list[str]]:
    """Pass 2: a seeded sample of at most `limit` training sentences per side, drawn uniformly from the
    training pairs of all corpora (whatever their weights), in corpus order; annotated as pass 3 will
    annotate them (so the markers are in the vocabulary)."""
    train = np.concatenate([scan.keep & (scan.split == 0) for scan in scans])
    take_english, take_italian = sample_mask(train, limit, seed), sample_mask(train, limit, seed + 1)
    english, italian = [], []
    offset = 0
    for number, (source, scan) in enumerate(zip(sources, scans), 1):
        for position, (en, it) in enumerate(_valid_pairs(source.corpus, progress,
                                                          f"prepare 2/3: sample {source.name}")):
            index = offset + position
            if (take_english[index] or take_italian[index]) and annotator is not None:
                en, it = annotator(en, it, key=pair_key(number, position))
            if take_english[index]:
                english.append(en)
            if take_italian[index]:
                italian.append(it)
        offset += len(scan.keep)
    return english, italian


def _valid_pairs(corpus: Corpus, progress: bool, desc: str) -> Iterator[tuple[str, str]]:
    """The valid pairs in corpus order: index i here is index i of the `Scan` arrays."""
    return (result for result in corpus.parsed(progress, desc=desc) if not isinstance(result, str))


@dataclass
class SplitStats:
    """What the report needs from one split of one corpus, gathered block by block while its shards are written."""
    rows: int = 0
    too_long: int = 0
    groups: list = field(default_factory=list)          # group hashes (of the English side) of the written rows
    source_lengths: list = field(default_factory=list)
    target_lengths: list = field(default_factory=list)


class SplitWriters:
    """Pass 3: encode the kept pairs in blocks and append them to each split's shards (and .tsv files).

    Corpora are written one after another (`begin_corpus`), so each corpus's rows are contiguous in
    every split; with several corpora each also gets its own `<split>.<name>.tsv`. Pairs come in as read,
    (English, Italian), and are written in the run's direction: (source, target).
    """

    def __init__(self, out: Path, vectorizers: Vectorizers, names: Sequence[str], shard_rows: int,
                 annotator: TermAnnotator | None = None):
        self.annotator = annotator          # training pairs only: inline term annotations (pipeline/terms.py)
        widths = {"source": vectorizers.max_length, "target": vectorizers.max_length + 2}
        self.direction = vectorizers.direction
        self.out, self.vectorizers, self.names = out, vectorizers, list(names)
        self.shards = {name: ShardWriter(out, name, widths, shard_rows) for name in SPLITS}
        self.tsv = {split: [open(out / split_text_file(split), "w", encoding="utf-8", newline="\n")]
                    for split in ("valid", "test")}
        self.pending: dict[str, list[tuple[int, tuple[str, str], tuple[str, str], str]]] = {name: [] for name in SPLITS}
        self.stats: list[dict[str, SplitStats]] = []
        self.scan: Scan | None = None
        self.valid_ids: list[tuple[np.ndarray, np.ndarray]] = []
        self.valid_targets: list[str] = []

    def begin_corpus(self, scan: Scan) -> None:
        """Write the next corpus (of `names`, in order), whose pass-1 results are `scan`."""
        self._end_corpus()
        self.scan = scan
        self.stats.append({name: SplitStats() for name in SPLITS})
        if len(self.names) > 1:
            corpus = self.names[len(self.stats) - 1]
            for split, handles in self.tsv.items():
                handles.append(open(self.out / split_text_file(split, corpus), "w", encoding="utf-8", newline="\n"))

    def add(self, position: int, pair: tuple[str, str]) -> None:
        """Queue the valid pair at `position` (its index in the `Scan` arrays) unless it is dropped."""
        if not self.scan.keep[position]:
            return
        name = SPLITS[self.scan.split[position]]
        original = pair
        if name == "train" and self.annotator is not None:
            pair = self.annotator(*pair, key=pair_key(len(self.stats), position))
        for direction in self.vectorizers.directions:       # a bidirectional run learns each pair both ways
            self.pending[name].append((position, direction.orient(pair), direction.orient(original), direction.target))
        if len(self.pending[name]) >= ENCODE_BLOCK:
            self._flush(name)

    def close(self) -> dict[str, dict[str, Any]]:
        """Flush everything; returns the shard index entry of each split, with each corpus's rows."""
        self._end_corpus()
        self.discard()
        index = {name: writer.close() for name, writer in self.shards.items()}
        for name, entry in index.items():
            entry["corpora"] = [{"name": corpus, "rows": stats[name].rows} for corpus, stats in zip(self.names, self.stats)]
        return index

    def discard(self) -> None:
        """Close the open files (after a failure, the temporary directory is then removed whole)."""
        for handles in self.tsv.values():
            while handles:
                handles.pop().close()

    def _end_corpus(self) -> None:
        if self.scan is not None:
            for name in SPLITS:
                self._flush(name)
            for handles in self.tsv.values():
                if len(handles) > 1:
                    handles.pop().close()

    def _flush(self, name: str) -> None:
        if not self.pending[name]:
            return
        pending = self.pending[name]
        indices = np.array([entry[0] for entry in pending], dtype=np.int64)
        pairs = [entry[1] for entry in pending]
        targets = [entry[3] for entry in pending]
        source_ids, target_ids, fits = encode_pairs(self.vectorizers, pairs, targets)
        annotated_too_long = [row for row, (_, pair, original, _) in enumerate(pending)
                              if pair != original and not fits[row]]
        if annotated_too_long:               # annotations made these too long: keep the pairs as they were
            rows = np.array(annotated_too_long)
            pairs = list(pairs)
            for row in annotated_too_long:
                pairs[row] = pending[row][2]
            source_ids[rows], target_ids[rows], fits[rows] = encode_pairs(self.vectorizers, [pairs[r] for r in rows],
                                                                          [targets[r] for r in rows])
            self.annotator.stats.terms["dropped_too_long"] += len(rows)
        self.pending[name] = []
        source_ids, target_ids = source_ids[fits], target_ids[fits]
        self.shards[name].append(source_ids, target_ids)
        stats = self.stats[-1][name]
        stats.rows += len(source_ids)
        stats.too_long += int((~fits).sum())
        stats.groups.append(self.scan.group_hashes[indices[fits]])
        stats.source_lengths.append((source_ids != 0).sum(axis=1).astype(np.int16))
        stats.target_lengths.append(((target_ids != 0).sum(axis=1) - 2).astype(np.int16))
        kept = [pair for pair, target, ok in zip(pairs, targets, fits) if ok and target == self.direction.target]
        if name in self.tsv:                     # a bidirectional run's split files hold its default direction
            text = "".join(f"{src}\t{tgt}\n" for src, tgt in kept)
            for handle in self.tsv[name]:
                handle.write(text)
        if name == "valid":              # the valid split is small: the report checks it whole
            self.valid_ids.append((source_ids, target_ids))
            self.valid_targets.extend(tgt for (_, tgt), ok in zip(pairs, fits) if ok)


def _concatenate(blocks: list[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(blocks) if blocks else np.zeros(0, dtype=dtype)


def _split_summary(stats: Sequence[dict[str, SplitStats]]) -> dict[str, Any]:
    """Sizes, distinct English sentences and token lengths over the given corpora's split statistics."""
    groups = {name: _concatenate([g for s in stats for g in s[name].groups], np.uint64) for name in SPLITS}
    source_lengths = _concatenate([b for s in stats for n in SPLITS for b in s[n].source_lengths], np.int16)
    target_lengths = _concatenate([b for s in stats for n in SPLITS for b in s[n].target_lengths], np.int16)
    rows = {name: int(sum(s[name].rows for s in stats)) for name in SPLITS}
    too_long = int(sum(s[name].too_long for s in stats for name in SPLITS))
    return {
        "pairs_kept": sum(rows.values()),
        "split_sizes": rows,
        "distinct_english": {name: int(len(np.unique(groups[name]))) for name in SPLITS},
        "distinct_english_total": int(len(np.unique(np.concatenate(list(groups.values()))))),
        "too_long": too_long,
        "too_long_share": round(too_long / max(too_long + sum(rows.values()), 1), 6),
        "length_percentiles": {"source": percentiles(source_lengths), "target": percentiles(target_lengths)},
    }


def build_report(sources: Sequence[Source], scans: Sequence[Scan], data: DataConfig, writers: SplitWriters,
                 tokenizer: str) -> dict[str, Any]:
    """report.json, from the counts and the per-split statistics gathered while writing: totals first, then
    the same figures for each corpus (`corpora`), and a warning for each corpus that data.max_length cuts."""
    source_side, target_side = writers.vectorizers.source, writers.vectorizers.target
    length = writers.vectorizers.max_length
    valid_source = _concatenate([ids for ids, _ in writers.valid_ids], np.int32).reshape(-1, length)
    valid_target = _concatenate([ids for _, ids in writers.valid_ids], np.int32).reshape(-1, length + 2)
    corpora, warnings = [], []
    for source, scan, stats in zip(sources, scans, writers.stats):
        summary = _split_summary([stats])
        dropped = {reason: int(scan.dropped[reason]) for reason in DROP_REASONS}
        dropped["too_long"] = summary.pop("too_long")
        corpora.append({"name": source.name, "input": str(source.corpus), "weight": source.weight,
                        "lines": scan.lines, "dropped": dropped, **summary})
        if summary["too_long_share"] > data.too_long_warning:
            warnings.append(f"data.max_length={data.max_length} drops {100 * summary['too_long_share']:.1f}% of "
                            f"corpus {source.name} (longer pairs); raise data.max_length to keep them")
    totals = _split_summary(writers.stats)
    totals.pop("too_long")
    return {
        "input": "; ".join(str(source.corpus) for source in sources),
        "direction": writers.direction.code,
        **({"bidirectional": True} if writers.vectorizers.bidirectional else {}),
        "tokenizer": tokenizer,
        "pairs_kept": totals.pop("pairs_kept"),
        "dropped": {reason: int(sum(c["dropped"][reason] for c in corpora)) for reason in DROP_REASONS},
        **totals,
        "vocabulary_sizes": {"source": len(source_side), "target": len(target_side),
                             "joint": writers.vectorizers.joint},
        "valid_coverage": {"source": coverage(valid_source, source_side.unk_id),
                           "target": coverage(valid_target, target_side.unk_id)},
        "round_trip_valid": round_trip_check(valid_target, writers.valid_targets, target_side),
        "max_length": data.max_length,
        "corpora": corpora,
        "warnings": warnings,
    }


def parent_vectorizers(run_dir: str | Path, data: DataConfig, source: str) -> Vectorizers:
    """A parent run's tokenizers, unchanged (so ids mean the same), with this prepare's max_length and source;
    the parent must translate in this config's direction."""
    parent = RunDir(run_dir).require().load_vectorizers()
    if parent.direction != data.direction:
        raise ValueError(f"run {run_dir} translates {parent.direction.label}, but data.source_language/"
                         f"target_language ask for {data.direction.label}; fine-tune in the parent's direction")
    metadata = {**parent.metadata, "max_length": data.max_length, "source": source,
                "vectorizers_from": str(Path(run_dir).resolve())}
    return Vectorizers(parent.source, parent.target, metadata)


def prepare(config: Config, input_path: str | Path | Sequence[str | Path] | None = None,
            progress: bool = True, vectorizers_from: str | Path | None = None) -> dict[str, Any]:
    """Run the whole data stage in three streaming passes; returns the report also written to report.json.

    `input_path` is one tab-separated corpus file, or two line-aligned files (English, Italian); without it,
    `data.corpora` (each with its weight), else the bundled sample. Pairs with a side in `data.exclude`
    are dropped. `vectorizers_from` (a run directory) encodes with that run's tokenizers instead of
    fitting new ones, so a model trained there can be fine-tuned on this data.
    """
    started = time.perf_counter()
    data = config.data
    sources = corpus_sources(data, input_path)
    exclusion = ExclusionList(data.exclude)
    if vectorizers_from is not None:
        RunDir(vectorizers_from).require()
    check_output_dir(prepared_path(config), "prepared directory")
    scans = [scan_corpus(source.corpus, data, config.seed, progress, exclusion, f"prepare 1/3: hash {source.name}")
             for source in sources]
    drop_held_out_elsewhere(scans)
    if not any((scan.keep & (scan.split == 0)).any() for scan in scans):
        raise ValueError(f"{sources[0].corpus.label}: the train split is empty; lower the validation/test "
                         "fractions" + (" or the exclusion list" if len(exclusion) else ""))

    source_text = "; ".join(str(source.corpus) for source in sources)
    annotator = annotator_for(data, config.seed)
    if vectorizers_from is not None:
        vectorizers = parent_vectorizers(vectorizers_from, data, source_text)
        tokenizer = f"{vectorizers.source.kind} from {vectorizers_from}"
    else:
        english, italian = fit_tokenizers(data, *tokenizer_sample(sources, scans, data.tokenizer_max_sentences,
                                                                  config.seed, progress, annotator), config.seed)
        if annotator is not None:
            annotator.stats = AnnotationStats()          # the report counts the training pairs written
        metadata = {"max_length": data.max_length, "seed": config.seed, "source": source_text,
                    "tokenizer": data.tokenizer, "splits": SPLITS_INDEX_FILE,
                    "source_language": data.source_language, "target_language": data.target_language,
                    **({"bidirectional": True} if data.bidirectional else {})}
        vectorizers = Vectorizers.for_direction(english, italian, metadata)
        tokenizer = data.tokenizer if data.tokenizer == "word" else f"sentencepiece ({data.sentencepiece_type})"

    with atomic_directory(prepared_path(config)) as out:
        writers = SplitWriters(out, vectorizers, [source.name for source in sources], data.shard_rows, annotator)
        try:
            for source, scan in zip(sources, scans):
                writers.begin_corpus(scan)
                for position, pair in enumerate(_valid_pairs(source.corpus, progress,
                                                              f"prepare 3/3: encode {source.name}")):
                    writers.add(position, pair)
            shard_index = writers.close()
        except BaseException:
            writers.discard()
            raise
        if not any(stats["train"].rows for stats in writers.stats):
            raise ValueError(f"{sources[0].corpus.label}: every training pair is longer than "
                             f"data.max_length={data.max_length} tokens")
        report = build_report(sources, scans, data, writers, tokenizer)
        if vectorizers_from is not None:
            report["vectorizers_from"] = str(Path(vectorizers_from).resolve())
        if writers.annotator is not None:
            report["term_annotation"] = writers.annotator.stats.to_dict()
        if len(exclusion):
            report["excluded_sentences"] = {"files": [str(p) for p in exclusion.paths], "distinct": len(exclusion)}
        atomic_write_bytes(out / SPLITS_INDEX_FILE, index_bytes(shard_index))
        atomic_write_bytes(out / VECTORIZERS_FILE, vectorizers_to_bytes(vectorizers))
        report["seconds"] = round(time.perf_counter() - started, 2)
        atomic_write_json(out / REPORT_FILE, report)
    return report


def format_report(report: dict[str, Any]) -> str:
    """A human summary of a prepare report (a line per corpus when there are several, then any warnings)."""
    dropped = ", ".join(f"{k} {v}" for k, v in report["dropped"].items() if v) or "none"
    sizes = report["split_sizes"]
    rt = report["round_trip_valid"]
    rate = "n/a" if rt["exact_match_rate"] is None else f"{100 * rt['exact_match_rate']:.2f}%"
    lengths = report["length_percentiles"]
    direction = Direction(*report.get("direction", "en-it").split("-"))
    source_name, target_name = language_name(direction.source), language_name(direction.target)
    lines = [
        f"kept {report['pairs_kept']:,} pairs; dropped: {dropped}",
        f"splits: train {sizes['train']:,} / valid {sizes['valid']:,} / test {sizes['test']:,} pairs "
        f"({report['distinct_english']['train']:,} / {report['distinct_english']['valid']:,} / "
        f"{report['distinct_english']['test']:,} distinct English sentences)",
    ]
    corpora = report.get("corpora", [])
    if len(corpora) > 1:
        for c in corpora:
            s = c["split_sizes"]
            lines.append(f"  corpus {c['name']} (weight {c['weight']:g}): train {s['train']:,} / valid {s['valid']:,} / "
                         f"test {s['test']:,}; too long {100 * c['too_long_share']:.2f}%; {source_name} tokens p50/p95/max "
                         f"{c['length_percentiles']['source'].get('p50')}/{c['length_percentiles']['source'].get('p95')}/"
                         f"{c['length_percentiles']['source'].get('max')}")
    lines += [
        f"direction {direction.label}{' and back (one bidirectional model)' if report.get('bidirectional') else ''}; "
        f"{report['tokenizer']} vocabulary: {source_name} "
        f"{report['vocabulary_sizes']['source']:,}, {target_name} {report['vocabulary_sizes']['target']:,}"
        f"{' (joint)' if report['vocabulary_sizes']['joint'] else ''}; valid coverage {source_name} "
        f"{100 * report['valid_coverage']['source']:.2f}%, {target_name} {100 * report['valid_coverage']['target']:.2f}%",
        f"tokens per sentence p50/p95/max: {source_name} {lengths['source'].get('p50')}/{lengths['source'].get('p95')}/"
        f"{lengths['source'].get('max')}, {target_name} {lengths['target'].get('p50')}/{lengths['target'].get('p95')}/"
        f"{lengths['target'].get('max')}",
        f"ids->text round trip on valid: {rt['exact_matches']:,}/{rt['sentences']:,} sentences exact ({rate}); "
        f"{rt['sentences_in_vocabulary']:,} without unknown tokens",
    ]
    if "term_annotation" in report:
        annotated = report["term_annotation"]
        lines.append(f"term annotations: {annotated['annotated_pairs']:,} of {annotated['pairs']:,} training pairs ("
                     + ", ".join(f"{kind} {n:,}" for kind, n in sorted(annotated["terms"].items())) + " terms)")
    lines += [f"warning: {w}" for w in report.get("warnings", [])]
    return "\n".join(lines)
