"""Training throughput at the tutorial's architecture, side by side with the reference, one process.

Both train on the first 50,000 pairs of the shared corpus (as the reference's bench-step
does): 4+4 layers, d_model 128, ff 512, 8 heads, sequence length 20, vocabularies 10k/20k.
The reference feeds batches of 64 sentences padded to 20; ours runs one or more `--variant`s
(config overrides: sentence or token batches, XLA, mixed_bfloat16). The figure is non-padding
target tokens per second; each round times `--steps` steps (scaled by batch size, so every
variant times about as many tokens) after one untimed pass over the same batches, which
compiles every batch shape, and the median over rounds is reported. Rounds alternate between
the reference and the variants, so a busy machine slows all of them alike.

Achieved FLOP/s count the model's matmul work on non-padding tokens only (`pipeline.flops.train_flops`).

usage: python bench/bench_train.py [--rounds 3] [--steps 40] [--variant NAME:KEY=VALUE,...]...
       KERAS_BACKEND=jax python bench/bench_train.py --no-reference --variant ...
"""
from __future__ import annotations

import argparse
import gzip
import importlib.util
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from common import REFERENCE, SHARED_CORPUS, emit, median  # noqa: E402

import numpy as np  # noqa: E402
import keras  # noqa: E402
from pipeline.rundir import VECTORIZERS_FILE, prepared_path  # noqa: E402

PAIRS, BATCH, SEQ = 50_000, 64, 20
D_MODEL, FF, LAYERS, SOURCE_VOCAB, TARGET_VOCAB = 128, 512, 4, 10_000, 20_000
ARCH = [f"model.d_model={D_MODEL}", "model.num_heads=8", f"model.ff_dim={FF}", f"model.encoder_layers={LAYERS}",
        f"model.decoder_layers={LAYERS}", "model.dropout=0.1", "model.norm_first=false", "model.tie_embeddings=false",
        "model.scale_embeddings=false", f"data.max_length={SEQ}", f"data.en_vocab_size={SOURCE_VOCAB}",
        f"data.it_vocab_size={TARGET_VOCAB}", "data.valid_fraction=0.01", "data.test_fraction=0.01",
        f"train.batch_size={BATCH}"]
PEAK_FLOPS = {"float32": 280e9, "mixed_bfloat16": 1144e9}   # this CPU's measured matmul peaks (fp32; bf16 on AMX)
DEFAULT_VARIANTS = ["sentences64:train.batch_size=64", "tokens4096:train.batch_tokens=4096",
                    "tokens4096-xla:train.batch_tokens=4096,train.jit_compile=true"]


def train_flops(source_lengths: np.ndarray, target_lengths: np.ndarray) -> float:
    """Matmul FLOPs of one training step over these sentences at the tutorial's architecture (`pipeline.flops`)."""
    from pipeline.flops import train_flops as flops

    return flops(D_MODEL, FF, LAYERS, LAYERS, TARGET_VOCAB, source_lengths, target_lengths)


class StepTimer(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.times: list[float] = []

    def on_train_batch_begin(self, batch, logs=None):
        self._start = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        self.times.append(time.perf_counter() - self._start)


def load_reference():
    spec = importlib.util.spec_from_file_location("tutorial_baseline", REFERENCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Runner:
    """A compiled model, its batch stream (`data()` starts it afresh), and the tokens, FLOPs and sentences
    of its first n batches."""

    def __init__(self, model, data, tokens, flops, sentences, steps: int, precision: str = "float32"):
        self.model, self.data, self.steps, self.precision = model, data, steps, precision
        self.tokens, self.flops, self.sentences = tokens, flops, sentences
        self.extra: dict = {}

    def round(self) -> tuple[float, float, float, float]:
        """(tokens/s, FLOP/s, sentences/s, median seconds per step) over `steps` steps from the stream's start."""
        timer = StepTimer()
        self.model.fit(self.data(), steps_per_epoch=self.steps, epochs=1, verbose=0, callbacks=[timer])
        seconds = sum(timer.times)
        return (self.tokens(self.steps) / seconds, self.flops(self.steps) / seconds,
                self.sentences(self.steps) / seconds, median(timer.times))


def reference_runner(steps: int) -> Runner:
    ref = load_reference()
    pairs = list(ref.read_pairs(str(SHARED_CORPUS)))[:PAIRS]
    en, it = ref.vectorizers(pairs)
    model = ref.build_model()
    model.compile(optimizer=keras.optimizers.Adam(ref.Noam(), 0.9, 0.98, 1e-9), loss=ref.masked_loss,
                  metrics=[ref.masked_acc])
    data = ref.dataset(pairs, en, it).repeat()
    # target = ids[1:] of SEQ+1 positions: real tokens after [start], truncated at SEQ; source truncated at SEQ
    target = np.array([min(len(p[1].split()), SEQ + 1) - 1 for p in pairs])
    source = np.array([min(len(p[0].split()), SEQ) for p in pairs])
    per_step = BATCH * float(target.mean())
    flops_per_step = BATCH * train_flops(source, target) / len(pairs)
    return Runner(model, lambda: data, lambda n: n * per_step, lambda n: n * flops_per_step, lambda n: n * BATCH, steps)


def prepare_data(workdir: Path):
    from pipeline.config import load_config
    from pipeline.datasets import load_split
    from pipeline.prepare import prepare

    corpus = workdir / "corpus.txt"
    with gzip.open(SHARED_CORPUS, "rt", encoding="utf-8") as source:
        corpus.write_text("".join(line for _, line in zip(range(PAIRS), source)), encoding="utf-8")
    config = load_config(None, ARCH, str(workdir))
    prepare(config, corpus, progress=False)
    return config.workdir, load_split(prepared_path(config), "train")


def our_runner(workdir: str, arrays, overrides: list[str], base_steps: int) -> Runner:
    from pipeline.config import load_config
    from pipeline.datasets import Batching, batch_plan, feeder
    from pipeline.model import build_model
    from pipeline.training import compile_model
    from pipeline.vectorizers import vocabulary_sizes

    config = load_config(None, ARCH + overrides, workdir)
    english, italian = arrays
    precision = config.train.mixed_precision
    keras.mixed_precision.set_global_policy("float32" if precision == "none" else precision)
    model = compile_model(build_model(config, *vocabulary_sizes(prepared_path(config) / VECTORIZERS_FILE)), config)
    batching = Batching.from_config(config.train, english, italian)
    plan = batch_plan(english, italian, batching, seed=0, epoch=0)
    # time about as many sentences as `base_steps` batches of 64 (every round the same batches: epoch 0's first)
    steps = max(4, round(base_steps * BATCH / np.mean([len(rows) for rows in plan])))
    steps = min(steps, len(plan))
    data = lambda: feeder(english, italian, batching, seed=0, first_epoch=0, skip=0, end_epoch=1)
    source = [(english[rows] != 0).sum(axis=1) for rows in plan[:steps]]
    target = [(italian[rows][:, 1:] != 0).sum(axis=1) for rows in plan[:steps]]
    tokens = np.cumsum([t.sum() for t in target])
    flops = np.cumsum([train_flops(s, t) for s, t in zip(source, target)])
    sentences = np.cumsum([len(rows) for rows in plan[:steps]])
    runner = Runner(model, data, lambda n: float(tokens[n - 1]), lambda n: float(flops[n - 1]),
                    lambda n: float(sentences[n - 1]), steps, "float32" if precision == "none" else precision)
    runner.extra = {"overrides": overrides, "bucket_boundaries": list(batching.boundaries)}
    runner.round()                    # untimed: compiles every shape these steps use
    keras.mixed_precision.set_global_policy("float32")
    return runner


def parse_variant(text: str) -> tuple[str, list[str]]:
    name, _, overrides = text.partition(":")
    return name, [o for o in overrides.split(",") if o]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=40, help="steps per round at 64 sentences a batch")
    parser.add_argument("--variant", action="append", help="NAME:section.key=value,... (repeatable)")
    parser.add_argument("--no-reference", action="store_true", help="ours only (e.g. on the JAX backend)")
    args = parser.parse_args()
    variants = [parse_variant(v) for v in (args.variant or DEFAULT_VARIANTS)]
    with tempfile.TemporaryDirectory() as tmp:
        keras.utils.set_random_seed(0)
        runners = {} if args.no_reference else {"reference": reference_runner(args.steps)}
        if runners:
            runners["reference"].round()
        workdir, arrays = prepare_data(Path(tmp))
        for name, overrides in variants:
            runners[name] = our_runner(workdir, arrays, overrides, args.steps)
        results = {name: [] for name in runners}
        for _ in range(args.rounds):
            for name, runner in runners.items():
                results[name].append(runner.round())
    figures = {name: [median(column) for column in zip(*rows)] for name, rows in results.items()}
    ref_tps = figures["reference"][0] if "reference" in figures else None
    for name, (tps, flops, sentences, step_s) in figures.items():
        runner = runners[name]
        emit(f"train_throughput_{name}", round(tps), "non-pad target tokens/s", backend=keras.backend.backend(),
             ratio=round(tps / ref_tps, 2) if ref_tps else None, target_ratio=">= 4",
             gflops=round(flops / 1e9, 1), peak_share=round(flops / PEAK_FLOPS[runner.precision], 3) if runner.precision in PEAK_FLOPS else None,
             sentences_per_s=round(sentences, 1),
             ms_per_step=round(1000 * step_s, 1), steps_per_round=runner.steps, **runner.extra)


if __name__ == "__main__":
    main()
