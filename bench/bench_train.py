"""Training throughput at the tutorial's architecture, side by side with the reference, one process.

Both train on the first 50,000 pairs of the shared corpus (as the reference's bench-step
does): 4+4 layers, d_model 128, ff 512, 8 heads, sequence length 20, vocabularies 10k/20k,
batch 64. The figure is non-padding target tokens per second; each round times `--steps`
steps after warm-up, and the median over rounds is reported.

usage: python bench/bench_train.py [--rounds 3] [--steps 20] [--jit]
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

PAIRS, BATCH, SEQ = 50_000, 64, 20
ARCH = ["model.d_model=128", "model.num_heads=8", "model.ff_dim=512", "model.encoder_layers=4",
        "model.decoder_layers=4", "model.dropout=0.1", "model.norm_first=false", "model.tie_embeddings=false",
        "model.scale_embeddings=false", f"data.max_length={SEQ}", "data.en_vocab_size=10000",
        "data.it_vocab_size=20000", "data.valid_fraction=0.01", "data.test_fraction=0.01",
        f"train.batch_size={BATCH}", "train.bucket_width=4"]


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


def reference_runner(workdir: Path):
    """The reference model and data, plus its mean non-padding target tokens per batch."""
    ref = load_reference()
    pairs = list(ref.read_pairs(str(SHARED_CORPUS)))[:PAIRS]
    en, it = ref.vectorizers(pairs)
    model = ref.build_model()
    model.compile(optimizer=keras.optimizers.Adam(ref.Noam(), 0.9, 0.98, 1e-9), loss=ref.masked_loss,
                  metrics=[ref.masked_acc])
    data = ref.dataset(pairs, en, it).repeat()
    # target = ids[1:] of SEQ+1 positions: real tokens after [start], truncated at SEQ
    tokens_per_pair = np.mean([min(len(p[1].split()), SEQ + 1) - 1 for p in pairs])
    return model, data, lambda steps: steps * BATCH * tokens_per_pair


def our_runner(workdir: Path, jit: bool):
    from pipeline.config import load_config
    from pipeline.datasets import batch_plan, load_split, make_dataset
    from pipeline.model import build_model
    from pipeline.prepare import prepare
    from pipeline.training import compile_model
    from pipeline.vectorizers import vocabulary_sizes

    corpus = workdir / "corpus.txt"
    with gzip.open(SHARED_CORPUS, "rt", encoding="utf-8") as source:
        corpus.write_text("".join(line for _, line in zip(range(PAIRS), source)), encoding="utf-8")
    config = load_config(None, ARCH + [f"train.jit_compile={str(jit).lower()}"], str(workdir))
    prepare(config, corpus, progress=False)
    english, italian = load_split(config.prepared_dir, "train")
    model = compile_model(build_model(config, *vocabulary_sizes(config.prepared_dir / "vectorizers.pkl")), config)
    epochs = range(0, 50)
    data = make_dataset((english, italian), BATCH, bucket_width=4, seed=0, epochs=epochs)
    plans = [p for e in epochs for p in batch_plan(english, italian, BATCH, 4, 0, e)]
    counts = np.cumsum([int((italian[p][:, 1:] != 0).sum()) for p in plans])
    return model, data, lambda steps: int(counts[steps - 1])   # each fit() starts the dataset afresh


def timed_round(model, data, tokens, steps: int, warmup: int) -> float:
    """Tokens per second over `steps` steps after `warmup` steps."""
    if warmup:
        model.fit(data, steps_per_epoch=warmup, epochs=1, verbose=0)
    timer = StepTimer()
    model.fit(data, steps_per_epoch=steps, epochs=1, verbose=0, callbacks=[timer])
    return tokens(steps) / sum(timer.times), median(timer.times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--jit", action="store_true", help="XLA for our model")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        keras.utils.set_random_seed(0)
        ref = reference_runner(Path(tmp))
        ours = our_runner(Path(tmp), args.jit)
        results = {"reference": [], "ours": []}
        warm = {"reference": 5, "ours": 60}      # ours: a trace per bucket shape, reused by later fits
        for _ in range(args.rounds):
            for name, runner in (("reference", ref), ("ours", ours)):
                results[name].append(timed_round(*runner, args.steps, warm[name]))
                warm[name] = 2
    ref_tps = median([r[0] for r in results["reference"]])
    our_tps = median([r[0] for r in results["ours"]])
    emit("train_throughput_reference", round(ref_tps), "non-pad target tokens/s",
         ms_per_step=round(1000 * median([r[1] for r in results["reference"]]), 1))
    emit("train_throughput", round(our_tps), "non-pad target tokens/s", reference=round(ref_tps),
         ratio=round(our_tps / ref_tps, 2), jit=args.jit, target_ratio=">= 2",
         ms_per_step=round(1000 * median([r[1] for r in results["ours"]]), 1))


if __name__ == "__main__":
    main()
