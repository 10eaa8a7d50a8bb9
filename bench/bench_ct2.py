"""Our decoder vs CTranslate2 (float32, int16, int8), greedy and beam 4, side by side in one run.

On a trained run's first N distinct validation sentences (default 1,000), with T threads (default 2)
for both engines: sentences/s, validation BLEU (sacreBLEU, every reference of a sentence,
`pipeline.evaluation.score`) and the share of outputs identical to our decoder's. Then the cold
start the CLI pays: `scripts/translate.py --engine ctranslate2` translating one sentence,
whole-process wall time, median of 5 (and ours, once).

Each timing runs in its own process (TensorFlow's and CTranslate2's thread pools slow each other
down in one process): after a warm-up pass, the process times greedy then beam 4 once. Processes
are interleaved over the configurations, `--repeats` rounds; a figure is the median of its rounds.

Prints one JSON line per figure, then a Markdown table on stderr.

usage: python bench/bench_ct2.py --run RUN [--sentences 1000] [--threads 2] [--repeats 3] [--cold-starts 5]
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

from common import ROOT, emit, median  # noqa: E402

QUANTIZATIONS = ("float32", "int16", "int8")
BEAMS = (1, 4)
SENTENCE = "Where is the station?"


def sources_and_references(run: Path, sentences: int) -> tuple[list[str], list[list[str]]]:
    from pipeline.evaluation import load_split_set, prepared_split_file
    evalset = load_split_set(prepared_split_file(run, "valid"))
    return evalset.sources[:sentences], evalset.references[:sentences]


def child(args) -> None:
    """Time one engine: print {"seconds": {beam: s}, "outputs": {beam: [...]}} as one JSON line."""
    sources, _ = sources_and_references(Path(args.run), args.sentences)
    if args.export:
        from pipeline.translate.ct2_engine import CTranslate2Engine
        translator = CTranslate2Engine(args.export, threads=args.threads)
    else:
        import keras
        if keras.backend.backend() == "tensorflow":
            import tensorflow as tf
            tf.config.threading.set_intra_op_parallelism_threads(args.threads)
            tf.config.threading.set_inter_op_parallelism_threads(1)
        from pipeline.translate.keras_engine import KerasEngine
        translator = KerasEngine.from_run(args.run)
    seconds, outputs = {}, {}
    for beam in BEAMS:
        translator.translate(sources, beam=beam)                    # warm up: trace / load every shape once
        started = time.perf_counter()
        outputs[beam] = translator.translate(sources, beam=beam)
        seconds[beam] = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "outputs": outputs}, ensure_ascii=False))


def time_engine(args, export: Path | None) -> dict:
    command = [sys.executable, __file__, "--child", "--run", args.run, "--sentences", str(args.sentences),
               "--threads", str(args.threads), *(["--export", str(export)] if export else [])]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def cold_start(args: list[str], runs: int) -> float:
    """Median wall seconds of `scripts/translate.py ARGS SENTENCE` in a fresh process."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, str(ROOT / "scripts" / "translate.py"), *args, SENTENCE], check=True,
                       capture_output=True, text=True)
        times.append(time.perf_counter() - started)
    return median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--run", required=True, help="a trained run directory, e.g. runs/cpu60/run")
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cold-starts", type=int, default=5)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--export", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)

    from pipeline.export.ctranslate2 import export_ctranslate2
    from pipeline.evaluation import score
    from pipeline.rundir import load_run_config

    run = Path(args.run)
    sources, references = sources_and_references(run, args.sentences)
    alpha = load_run_config(run).decode.length_penalty
    with tempfile.TemporaryDirectory() as tmp:
        engines: dict[str, Path | None] = {"ours": None}
        for quantization in QUANTIZATIONS:
            engines[f"ct2 {quantization}"] = export_ctranslate2(run, Path(tmp) / quantization,
                                                                quantization=quantization)
        seconds: dict[tuple[str, int], list[float]] = {(name, beam): [] for name in engines for beam in BEAMS}
        outputs: dict[tuple[str, int], list[str]] = {}
        for _ in range(args.repeats):                   # interleaved: machine noise hits every configuration
            for name, export in engines.items():
                result = time_engine(args, export)
                for beam in BEAMS:
                    seconds[name, beam].append(result["seconds"][str(beam)])
                    outputs[name, beam] = result["outputs"][str(beam)]
        cold = {"ct2": cold_start(["--engine", "ctranslate2", "--run", str(engines["ct2 float32"])],
                                  args.cold_starts),
                "ours": cold_start(["--run", str(run)], 1)}

    our_greedy = len(sources) / median(seconds["ours", 1])
    rows = []
    for (name, beam), samples in seconds.items():
        speed = len(sources) / median(samples)
        result = score(outputs[name, beam], references)
        same = sum(a == b for a, b in zip(outputs[name, beam], outputs["ours", beam])) / len(sources)
        emit(f"ct2_bench_{name.replace(' ', '_')}_beam{beam}", round(speed, 1), "sentences/s", bleu=result["bleu"],
             identical_to_ours=round(same, 4), speed_vs_our_greedy=round(speed / our_greedy, 2),
             threads=args.threads, sentences=len(sources), length_penalty=alpha, repeats=args.repeats, run=str(run))
        rows.append(f"| {name} | {beam} | {speed:,.1f} | {speed / our_greedy:.1f}x | {result['bleu']:.2f} "
                    f"| {100 * same:.1f}% |")
    emit("ct2_cold_start_one_sentence", round(cold["ct2"], 2), "s", runs=args.cold_starts, target="< 2",
         ours_s=round(cold["ours"], 2), command="scripts/translate.py --engine ctranslate2 --run EXPORT")
    print("| engine | beam | sentences/s | vs our greedy | BLEU | identical to ours |\n"
          "| --- | --- | --- | --- | --- | --- |\n" + "\n".join(rows), file=sys.stderr)
    print(f"cold start, one sentence: ctranslate2 {cold['ct2']:.2f} s (median of {args.cold_starts}), "
          f"ours {cold['ours']:.2f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
