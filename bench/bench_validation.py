"""An epoch's validation with several corpora, alternating in one process:

- `twice`: as training validated until 2026-11-27: fit() evaluated the whole validation split (batches that mix
  corpora), then `CorpusValidation` each corpus's batches, so every sentence was evaluated twice;
- `once`: as now: `CorpusValidation` alone evaluates each corpus's batches and combines their results into the
  overall loss and accuracy.

The model is the config's, with its initial weights (evaluating reads them, it does not care what they are),
at its mixed precision; the first round compiles (JAX, TensorFlow) and is not counted.

usage: python bench/bench_validation.py --config configs/gpu.yaml --workdir W [--rounds 4] [--set model.d_model=64]
(W: where the config's data was prepared, with several corpora)
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import emit, median  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/gpu.yaml")
    parser.add_argument("--workdir", help="where the config's data was prepared (default: its workdir)")
    parser.add_argument("--rounds", type=int, default=4, help="the first of them compiles and is not counted")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one config value (repeatable)")
    args = parser.parse_args()

    import keras

    from pipeline.config import load_config
    from pipeline.datasets import feeder
    from pipeline.model import build_model
    from pipeline.rundir import VECTORIZERS_FILE, prepared_path
    from pipeline.training import CorpusValidation, TrainingData, compile_model
    from pipeline.vectorizers import vocabulary_sizes

    config = load_config(args.config, args.set, args.workdir)
    if config.train.mixed_precision != "none":                                   # as training runs it
        keras.mixed_precision.set_global_policy(config.train.mixed_precision)
    data = TrainingData.load(config)
    feeds = data.validation_by_corpus()
    if not feeds:
        sys.exit(f"error: {prepared_path(config)}: one corpus only; this bench needs several")
    model = build_model(config, *vocabulary_sizes(prepared_path(config) / VECTORIZERS_FILE))
    compile_model(model, config)
    whole = feeder(data.valid_en, data.valid_it, data.valid_batching, config.seed, fixed=True)
    by_corpus = CorpusValidation(feeds, data.validation_weights())
    by_corpus.set_model(model)
    print(f"{len(data.valid_en):,} validation pairs in {len(feeds)} corpora, backend {keras.backend.backend()}",
          flush=True)

    def validate(twice: bool) -> float:
        started = time.perf_counter()
        if twice:
            model.evaluate(whole, verbose=0)
        by_corpus.on_epoch_end(0, {})
        return time.perf_counter() - started

    seconds: dict[str, list[float]] = {"twice": [], "once": []}
    for round_ in range(args.rounds):
        for mode in (("twice", "once") if round_ % 2 == 0 else ("once", "twice")):
            took = validate(mode == "twice")
            print(f"round {round_ + 1}: {mode} {took:.1f} s" + (" (compiling, not counted)" if not round_ else ""),
                  flush=True)
            if round_:
                seconds[mode].append(round(took, 2))
    before, after = median(seconds["twice"]), median(seconds["once"])
    emit(f"validation_{Path(args.config).stem}", round(after, 2), "s an epoch's validation, each sentence once "
         "(median)", twice_s=round(before, 2), speedup=round(before / after, 2), runs=seconds,
         pairs=len(data.valid_en), corpora=len(feeds), backend=keras.backend.backend(), overrides=args.set)


if __name__ == "__main__":
    main()
