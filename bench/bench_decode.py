"""Decoding speed, side by side in one run.

With `--run RUN` (a trained run directory, e.g. runs/cpu60/run): greedy and beam 4 on RUN's first
`--sentences` distinct validation sentences, decoded in the batches `KerasEngine.translate` makes
(longest first, `decode.batch_size` sentences, with the run's `decode` settings), by
- `tensorflow-legacy`: the decoder before issue 11 (bench/legacy_decoding.py, TF graph mode): the baseline;
- `tensorflow`, `tensorflow-xla`: pipeline/decoding.py in TF graph mode and compiled by XLA;
- `jax`: pipeline/decoding.py under `jax.jit`, in a subprocess (KERAS_BACKEND=jax);
- `torch` (with --torch): pipeline/decoding.py run eagerly, in a subprocess.
Ids in, ids out: tokenisation is not timed. Every shape is decoded once before timing (compilation
excluded); throughput is the median of `--repeats` passes; latency is one sentence alone (p50/p95
over the first `--latency-sentences`). Greedy ids are compared with the baseline's.

Without `--skip-tutorial`, also the tutorial architecture: our model and the tutorials' reference
(../shared/reference/tutorial_baseline.py) are both trained 1,000 steps on the first 50,000 corpus pairs
(300 steps proved too few: a model that never emits [end] decodes to the length limit), then
- reference: `tutorial_baseline.py translate` (the tutorials' naive loop, its own weights);
- ours, naive: the same full-recompute loop on our weights (`full_recompute_greedy`);
- ours, cached greedy and beam 4 (`KerasEngine`), on the same weights, [UNK] allowed as in the tutorial.
Greedy must give token for token the naive loop's output on our weights.

usage: python bench/bench_decode.py [--run RUN] [--skip-tutorial] [--torch] [--sentences 1000] [--repeats 3]
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
from pipeline.rundir import prepared_path, run_path

HERE = Path(__file__).resolve().parent
VARIANTS = {"tensorflow-legacy": ("tensorflow", "legacy", False), "tensorflow": ("tensorflow", "new", False),
           "tensorflow-xla": ("tensorflow", "new", True), "jax": ("jax", "new", True), "torch": ("torch", "new", False)}


# -- side by side on a trained run ------------------------------------------------------------------
def run_inputs(run: Path, sentences: int, latency_sentences: int):
    """(translator, batches, singles): (ids, step limits) pairs as `KerasEngine.translate` makes them."""
    from pipeline.evaluation import prepared_split_file
    from pipeline.translate.keras_engine import KerasEngine

    lines = prepared_split_file(run, "valid").read_text(encoding="utf-8").splitlines()
    sources = list(dict.fromkeys(line.split("\t")[0] for line in lines))[:sentences]
    translator = KerasEngine.from_run(run)
    ids = translator.source_ids(sources)
    lengths = np.maximum((ids != 0).sum(1), 1)
    limits = translator.step_limits(lengths)
    order = np.argsort(-lengths, kind="stable")
    size = translator.config.decode.batch_size
    batches = [(ids[rows, :lengths[rows].max()], limits[rows]) for rows in
               (order[start:start + size] for start in range(0, len(order), size))]
    singles = [(ids[i:i + 1, :lengths[i]], limits[i:i + 1]) for i in range(min(latency_sentences, len(ids)))]
    return translator, batches, singles, order


def time_engine(engine: str, run: Path, sentences: int, repeats: int, latency_sentences: int,
                ids_out: Path) -> list[dict]:
    """Greedy and beam 4 with one engine (this process must run its backend): one dict per strategy."""
    import keras
    from pipeline.decoding import compile_decoder

    backend, which, jit = VARIANTS[engine]
    assert keras.backend.backend() == backend, (engine, keras.backend.backend())
    translator, batches, singles, order = run_inputs(run, sentences, latency_sentences)
    args = (translator.model, translator.start_id, translator.end_id, jit, translator.banned_id)
    if which == "legacy":
        sys.path.insert(0, str(HERE))
        from legacy_decoding import compile_decoder as legacy_compile_decoder
        decode = legacy_compile_decoder(*args)
    else:
        decode = compile_decoder(*args)
    alpha = translator.config.decode.length_penalty
    results, all_ids = [], {}
    for beams in (1, 4):
        def everything():
            return [decode(source, limits, beams, alpha) for source, limits in batches]
        outputs = everything()                          # compiles every shape first
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            everything()
            times.append(time.perf_counter() - started)
        latencies = []
        for source, limits in singles * 2:              # the first pass compiles, the second is timed
            started = time.perf_counter()
            decode(source, limits, beams, alpha)
            latencies.append(time.perf_counter() - started)
        latencies = latencies[len(singles):]
        width = max(o.shape[1] for o in outputs)
        ids = np.concatenate([np.pad(o, [(0, 0), (0, width - o.shape[1])]) for o in outputs])
        all_ids[f"beam{beams}"] = ids[np.argsort(order)]            # back to sentence order
        results.append({"engine": engine, "beams": beams, "sentences": int(sum(len(s) for s, _ in batches)),
                        "seconds": round(median(times), 3), "p50_ms": round(1000 * float(np.percentile(latencies, 50)), 1),
                        "p95_ms": round(1000 * float(np.percentile(latencies, 95)), 1)})
    np.savez(ids_out, **all_ids)
    return results


def same_rows(a: np.ndarray, b: np.ndarray) -> int:
    """How many rows of two 0-padded id arrays are equal."""
    width = max(a.shape[1], b.shape[1])
    a, b = (np.pad(x, [(0, 0), (0, width - x.shape[1])]) for x in (a, b))
    return int((a == b).all(axis=1).sum())


def in_subprocess(engine: str, args, ids_out: Path) -> list[dict]:
    backend = VARIANTS[engine][0]
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", engine, "--run", str(args.run),
               "--sentences", str(args.sentences), "--repeats", str(args.repeats),
               "--latency-sentences", str(args.latency_sentences), "--ids-out", str(ids_out)]
    result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "KERAS_BACKEND": backend})
    if result.returncode:
        raise RuntimeError(f"{engine} worker failed:\n{result.stderr[-3000:]}")
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def side_by_side(args) -> None:
    engines = ["tensorflow-legacy", "tensorflow", "tensorflow-xla", "jax"] + (["torch"] if args.torch else [])
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        ids = {}
        for engine in engines:
            out = Path(tmp) / f"{engine}.npz"
            if VARIANTS[engine][0] == "tensorflow":
                rows += time_engine(engine, args.run, args.sentences, args.repeats, args.latency_sentences, out)
            else:
                rows += in_subprocess(engine, args, out)
            ids[engine] = dict(np.load(out))
    baseline = {r["beams"]: r for r in rows if r["engine"] == "tensorflow-legacy"}
    table = ["| engine | greedy sent/s | beam 4 sent/s | beam 4 / greedy time | greedy p50 / p95 ms "
             "| beam 4 p50 / p95 ms | greedy ids = legacy | beam 4 ids = legacy |", "|" + " --- |" * 8]
    for engine in engines:
        greedy, beam = (next(r for r in rows if r["engine"] == engine and r["beams"] == b) for b in (1, 4))
        same = [same_rows(ids[engine][k], ids["tensorflow-legacy"][k]) for k in ("beam1", "beam4")]
        for r in (greedy, beam):
            name = "greedy" if r["beams"] == 1 else "beam4"
            emit(f"decode_{engine}_{name}", round(r["sentences"] / r["seconds"], 1), "sentences/s", run=str(args.run),
                 vs_legacy=round(baseline[r["beams"]]["seconds"] / r["seconds"], 2),
                 latency_p50_ms=r["p50_ms"], latency_p95_ms=r["p95_ms"])
        n = greedy["sentences"]
        table.append(f"| {engine} | {n / greedy['seconds']:.1f} | {n / beam['seconds']:.1f} | "
                     f"{beam['seconds'] / greedy['seconds']:.2f} | {greedy['p50_ms']} / {greedy['p95_ms']} | "
                     f"{beam['p50_ms']} / {beam['p95_ms']} | {same[0]}/{n} | {same[1]}/{n} |")
    fastest = min((r for r in rows if r["beams"] == 1 and r["engine"] != "tensorflow-legacy"), key=lambda r: r["seconds"])
    fastest_beam = next(r for r in rows if r["beams"] == 4 and r["engine"] == fastest["engine"])
    emit("decode_fastest_greedy_vs_legacy", round(baseline[1]["seconds"] / fastest["seconds"], 2), "x",
         engine=fastest["engine"], target=">= 1.5")
    emit("decode_fastest_beam4_cost_vs_greedy", round(fastest_beam["seconds"] / fastest["seconds"], 2), "x",
         engine=fastest["engine"], target="<= 3")
    print("\n".join(table), flush=True)


# -- the tutorial architecture ----------------------------------------------------------------------
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


def tutorial_architecture(args) -> None:
    from pipeline.decoding import full_recompute_greedy
    from pipeline.translate.keras_engine import KerasEngine

    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        config = train_ours(workdir, args.train_steps)
        lines = (prepared_path(config) / "valid.tsv").read_text(encoding="utf-8").splitlines()
        sources = [line.split("\t")[0] for line in lines][: args.sentences]
        reference_sps = reference_translate(workdir, sources, args.train_steps)

        translator = KerasEngine.from_run(run_path(config), "model")
        translator.config.decode.ban_unk = False     # decode as the tutorial loop does: [UNK] allowed
        translator = KerasEngine(translator.model, translator.vectorizers, translator.config)
        translator.translate(sources, beam=1, batch_size=BATCH)            # compile every shape once
        translator.translate(sources, beam=4, batch_size=BATCH)
        ids = translator.source_ids(sources)
        limit = (ids != 0).sum(1) + config.decode.max_extra_length
        steps = int(limit.max())

        def naive():
            return np.concatenate([full_recompute_greedy(translator.model, ids[i:i + BATCH], translator.start_id,
                                                         translator.end_id, steps, translator.banned_id)
                                   for i in range(0, len(ids), BATCH)])
        naive_s, naive_ids = timed(naive, 1)
        cached_ids = np.concatenate([translator.translate_ids(ids[i:i + BATCH], np.full(len(ids[i:i + BATCH]), steps))
                                     for i in range(0, len(ids), BATCH)])[:, :steps]
        identical = bool(np.array_equal(naive_ids, cached_ids))
        greedy_s, _ = timed(lambda: translator.translate(sources, beam=1, batch_size=BATCH), args.repeats)
        beam_s, _ = timed(lambda: translator.translate(sources, beam=4, batch_size=BATCH), args.repeats)
        for sentence in sources[:100]:
            translator.translate([sentence], beam=1)                      # compile every single-sentence shape
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
         identical_to_naive=identical, target_ratio=">= 20")
    emit("decode_beam4", round(n / beam_s, 1), "sentences/s", cost_vs_greedy=round(beam_s / greedy_s, 2), target="<= 3")
    emit("latency_single_sentence_p50", round(1000 * float(np.percentile(latencies, 50)), 1), "ms")
    emit("latency_single_sentence_p95", round(1000 * float(np.percentile(latencies, 95)), 1), "ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", type=Path, help="a trained run: greedy and beam 4, every engine side by side")
    parser.add_argument("--skip-tutorial", action="store_true", help="skip the tutorial-architecture comparison")
    parser.add_argument("--torch", action="store_true", help="also time PyTorch (eager) on --run")
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--latency-sentences", type=int, default=100)
    parser.add_argument("--train-steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--worker", choices=sorted(VARIANTS), help=argparse.SUPPRESS)   # one engine, in this process
    parser.add_argument("--ids-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        for row in time_engine(args.worker, args.run, args.sentences, args.repeats, args.latency_sentences,
                               args.ids_out):
            print(json.dumps(row), flush=True)
        return
    if not args.skip_tutorial:
        tutorial_architecture(args)
    if args.run:
        side_by_side(args)


if __name__ == "__main__":
    main()
