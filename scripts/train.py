#!/usr/bin/env python
"""Train the Transformer from <workdir>/prepared into <workdir>/run (any Keras backend)."""
import _bootstrap  # noqa: F401

from pipeline.cli import config_parser, run_main
from pipeline.rundir import MODELS


def main() -> int:
    parser = config_parser(__doc__)
    parser.add_argument("--resume", action="store_true", help="continue from the run's latest checkpoint")
    parser.add_argument("--overwrite", action="store_true", help="delete an existing run directory first")
    parser.add_argument("--verbose", default="auto", help="Keras fit verbosity: auto, 0, 1 or 2")
    parser.add_argument("--init-from", metavar="RUN",
                        help="fine-tune: start from this run's weights and architecture (its data prepared with "
                             "scripts/prepare.py --vectorizers-from RUN), on the finetune.* schedule")
    parser.add_argument("--init-model", choices=MODELS, default="best",
                        help="which of the parent's models to start from (default: %(default)s)")
    args = parser.parse_args()
    if args.init_from and args.resume:
        parser.error("--init-from starts a new run; --resume continues one (a fine-tuned run keeps its parent)")

    from pipeline.config import load_config
    from pipeline.finetune import load_child_config, resumed_child_config
    from pipeline.training import format_summary, train

    if args.init_from:
        config = load_child_config(args.config, args.set, args.workdir, args.init_from)
    else:
        config = (args.resume and resumed_child_config(args.config, args.set, args.workdir)
                  or load_config(args.config, args.set, args.workdir))
    verbose = int(args.verbose) if args.verbose.isdigit() else args.verbose
    print(format_summary(train(config, resume=args.resume, overwrite=args.overwrite, verbose=verbose,
                               init_from=args.init_from, init_model=args.init_model)))
    return 0


if __name__ == "__main__":
    run_main(main)
