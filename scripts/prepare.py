#!/usr/bin/env python
"""Clean, split and vectorise a sentence-pair corpus into <workdir>/prepared/."""
import _bootstrap  # noqa: F401

from pipeline.cli import config_parser, run_main
from pipeline.rundir import prepared_path


def main() -> int:
    parser = config_parser(__doc__)
    parser.add_argument("--input", nargs="+", metavar="FILE",
                        help="corpus: ita-eng.zip or ita.txt(.gz), or two line-aligned files (Moses/OPUS style: "
                             "--input train.en train.it, plain or .gz); default: the bundled sample")
    parser.add_argument("--exclude", nargs="+", default=[], metavar="FILE",
                        help="held-out sentences (e.g. public test sets, one per line, or tab-separated pairs): "
                             "drop every pair with a side equal to one of them (added to data.exclude)")
    parser.add_argument("--vectorizers-from", metavar="RUN",
                        help="encode with this trained run's tokenizers instead of fitting new ones, to fine-tune "
                             "it with scripts/train.py --init-from RUN")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args()

    from pipeline.config import load_config
    from pipeline.finetune import load_child_config
    from pipeline.prepare import format_report, prepare

    if args.input is not None and len(args.input) > 2:
        parser.error(f"--input takes one tab-separated file or two line-aligned files, got {len(args.input)}")
    if args.vectorizers_from:
        config = load_child_config(args.config, args.set, args.workdir, args.vectorizers_from)
    else:
        config = load_config(args.config, args.set, args.workdir)
    config.data.exclude = [*config.data.exclude, *args.exclude]
    report = prepare(config, args.input, progress=not args.quiet, vectorizers_from=args.vectorizers_from)
    print(format_report(report))
    print(f"prepared {report['pairs_kept']:,} pairs into {prepared_path(config)} in {report['seconds']:.1f} s")
    return 0


if __name__ == "__main__":
    run_main(main)
