"""One model for both ways, or one per direction (issue 39): score a bidirectional run against two one-way runs.

Each direction is scored on each corpus's validation split (its first `--sentences` source sentences, all their
references, the runs' beam), on the same sentences for both arms: the English -> Italian run's split files for
that direction, the Italian -> English run's for the other (prepare groups both by the English sentence, with the
same seed and fractions, so they hold the same pairs). The bidirectional run is asked for each direction with
`Engine.towards`. Prints one JSON line per (direction, corpus, arm) and a Markdown table.

usage: python bench/bench_directions.py --en-it runs/ab/en-it/run --it-en runs/ab/it-en/run --bidi runs/ab/bidi/run
       [--sentences 300] [--engine ctranslate2]

The A/B in the README (equal budget in optimizer steps, so the CPU's load cannot favour an arm):
    python scripts/prepare.py --config configs/broad60.yaml       --workdir runs/ab/en-it
    python scripts/prepare.py --config configs/broad60-it-en.yaml --workdir runs/ab/it-en
    python scripts/prepare.py --config configs/broad60-bidi.yaml  --workdir runs/ab/bidi
    python scripts/train.py --config configs/broad60-bidi.yaml --workdir runs/ab/bidi --set train.max_minutes=0 \\
        --set train.max_steps=2000 --set train.warmup_steps=500 --set train.final_bleu_sentences=0
    (and configs/broad60.yaml, configs/broad60-it-en.yaml with train.max_steps=1000 each, in their own workdirs)
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from common import emit

from pipeline.evaluation import score_corpora  # noqa: E402
from pipeline.rundir import RunDir, prepared_beside  # noqa: E402
from pipeline.translate import ENGINES, open_translator  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--en-it", required=True, help="the English -> Italian one-way run")
    parser.add_argument("--it-en", required=True, help="the Italian -> English one-way run")
    parser.add_argument("--bidi", required=True, help="the bidirectional run (data.bidirectional)")
    parser.add_argument("--sentences", type=int, default=300, help="source sentences per corpus (default: 300)")
    parser.add_argument("--engine", choices=ENGINES, default="ctranslate2")
    parser.add_argument("--out", help="also write the results here as JSON")
    args = parser.parse_args()
    started = time.perf_counter()
    results = []
    for one_way, target in ((args.en_it, "it"), (args.it_en, "en")):
        for arm, run in (("one-way", one_way), ("bidirectional", args.bidi)):
            translator = open_translator(run, engine=args.engine, target=target)
            summary = RunDir(run).summary_file
            steps = json.loads(summary.read_text())["total_steps"] if summary.is_file() else None
            scores = score_corpora(translator, prepared_beside(one_way), "valid", args.sentences)
            for corpus, score in scores.items():
                row = {"direction": translator.direction.code, "corpus": corpus, "arm": arm, "steps": steps,
                       **{k: score[k] for k in ("sentences", "beam", "bleu", "chrf", "bleu_signature",
                                                "chrf_signature")}}
                results.append(row)
                emit(f"directions_{row['direction']}_{corpus}_{arm}_bleu", round(score["bleu"], 2), "BLEU", **row)
    print(table(results))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=2)
    print(f"scored {len(results)} (direction, corpus, arm) cells in {time.perf_counter() - started:.0f} s",
          file=sys.stderr)
    return 0


def table(results: list[dict]) -> str:
    """Markdown: one row per (direction, corpus), one-way and bidirectional BLEU / chrF and their difference."""
    cells = {(r["direction"], r["corpus"], r["arm"]): r for r in results}
    lines = ["| direction | corpus | one-way BLEU / chrF | bidirectional BLEU / chrF | BLEU difference |",
             "| --- | --- | --- | --- | --- |"]
    for direction, corpus in dict.fromkeys((r["direction"], r["corpus"]) for r in results):
        one, both = cells[(direction, corpus, "one-way")], cells[(direction, corpus, "bidirectional")]
        lines.append(f"| {direction} | {corpus} | {one['bleu']:.2f} / {one['chrf']:.2f} | {both['bleu']:.2f} / "
                     f"{both['chrf']:.2f} | {both['bleu'] - one['bleu']:+.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
