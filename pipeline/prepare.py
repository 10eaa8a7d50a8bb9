"""The data stage: clean -> grouped split -> fit tokenizers on train -> id arrays -> drop too-long pairs.

Everything lands in `<workdir>/prepared/` at once (built in a temporary directory, then
renamed), and the same input and config give byte-identical outputs. No TensorFlow is needed.
"""
from __future__ import annotations

import io
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from tqdm import tqdm

from pipeline.config import Config, DataConfig
from pipeline.io_utils import atomic_directory, atomic_write_bytes, atomic_write_json
from pipeline.rundir import VECTORIZERS_FILE, check_output_dir
from pipeline.text import DROP_REASONS, grouping_key, read_pairs, split_by_source
from pipeline.tokenizers import WORD_END, WORD_START, SentencePieceTokenizer, Tokenizer, WordTokenizer, word_tokens
from pipeline.vectorizers import Vectorizers, vectorizers_to_bytes

DEFAULT_SAMPLE = Path(__file__).resolve().parent.parent / "data" / "ita-eng-sample.txt.gz"
SPLITS = ("train", "valid", "test")


def percentiles(lengths: np.ndarray) -> dict[str, int]:
    if len(lengths) == 0:
        return {}
    points = {f"p{p}": int(np.percentile(lengths, p)) for p in (50, 90, 95, 99)}
    return {**points, "max": int(lengths.max())}


def _sample(sentences: Sequence[str], limit: int, seed: int) -> list[str]:
    """At most `limit` sentences, a seeded sample in corpus order."""
    if len(sentences) <= limit:
        return list(sentences)
    keep = np.sort(np.random.default_rng(seed).choice(len(sentences), limit, replace=False))
    return [sentences[i] for i in keep]


def fit_tokenizers(data: DataConfig, english: Sequence[str], italian: Sequence[str],
                   seed: int) -> tuple[Tokenizer, Tokenizer]:
    """Train the English and Italian tokenizers (one joint tokenizer when data.joint_vocab_size > 0)."""
    limit = data.tokenizer_max_sentences
    english, italian = _sample(english, limit, seed), _sample(italian, limit, seed + 1)
    if data.tokenizer == "sentencepiece":
        def train(sentences, size):
            return SentencePieceTokenizer.train(sentences, size, data.sentencepiece_type, limit, seed)
        if data.joint_vocab_size:
            joint = train([*english, *italian], data.joint_vocab_size)
            return joint, joint
        return train(english, data.en_vocab_size), train(italian, data.it_vocab_size)
    en_tokens = [word_tokens(s) for s in english]
    it_tokens = [word_tokens(s) for s in italian]
    specials = (WORD_START, WORD_END)
    if data.joint_vocab_size:
        joint = WordTokenizer.fit([*en_tokens, *it_tokens], data.joint_vocab_size, extra=specials)
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


def _write_npz(path: Path, **arrays: np.ndarray) -> None:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    atomic_write_bytes(path, buffer.getvalue())


def _write_tsv(path: Path, pairs: list[tuple[str, str]]) -> None:
    atomic_write_bytes(path, "".join(f"{en}\t{it}\n" for en, it in pairs).encode("utf-8"))


def prepare(config: Config, input_path: str | Path | None = None, progress: bool = True) -> dict[str, Any]:
    """Run the whole data stage and return the report that is also written to report.json."""
    started = time.perf_counter()
    input_path = Path(input_path) if input_path is not None else DEFAULT_SAMPLE
    check_output_dir(config.prepared_dir, "prepared directory")
    data = config.data
    pairs, dropped = read_pairs(input_path, progress=progress)
    steps = tqdm(total=4, desc="prepare", disable=not progress, unit=" steps")

    splits = split_by_source([en for en, _ in pairs], data.valid_fraction, data.test_fraction, config.seed)
    if len(splits["train"]) == 0:
        raise ValueError(f"corpus file {input_path}: the train split is empty; lower the validation/test fractions")
    steps.set_postfix_str(f"fitting {data.tokenizer} vocabularies")
    english, italian = fit_tokenizers(data, [pairs[i][0] for i in splits["train"]],
                                      [pairs[i][1] for i in splits["train"]], config.seed)
    metadata = {"max_length": data.max_length, "seed": config.seed, "source": str(input_path),
                "tokenizer": data.tokenizer, "splits": {name: f"{name}.npz" for name in SPLITS}}
    vectorizers = Vectorizers(english, italian, metadata)
    steps.update()

    steps.set_postfix_str("encoding")
    arrays, kept = {}, {}
    for name, index in splits.items():
        en_ids, it_ids, fits = encode_pairs(vectorizers, [pairs[i] for i in index])
        dropped["too_long"] += int((~fits).sum())
        arrays[name], kept[name] = (en_ids[fits], it_ids[fits]), index[fits]
    if len(kept["train"]) == 0:
        raise ValueError(f"corpus file {input_path}: every training pair is longer than "
                         f"data.max_length={data.max_length} tokens")
    steps.update()

    valid_italian = [pairs[i][1] for i in kept["valid"]]
    all_kept = np.concatenate([kept[name] for name in SPLITS])
    en_lengths = np.concatenate([(arrays[n][0] != 0).sum(1) for n in SPLITS])
    it_lengths = np.concatenate([(arrays[n][1] != 0).sum(1) - 2 for n in SPLITS])
    report = {
        "input": str(input_path),
        "tokenizer": data.tokenizer if data.tokenizer == "word" else f"sentencepiece ({data.sentencepiece_type})",
        "pairs_kept": int(len(all_kept)),
        "dropped": {reason: int(dropped[reason]) for reason in DROP_REASONS},
        "split_sizes": {name: int(len(kept[name])) for name in SPLITS},
        "distinct_english": {name: len({grouping_key(pairs[i][0]) for i in kept[name]}) for name in SPLITS},
        "distinct_english_total": len({grouping_key(pairs[i][0]) for i in all_kept}),
        "vocabulary_sizes": {"english": len(english), "italian": len(italian), "joint": vectorizers.joint},
        "valid_coverage": {"english": coverage(arrays["valid"][0], english.unk_id),
                           "italian": coverage(arrays["valid"][1], italian.unk_id)},
        "length_percentiles": {"english": percentiles(en_lengths), "italian": percentiles(it_lengths)},
        "round_trip_valid": round_trip_check(arrays["valid"][1], valid_italian, italian),
    }
    steps.update()

    with atomic_directory(config.prepared_dir) as out:
        atomic_write_bytes(out / VECTORIZERS_FILE, vectorizers_to_bytes(vectorizers))
        for name, (en_ids, it_ids) in arrays.items():
            _write_npz(out / f"{name}.npz", english=en_ids, italian=it_ids)
        for name in ("valid", "test"):
            _write_tsv(out / f"{name}.tsv", [pairs[i] for i in kept[name]])
        report["seconds"] = round(time.perf_counter() - started, 2)
        atomic_write_json(out / "report.json", report)
    steps.update()
    steps.close()
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
