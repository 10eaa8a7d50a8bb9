"""Compile time of a config's whole run, before and after the compile work of issue 35 (JAX; run each mode in a
fresh process: `--mode` picks one).

A run needs one training and one validation program per batch shape. This readies exactly those, on the
config's prepared data, and reports the wall time spent tracing, lowering and compiling (`CompileLog`):

- `before`: as training did before: Keras compiles each program when its shape first comes, one after
  another, with `train.jit_compile` as the config says (false: op by op, as `tiny` ran on JAX), and no
  persistent cache;
- `after`: as training does now: the programs compiled side by side (or loaded from the store, on a second
  run), with the persistent cache of `--cache`.

usage: KERAS_BACKEND=jax python bench/bench_compile.py --config configs/tiny.yaml --mode before
       KERAS_BACKEND=jax python bench/bench_compile.py --config configs/tiny.yaml --mode after --cache /tmp/c  (x2)
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import batches_dataset, emit  # noqa: E402
from pipeline.rundir import VECTORIZERS_FILE, prepared_path  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", required=True)
    parser.add_argument("--workdir", help="where the config's data was prepared (default: its workdir)")
    parser.add_argument("--mode", choices=("before", "after"), required=True)
    parser.add_argument("--cache", help="the persistent cache's folder for --mode after")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one config value (repeatable), e.g. --set train.buckets=4")
    args = parser.parse_args()
    os.environ["NMT_COMPILATION_CACHE"] = args.cache if args.mode == "after" and args.cache else "off"

    import keras

    from pipeline.compilation import compile_log, enable_persistent_cache
    from pipeline.config import load_config
    from pipeline.datasets import example_batches
    from pipeline.model import build_model
    from pipeline.training import TrainingData, compile_model
    from pipeline.vectorizers import vocabulary_sizes

    config = load_config(args.config, args.set, args.workdir)
    enable_persistent_cache()
    if config.train.mixed_precision != "none":
        keras.mixed_precision.set_global_policy(config.train.mixed_precision)
    data = TrainingData.load(config)
    model = build_model(config, *vocabulary_sizes(prepared_path(config) / VECTORIZERS_FILE))
    compile_model(model, config)
    if args.mode == "before":
        model.jit_compile = bool(config.train.jit_compile)       # before: false meant op by op on JAX
    train = example_batches(data.train_en, data.train_it, data.batching)
    valid = example_batches(data.valid_en, data.valid_it, data.valid_batching)

    callbacks = [data.precompile()] if args.mode == "after" else []
    started = time.perf_counter()
    with compile_log() as log:
        model.fit(batches_dataset(train), validation_data=batches_dataset(valid), epochs=1, verbose=0, callbacks=callbacks)
    wall = time.perf_counter() - started
    ready = callbacks[0].done if callbacks else None
    emit(f"compile_{Path(args.config).stem}_{args.mode}", round(log.seconds, 1), "s compiling (wall)",
         programs=len(train) + len(valid), compiled=log.programs - log.loaded, loaded=log.loaded,
         ready_compiled=ready.compiled if ready else None, ready_loaded=ready.loaded if ready else None,
         fit_seconds=round(wall, 1), phases={k: round(v, 1) for k, v in log.phases.items()},
         largest=[(round(seconds, 1), name) for seconds, name in log.largest[:8]], jit_compile=bool(config.train.jit_compile) or args.mode == "after",
         overrides=args.set)


if __name__ == "__main__":
    main()
