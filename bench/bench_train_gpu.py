"""Training throughput of a config's model on whatever device this process has: compile time, step time after
compiling, target tokens/s, matmul TFLOP/s and MFU.

Batches are synthetic (no data to prepare, so it runs on a bare GPU machine): a corpus of random ids whose
lengths are drawn around `--mean-length` tokens (clipped to `data.max_length`), batched as training batches it
(`pipeline.datasets.Batching` from the config's `train.*`, `ArrayBatches` as the feed). The first batch of each
shape is timed as compiling (compile and one step each; on JAX the programs are compiled side by side first, or
loaded from an earlier run's store, as training does); then `--steps` steps per round, `--rounds` rounds,
synchronised at each round's end, median reported. FLOPs count matmuls on non-padding tokens
(`pipeline.flops.train_flops`); MFU is against the device's data-sheet bfloat16 peak and, with `--peak`,
against a bfloat16 matmul measured here (8192^3 on a GPU, 2048^3 on a CPU).

usage: KERAS_BACKEND=jax python bench/bench_train_gpu.py [--config configs/gpu.yaml] [--steps 50] [--rounds 3]
       [--set SECTION.KEY=VALUE]... [--peak]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import batches_dataset, emit, median  # noqa: E402

from pipeline.extras import choose_backend  # noqa: E402

choose_backend()

import numpy as np  # noqa: E402
import keras  # noqa: E402


def measured_peak() -> float:
    """FLOP/s of a large bfloat16 matmul on this device (8192^3 on an accelerator, 2048^3 on a CPU)."""
    from pipeline.flops import device_name

    n = 2048 if device_name() == "cpu" else 8192
    a = keras.random.normal((n, n), dtype="bfloat16", seed=0)        # random data: zeros or ones run faster
    run = lambda: keras.ops.convert_to_numpy(keras.ops.sum(keras.ops.matmul(a, a)[:1, :1]))
    run()
    times = []
    for _ in range(5):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return 2 * n ** 3 / median(times)


def synthetic_corpus(config, vocab: int, sentences: int, mean_length: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Id arrays shaped as prepare writes them (English (n, max_length); Italian (n, max_length + 2) with [start]
    and [end]), lengths geometric around `mean_length` tokens and clipped to `data.max_length`, ids random."""
    rng = np.random.default_rng(seed)
    width = config.data.max_length
    source = np.clip(rng.geometric(1.0 / mean_length, sentences), 1, width)
    target = np.clip(source + rng.integers(-2, 3, sentences), 1, width)
    english = np.where(np.arange(width) < source[:, None], rng.integers(4, vocab, (sentences, width)), 0)
    italian = np.where(np.arange(width + 2) < target[:, None] + 2, rng.integers(4, vocab, (sentences, width + 2)), 0)
    return english.astype(np.int32), italian.astype(np.int32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/gpu.yaml")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE")
    parser.add_argument("--steps", type=int, default=50, help="steps per round (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--peak", action="store_true", help="also measure a bfloat16 matmul's FLOP/s here")
    parser.add_argument("--compare-sync", action="store_true",
                        help="also time rounds with Keras's TerminateOnNaN, which makes every step wait for its loss "
                             "(as training did before StepCallbacks), alternating with StopOnNaN's (as it does now)")
    parser.add_argument("--sentences", type=int, default=50_000, help="synthetic corpus size (default: %(default)s)")
    parser.add_argument("--mean-length", type=float, default=12.0,
                        help="mean tokens per sentence (Anki ~10, documentation ~25; default: %(default)s)")
    args = parser.parse_args()

    from pipeline.compilation import compile_log, enable_persistent_cache
    from pipeline.config import load_config
    from pipeline.datasets import (ArrayBatches, Batching, batch_plan, batch_shape, example_batches, gather_batch,
                                   sequence_lengths)
    from pipeline.flops import bf16_peak, config_train_flops, device_name
    from pipeline.model import build_model, count_parameters
    from pipeline.training import Precompile, StopOnNaN, compile_model

    config = load_config(args.config, args.set, None)
    enable_persistent_cache()
    if config.train.mixed_precision != "none":
        keras.mixed_precision.set_global_policy(config.train.mixed_precision)
    keras.utils.set_random_seed(config.seed)
    vocab = int(config.data.joint_vocab_size or config.data.it_vocab_size)
    model = compile_model(build_model(config, int(config.data.joint_vocab_size or config.data.en_vocab_size), vocab),
                          config)
    english, italian = synthetic_corpus(config, vocab, args.sentences, args.mean_length, config.seed)
    batching = Batching.from_config(config.train, english, italian)       # the config's buckets, as training has them
    plan = batch_plan(english, italian, batching, config.seed, 0)
    shapes = [batch_shape(english, italian, rows, batching) for rows in plan]
    first_of_each = [plan[shapes.index(shape)] for shape in sorted(set(shapes))]
    steps = min(args.steps, len(plan))
    tokens = sum(float(np.maximum(sequence_lengths(italian[rows]) - 1, 0).sum()) for rows in plan[:steps])
    flops = sum(config_train_flops(config, vocab, sequence_lengths(english[rows]),
                                   np.maximum(sequence_lengths(italian[rows]) - 1, 0)) for rows in plan[:steps])

    # on JAX, as training does: every shape's program compiled side by side (or loaded from an earlier run's store)
    ready = [Precompile(example_batches(english, italian, batching), [])] if keras.backend.backend() == "jax" else []
    started = time.perf_counter()
    with compile_log() as compiling:                                  # every shape once: compile + one step each
        model.fit(batches_dataset([gather_batch(english, italian, rows, batch_shape(english, italian, rows, batching))
                                   for rows in first_of_each]), epochs=1, verbose=0, callbacks=ready)
    first_pass = time.perf_counter() - started

    def timed_round(callbacks: list) -> float:
        start = time.perf_counter()
        history = model.fit(ArrayBatches(english, italian, batching, config.seed), steps_per_epoch=steps, epochs=1,
                            verbose=0, callbacks=callbacks)           # the training feed; its logs read: synchronised
        float(history.history["loss"][-1])
        return time.perf_counter() - start

    arms = {"plain": [], "waits_each_step": [keras.callbacks.TerminateOnNaN()], "overlapped": [StopOnNaN()]}
    rounds = {name: [] for name in (arms if args.compare_sync else ["plain"])}
    for _ in range(args.rounds):                                      # the arms alternate: side by side
        for name in rounds:
            rounds[name].append(timed_round(arms[name]))
    seconds = median(rounds["plain"])
    device = device_name()
    peak = bf16_peak(device)
    achieved = flops / seconds
    figures = {"device": device, "backend": keras.backend.backend(), "parameters": count_parameters(model),
               "precision": config.train.mixed_precision, "batch_shapes": len(first_of_each),
               "compile_seconds": round(compiling.seconds, 1) if compiling.measured else None,
               "programs_compiled_side_by_side": ready[0].done.compiled if ready else None,
               "programs_loaded": ready[0].done.loaded if ready else None,
               "first_pass_seconds": round(first_pass, 1), "ms_per_step": round(1000 * seconds / steps, 2),
               "matmul_tflops_per_s": round(achieved / 1e12, 3),
               "mfu_datasheet": round(achieved / peak, 4) if peak else None}
    if args.compare_sync:
        waits, overlapped = median(rounds["waits_each_step"]), median(rounds["overlapped"])
        figures.update(ms_per_step_waiting_each_step=round(1000 * waits / steps, 2),
                       ms_per_step_overlapped=round(1000 * overlapped / steps, 2),
                       overlap_speedup=round(waits / overlapped, 3))
    if args.peak:
        measured = measured_peak()
        figures.update(measured_peak_tflops=round(measured / 1e12, 1), mfu_measured_peak=round(achieved / measured, 4))
    emit("train_throughput_device", round(tokens / seconds), "non-pad target tokens/s", config=args.config,
         overrides=args.set, steps_per_round=steps, rounds=args.rounds,
         target=">= 150,000 tokens/s and >= 35% MFU (Transformer-base, mixed_bfloat16, one H100/H200)", **figures)


if __name__ == "__main__":
    main()
