"""Decoding speed at the tutorial's architecture, side by side in one run.

Both the reference and our model are trained for the same 1,000 steps on the first 50,000
corpus pairs, so that they translate and end sentences as trained models do (300 steps
proved too few: a model that never emits [end] decodes to the length limit), then:
- reference: `tutorial_baseline.py translate` (the tutorials' naive loop, its own weights);
- ours, naive: the same full-recompute loop run on our weights (`full_recompute_greedy`);
- ours, cached greedy and beam 4 (`Translator`), on the same weights.
All three may output [UNK] here (`decode.ban_unk` off), as the tutorial loop does.
Greedy must give token-for-token the naive loop's output on our weights.

With `--run RUN` (a trained run directory, e.g. runs/cpu60/run), greedy and beam 4 are also
timed on that run's validation sentences, with the run's own decoding settings.

usage: python bench/bench_decode.py [--sentences 1000] [--train-steps 1000] [--repeats 3] [--run RUN]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from common import REFERENCE, SHARED_CORPUS, emit, median  # noqa: E402
from bench_train import ARCH, BATCH, PAIRS  # noqa: E402

import numpy as np  # noqa: E402


def train_ours(workdir: Path, steps: int):
    import gzip
    from pipeline.config import load_config
    from pipeline.prepare import prepare
    from pipeline.training import train

    corpus = workdir / "corpus.txt"
    with gzip.open(SHARED_CORPUS, "rt", encoding="utf-8") as source:
        corpus.write_text("".join(line for _, line in zip(range(PAIRS), source)), encoding="utf-8")
    config = load_config(None, ARCH + [f"train.max_steps={steps}", "train.epochs=100", "train.warmup_steps=200",
                                       "decode.max_extra_length=10", "train.checkpoint_every_steps=0"],
                         str(workdir / "ours"))
    prepare(config, corpus, progress=False)
    train(config, verbose=0)
    return config


def reference_translate(workdir: Path, sources: list[str], steps: int) -> float:
    """Train the reference for `steps` steps, then time its own translate command; sentences/s."""
    out = workdir / "reference"
    subprocess.run([sys.executable, str(REFERENCE), "train", str(SHARED_CORPUS), str(out), "--steps", str(steps)],
                   check=True, capture_output=True, text=True)
    src = workdir / "sources.txt"
    src.write_text("\n".join(sources) + "\n", encoding="utf-8")
    result = subprocess.run([sys.executable, str(REFERENCE), "translate", str(out), str(src),
                             str(workdir / "reference_hyp.txt")], check=True, capture_output=True, text=True)
    return json.loads(result.stdout.strip().splitlines()[-1])["sent_per_s"]


def timed(fn, repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--train-steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--run", help="also time greedy vs beam 4 on this trained run's validation split")
    args = parser.parse_args()
    from pipeline.datasets import load_split
    from pipeline.decoding import full_recompute_greedy
    from pipeline.translator import Translator

    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        config = train_ours(workdir, args.train_steps)
        lines = (config.prepared_dir / "valid.tsv").read_text(encoding="utf-8").splitlines()
        sources = [line.split("\t")[0] for line in lines][: args.sentences]
        reference_sps = reference_translate(workdir, sources, args.train_steps)

        translator = Translator.from_run(config.run_dir, "model")
        translator.config.decode.ban_unk = False     # decode as the tutorial loop does: [UNK] allowed
        translator = Translator(translator.model, translator.vectorizers, translator.config)
        translator.translate(sources[:BATCH], beam=1)                      # trace once
        translator.translate(sources[:BATCH], beam=4)
        ids = translator._source_ids(sources)
        limit = (ids != 0).sum(1) + config.decode.max_extra_length
        steps = int(limit.max())

        def naive():
            return np.concatenate([full_recompute_greedy(translator.model, ids[i:i + BATCH], translator.start_id,
                                                         translator.end_id, steps, translator.banned_id)
                                   for i in range(0, len(ids), BATCH)])
        naive_s, naive_ids = timed(naive, 1)
        cached_ids = np.concatenate([translator._decode(ids[i:i + BATCH], np.full(len(ids[i:i + BATCH]), steps), 1, 0.0)
                                     for i in range(0, len(ids), BATCH)])[:, :steps]
        identical = bool(np.array_equal(naive_ids, cached_ids))
        greedy_s, _ = timed(lambda: translator.translate(sources, beam=1, batch_size=BATCH), args.repeats)
        beam_s, _ = timed(lambda: translator.translate(sources, beam=4, batch_size=BATCH), args.repeats)
        latencies = []
        for sentence in sources[:100]:
            started = time.perf_counter()
            translator.translate([sentence], beam=1)
            latencies.append(time.perf_counter() - started)

    n = len(sources)
    emit("decode_reference_naive", round(reference_sps, 1), "sentences/s", note="tutorial_baseline translate, its weights")
    emit("decode_ours_naive_loop", round(n / naive_s, 1), "sentences/s", note="same full-recompute loop, our weights")
    emit("decode_greedy_cached", round(n / greedy_s, 1), "sentences/s", reference=round(reference_sps, 1),
         ratio_vs_reference=round(n / greedy_s / reference_sps, 1), ratio_vs_naive_same_weights=round(naive_s / greedy_s, 1),
         identical_to_naive=identical, target_ratio=">= 10")
    emit("decode_beam4", round(n / beam_s, 1), "sentences/s", cost_vs_greedy=round(beam_s / greedy_s, 2), target="<= 3")
    emit("latency_single_sentence_p50", round(1000 * float(np.percentile(latencies, 50)), 1), "ms")
    emit("latency_single_sentence_p95", round(1000 * float(np.percentile(latencies, 95)), 1), "ms")
    if args.run:
        trained_run_beam_cost(Path(args.run), args.sentences, args.repeats)


def trained_run_beam_cost(run: Path, sentences: int, repeats: int) -> None:
    """Greedy and beam 4 on a trained run's distinct validation sentences, interleaved, medians."""
    from pipeline.evaluation import prepared_split_file
    from pipeline.translator import Translator

    lines = prepared_split_file(run, "valid").read_text(encoding="utf-8").splitlines()
    sources = list(dict.fromkeys(line.split("\t")[0] for line in lines))[:sentences]
    translator = Translator.from_run(run)
    times: dict[int, list[float]] = {1: [], 4: []}
    for beam in times:                                   # trace every batch shape once
        translator.translate(sources, beam=beam)
    for _ in range(repeats):
        for beam in times:
            started = time.perf_counter()
            translator.translate(sources, beam=beam)
            times[beam].append(time.perf_counter() - started)
    greedy, beam4 = median(times[1]), median(times[4])
    emit("decode_trained_run_greedy", round(len(sources) / greedy, 1), "sentences/s", run=str(run))
    emit("decode_trained_run_beam4", round(len(sources) / beam4, 1), "sentences/s", run=str(run),
         cost_vs_greedy=round(beam4 / greedy, 2), target="<= 3")


if __name__ == "__main__":
    main()
