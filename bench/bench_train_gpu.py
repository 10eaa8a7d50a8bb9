"""Training throughput of a config's model on whatever device this process has: compile time, step time after
compiling, target tokens/s, matmul TFLOP/s and MFU.

Batches are synthetic (no data to prepare, so it runs on a bare GPU machine): each training batch is one of
the config's bucket shapes (`train.buckets` widths, rows from `train.batch_tokens`), its sentences' lengths
drawn from a realistic distribution (`--mean-length`, clipped to the width), ids random. The first pass over
the shapes is timed as compiling (compile and one step); then `--steps` steps per round, `--rounds` rounds,
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

from common import emit, median  # noqa: E402

from pipeline.compilation import choose_backend  # noqa: E402

choose_backend()

import numpy as np  # noqa: E402
import keras  # noqa: E402


def measured_peak() -> float:
    """FLOP/s of a large bfloat16 matmul on this device (8192^3 on an accelerator, 2048^3 on a CPU)."""
    from pipeline.flops import device_name

    n = 2048 if device_name() == "cpu" else 8192
    a = keras.ops.ones((n, n), dtype="bfloat16")
    run = lambda: keras.ops.convert_to_numpy(keras.ops.sum(keras.ops.matmul(a, a)[:1, :1]))
    run()
    times = []
    for _ in range(5):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return 2 * n ** 3 / median(times)


def synthetic_batches(config, vocab: int, seed: int = 0) -> list[tuple]:
    """One batch per bucket width: rows from `train.batch_tokens` (or `train.batch_size`), lengths from a
    geometric-like distribution around `mean` tokens, clipped to the width."""
    rng = np.random.default_rng(seed)
    t = config.train
    max_len = config.data.max_length
    boundaries = np.unique(np.linspace(max_len / t.buckets, max_len, t.buckets).round().astype(int))
    width_step = max(t.bucket_width, 1)
    boundaries = sorted({int(-(-w // width_step) * width_step) for w in boundaries})
    batches = []
    for width in boundaries:
        rows = max(8, (t.batch_tokens // width) // 8 * 8) if t.batch_tokens else t.batch_size
        lower = boundaries[boundaries.index(width) - 1] if boundaries.index(width) else 1
        source = rng.integers(lower, width + 1, rows)
        target = np.clip(source + rng.integers(-2, 3, rows), 1, width - 1)
        en = np.zeros((rows, width), np.int32)
        it = np.zeros((rows, width + 1), np.int32)
        for i in range(rows):
            en[i, :source[i]] = rng.integers(4, vocab, source[i])
            it[i, :target[i] + 1] = rng.integers(4, vocab, target[i] + 1)
        batches.append(({"encoder_inputs": en, "decoder_inputs": it[:, :-1]}, it[:, 1:]))
    return batches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/gpu.yaml")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE")
    parser.add_argument("--steps", type=int, default=50, help="steps per round (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--peak", action="store_true", help="also measure a bfloat16 matmul's FLOP/s here")
    args = parser.parse_args()

    from pipeline.compilation import compile_log, enable_persistent_cache
    from pipeline.config import load_config
    from pipeline.flops import bf16_peak, config_train_flops, device_name
    from pipeline.model import build_model, count_parameters
    from pipeline.training import compile_model

    config = load_config(args.config, args.set, None)
    enable_persistent_cache()
    if config.train.mixed_precision != "none":
        keras.mixed_precision.set_global_policy(config.train.mixed_precision)
    keras.utils.set_random_seed(config.seed)
    vocab = int(config.data.joint_vocab_size or config.data.it_vocab_size)
    model = compile_model(build_model(config, int(config.data.joint_vocab_size or config.data.en_vocab_size), vocab),
                          config)
    batches = synthetic_batches(config, vocab, config.seed)
    tokens = [float((targets != 0).sum()) for _, targets in batches]
    flops = [config_train_flops(config, vocab, (inputs["encoder_inputs"] != 0).sum(axis=1), (targets != 0).sum(axis=1))
             for inputs, targets in batches]
    stream = lambda n: [batches[i % len(batches)] for i in range(n)]

    class Feed(keras.utils.PyDataset):
        def __init__(self, n):
            super().__init__()
            self.items = stream(n)

        def __len__(self):
            return len(self.items)

        def __getitem__(self, index):
            return self.items[index]

    started = time.perf_counter()
    with compile_log() as compiling:
        model.fit(Feed(len(batches)), epochs=1, verbose=0)          # every shape once: compile + one step each
    first_pass = time.perf_counter() - started
    rounds = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        history = model.fit(Feed(args.steps), epochs=1, verbose=0)     # its logs are read: synchronised
        float(history.history["loss"][-1])
        rounds.append(time.perf_counter() - start)
    seconds = median(rounds)
    step_tokens = sum(tokens[i % len(batches)] for i in range(args.steps))
    step_flops = sum(flops[i % len(batches)] for i in range(args.steps))
    device = device_name()
    peak = bf16_peak(device)
    achieved = step_flops / seconds
    figures = {"device": device, "backend": keras.backend.backend(), "parameters": count_parameters(model),
               "precision": config.train.mixed_precision, "batch_shapes": len(batches),
               "compile_seconds": round(compiling.seconds, 1) if compiling.measured else None,
               "first_pass_seconds": round(first_pass, 1), "ms_per_step": round(1000 * seconds / args.steps, 2),
               "matmul_tflops_per_s": round(achieved / 1e12, 3),
               "mfu_datasheet": round(achieved / peak, 4) if peak else None}
    if args.peak:
        measured = measured_peak()
        figures.update(measured_peak_tflops=round(measured / 1e12, 1), mfu_measured_peak=round(achieved / measured, 4))
    emit("train_throughput_device", round(step_tokens / seconds), "non-pad target tokens/s", config=args.config,
         overrides=args.set, steps_per_round=args.steps, rounds=args.rounds,
         target=">= 150,000 tokens/s and >= 35% MFU (Transformer-base, mixed_bfloat16, one H100/H200)", **figures)


if __name__ == "__main__":
    main()
