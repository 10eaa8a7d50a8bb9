"""The data stage: clean -> tokenise -> filter -> grouped split -> vocabularies -> id arrays.

Everything lands in `<workdir>/prepared/` at once (built in a temporary directory, then
renamed), and the same input and config give byte-identical outputs.
"""
from __future__ import annotations

import io
import time
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from pipeline.config import Config
from pipeline.io_utils import atomic_directory, atomic_write_bytes, atomic_write_json
from pipeline.text import DROP_REASONS, grouping_key, read_pairs, split_by_source
from pipeline.vectorizers import (UNK, Vectorizers, build_vocabulary, decorate_target,
                                  ids_to_text, make_vectorizer, pretokenize_texts,
                                  vectorizers_to_bytes)

DEFAULT_SAMPLE = Path(__file__).resolve().parent.parent / "data" / "ita-eng-sample.txt.gz"
VECTORIZERS_FILE = "vectorizers.pkl"
SPLITS = ("train", "valid", "test")


def percentiles(lengths: np.ndarray) -> dict[str, int]:
    if len(lengths) == 0:
        return {}
    points = {f"p{p}": int(np.percentile(lengths, p)) for p in (50, 90, 95, 99)}
    return {**points, "max": int(lengths.max())}


def vectorize(layer, texts: list[str], batch_size: int = 65536) -> np.ndarray:
    """Run a TextVectorization layer over already tokenised strings, in batches."""
    import tensorflow as tf

    chunks = [layer(tf.constant(texts[i:i + batch_size], dtype=tf.string)).numpy()
              for i in range(0, len(texts), batch_size)]
    return np.concatenate(chunks).astype(np.int32)


def round_trip_check(italian_ids: np.ndarray, originals: list[str], vocabulary: list[str]) -> dict[str, Any]:
    """Exact-match rate of ids -> text against the cleaned Italian, for in-vocabulary sentences."""
    unk = vocabulary.index(UNK)
    in_vocab = exact = 0
    for ids, original in zip(italian_ids, originals):
        if (ids == unk).any():
            continue
        in_vocab += 1
        exact += ids_to_text(ids, vocabulary) == original
    return {"sentences_in_vocabulary": in_vocab, "exact_matches": exact,
            "exact_match_rate": exact / in_vocab if in_vocab else None}


def coverage(ids: np.ndarray, unk_id: int = 1) -> float:
    """Share of non-padding tokens that are not [UNK]."""
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
    data = config.data
    pairs, dropped = read_pairs(input_path, progress=progress)

    steps = tqdm(total=5, desc="prepare", disable=not progress, unit=" steps")
    en_tok = pretokenize_texts([en for en, _ in pairs])
    it_tok = pretokenize_texts([it for _, it in pairs])
    keep = [i for i in range(len(pairs))
            if len(en_tok[i].split()) <= data.max_length and len(it_tok[i].split()) <= data.max_length]
    dropped["too_long"] += len(pairs) - len(keep)
    if not keep:
        raise ValueError(f"corpus file {input_path}: every pair is longer than data.max_length={data.max_length}")
    pairs = [pairs[i] for i in keep]
    en_tok = [en_tok[i] for i in keep]
    it_tok = [decorate_target(it_tok[i]) for i in keep]
    steps.update()

    splits = split_by_source([en for en, _ in pairs], data.valid_fraction, data.test_fraction, config.seed)
    train = splits["train"]
    if len(train) == 0:
        raise ValueError(f"corpus file {input_path}: the train split is empty; lower the validation/test fractions")
    steps.update()

    en_vocab = build_vocabulary((en_tok[i] for i in train), data.en_vocab_size)
    it_vocab = build_vocabulary((it_tok[i] for i in train), data.it_vocab_size)
    metadata = {"max_length": data.max_length, "seed": config.seed, "source": str(input_path),
                "splits": {name: f"{name}.npz" for name in SPLITS}}
    vectorizers = Vectorizers(make_vectorizer(en_vocab, data.max_length, "english_vectorizer"),
                              make_vectorizer(it_vocab, data.max_length + 2, "italian_vectorizer"),
                              metadata)
    steps.update()

    arrays = {}
    for name, index in splits.items():
        arrays[name] = (vectorize(vectorizers.english, [en_tok[i] for i in index]),
                        vectorize(vectorizers.italian, [it_tok[i] for i in index]))
    steps.update()

    it_vocabulary = vectorizers.italian_vocabulary
    valid_italian = [pairs[i][1] for i in splits["valid"]]
    report = {
        "input": str(input_path),
        "pairs_kept": len(pairs),
        "dropped": {reason: int(dropped[reason]) for reason in DROP_REASONS},
        "split_sizes": {name: int(len(index)) for name, index in splits.items()},
        "distinct_english": {name: len({grouping_key(pairs[i][0]) for i in index}) for name, index in splits.items()},
        "distinct_english_total": len({grouping_key(en) for en, _ in pairs}),
        "vocabulary_sizes": {"english": vectorizers.english.vocabulary_size(),
                             "italian": vectorizers.italian.vocabulary_size()},
        "valid_coverage": {"english": coverage(arrays["valid"][0]), "italian": coverage(arrays["valid"][1])},
        "length_percentiles": {
            "english": percentiles(np.array([len(t.split()) for t in en_tok])),
            "italian": percentiles(np.array([len(t.split()) - 2 for t in it_tok])),
        },
        "round_trip_valid": round_trip_check(arrays["valid"][1], valid_italian, it_vocabulary),
    }
    steps.update()
    steps.close()

    with atomic_directory(config.prepared_dir) as out:
        atomic_write_bytes(out / VECTORIZERS_FILE, vectorizers_to_bytes(vectorizers))
        for name, (en_ids, it_ids) in arrays.items():
            _write_npz(out / f"{name}.npz", english=en_ids, italian=it_ids)
        for name in ("valid", "test"):
            _write_tsv(out / f"{name}.tsv", [pairs[i] for i in splits[name]])
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
        f"vocabulary: English {report['vocabulary_sizes']['english']:,}, Italian {report['vocabulary_sizes']['italian']:,}; "
        f"valid coverage English {100 * report['valid_coverage']['english']:.2f}%, "
        f"Italian {100 * report['valid_coverage']['italian']:.2f}%",
        f"tokens per sentence p50/p95/max: English {lengths['english'].get('p50')}/{lengths['english'].get('p95')}/"
        f"{lengths['english'].get('max')}, Italian {lengths['italian'].get('p50')}/{lengths['italian'].get('p95')}/"
        f"{lengths['italian'].get('max')}",
        f"ids->text round trip on valid: {rt['exact_matches']:,}/{rt['sentences_in_vocabulary']:,} in-vocabulary "
        f"sentences exact ({rate})",
    ])
