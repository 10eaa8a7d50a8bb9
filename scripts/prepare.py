#!/usr/bin/env python
"""Clean, split and vectorise a sentence-pair corpus into <workdir>/prepared/."""
import _bootstrap  # noqa: F401

from pipeline.cli import config_parser, run_main


def main() -> int:
    parser = config_parser(__doc__)
    parser.add_argument("--input", nargs="+", metavar="FILE",
                        help="corpus: ita-eng.zip or ita.txt(.gz), or two line-aligned files (Moses/OPUS style: "
                             "--input train.en train.it, plain or .gz); default: the bundled sample")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args()

    from pipeline.config import load_config
    from pipeline.prepare import format_report, prepare

    if args.input is not None and len(args.input) > 2:
        parser.error(f"--input takes one tab-separated file or two line-aligned files, got {len(args.input)}")
    config = load_config(args.config, args.set, args.workdir)
    report = prepare(config, args.input, progress=not args.quiet)
    print(format_report(report))
    print(f"prepared {report['pairs_kept']:,} pairs into {config.prepared_dir} in {report['seconds']:.1f} s")
    return 0


if __name__ == "__main__":
    run_main(main)
