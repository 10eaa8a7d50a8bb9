#!/usr/bin/env python
"""Train the Transformer from <workdir>/prepared into <workdir>/run (any Keras backend)."""
import _bootstrap  # noqa: F401

from pipeline.cli import config_parser, run_main


def main() -> int:
    parser = config_parser(__doc__)
    parser.add_argument("--resume", action="store_true", help="continue from the run's latest checkpoint")
    parser.add_argument("--overwrite", action="store_true", help="delete an existing run directory first")
    parser.add_argument("--verbose", default="auto", help="Keras fit verbosity: auto, 0, 1 or 2")
    args = parser.parse_args()

    from pipeline.config import load_config
    from pipeline.training import format_summary, train

    config = load_config(args.config, args.set, args.workdir)
    verbose = int(args.verbose) if args.verbose.isdigit() else args.verbose
    print(format_summary(train(config, resume=args.resume, overwrite=args.overwrite, verbose=verbose)))
    return 0


if __name__ == "__main__":
    run_main(main)
