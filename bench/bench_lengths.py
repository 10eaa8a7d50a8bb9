"""How much of each corpus a data.max_length would drop: the measurement behind a recipe's max_length.

usage: python bench/bench_lengths.py --config configs/broad60.yaml [--prepared runs/broad60/prepared]
                                     [--lengths 40 64 80 100 128]

Every valid pair of each of the config's `data.corpora` is tokenised with the prepared tokenizers
(pieces per side, as prepare counts them); a pair is dropped at length L when either side is longer.
Prints a Markdown table and one JSON line per corpus.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from common import emit

from pipeline.config import load_config
from pipeline.prepare import corpus_sources
from pipeline.rundir import VECTORIZERS_FILE, prepared_path
from pipeline.vectorizers import load_vectorizers

BLOCK = 8192


def pair_lengths(source, vectorizers) -> np.ndarray:
    """max(English pieces, Italian pieces) of every valid pair of one corpus."""
    lengths, block = [], []

    def flush():
        english = [len(vectorizers.english.token_ids(en)) for en, _ in block]     # corpora read (English, Italian)
        italian = [len(vectorizers.italian.token_ids(it)) for _, it in block]
        lengths.append(np.maximum(english, italian))
        block.clear()
    for result in source.corpus.parsed():
        if not isinstance(result, str):
            block.append(result)
            if len(block) == BLOCK:
                flush()
    if block:
        flush()
    return np.concatenate(lengths)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", required=True)
    parser.add_argument("--prepared", help="prepared directory whose tokenizers to use (default: the config's)")
    parser.add_argument("--lengths", type=int, nargs="+", default=[40, 64, 80, 100, 128])
    args = parser.parse_args()
    config = load_config(args.config)
    prepared = Path(args.prepared) if args.prepared else prepared_path(config)
    vectorizers = load_vectorizers(prepared / VECTORIZERS_FILE)
    print(f"| corpus | pairs | p50 | p95 | p99 | " + " | ".join(f"dropped at {n}" for n in args.lengths) + " |")
    print("| --- " * (5 + len(args.lengths)) + "|")
    for source in corpus_sources(config.data):
        lengths = pair_lengths(source, vectorizers)
        shares = {n: float((lengths > n).mean()) for n in args.lengths}
        p50, p95, p99 = (int(np.percentile(lengths, q)) for q in (50, 95, 99))
        print(f"| {source.name} | {len(lengths):,} | {p50} | {p95} | {p99} | "
              + " | ".join(f"{100 * shares[n]:.2f}%" for n in args.lengths) + " |")
        emit(f"max_length_drops_{source.name}", round(100 * shares[config.data.max_length], 3)
             if config.data.max_length in shares else None, "%", pairs=len(lengths), p50=p50, p95=p95, p99=p99,
             dropped={n: round(100 * s, 3) for n, s in shares.items()}, tokenizers=str(prepared))


if __name__ == "__main__":
    main()
