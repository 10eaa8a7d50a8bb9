#!/usr/bin/env python
"""Translate the test split (or a line-aligned source/reference file pair, in the run's direction) and score it
with sacreBLEU."""
import _bootstrap  # noqa: F401

import sys
from pathlib import Path

from pipeline.cli import run_main, translation_parser


def main() -> int:
    parser = translation_parser(__doc__, ("beam", "batch_size", "length_penalty"))
    parser.add_argument("--split", choices=("test", "valid"), help="a split prepared with the run (default: test)")
    parser.add_argument("--corpus", help="with several corpora: score only this corpus's part of the split")
    parser.add_argument("--tsv", help="a prepared split file (source<TAB>target; the references of one source "
                                      "sentence are scored together), e.g. another run's prepared/test.tsv")
    parser.add_argument("--src", help="source file in the run's source language, one sentence per line")
    parser.add_argument("--ref", help="reference file in the run's target language, line-aligned with --src")
    parser.add_argument("--out", help="report path (default: RUN/eval/<set>-beam<N>[-<model>][-ct2].json); "
                                      "hypotheses are written beside it as <name>.hyp.txt")
    args = parser.parse_args()
    if bool(args.src) != bool(args.ref):
        parser.error("--src and --ref go together")
    if sum(map(bool, (args.src, args.split or args.corpus, args.tsv))) > 1:
        parser.error("give one of --split/--corpus, --tsv or --src/--ref")

    from pipeline.evaluation import evaluate, format_report, write_report
    from pipeline.rundir import RunDir, check_output_file
    from pipeline.translate import open_translator

    if args.out:
        check_output_file(args.out, "report file")         # before any translating
    evalset = _evaluation_set(args)
    translator = open_translator(args.run, args.model, args.engine, target=args.target)
    report, hypotheses = evaluate(translator, evalset, beam=args.beam, batch_size=args.batch_size,
                                  length_penalty=args.length_penalty)
    suffix = ("" if args.model == "best" else f"-{args.model}") + ("-ct2" if args.engine == "ctranslate2" else "") \
        + (f"-{translator.direction.code}" if args.target else "")
    out = Path(args.out) if args.out else RunDir(args.run).eval_dir / f"{evalset.name}-beam{report['beam']}{suffix}.json"
    report = {"run": str(args.run), "model": args.model, "engine": args.engine, **report}
    hyp_path = write_report(report, hypotheses, out)
    print(f"{report['bleu_signature']}\n{report['chrf_signature']}", file=sys.stderr)
    print(f"{format_report(report)} -> {out}, {hyp_path}", file=sys.stderr)
    return 0


def _evaluation_set(args):
    """--src/--ref, --tsv, or the run's prepared split (read the other way round for a bidirectional run's
    `--target` other than its default: the split file holds the default direction)."""
    from pipeline.evaluation import load_parallel_files, load_split_set, prepared_split_file
    from pipeline.rundir import RunDir

    if args.src:
        return load_parallel_files(args.src, args.ref)
    if args.tsv:
        return load_split_set(args.tsv)
    default = RunDir(args.run).require().load_vectorizers().direction
    return load_split_set(prepared_split_file(args.run, args.split or "test", args.corpus),
                          reverse=bool(args.target) and args.target != default.target)


if __name__ == "__main__":
    run_main(main)
