#!/usr/bin/env python
"""Average the weights of a run's last N kept checkpoints into one model (default RUN/averaged.keras)."""
import _bootstrap  # noqa: F401

import argparse

from pipeline.cli import add_run_arguments, run_main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    add_run_arguments(parser, model=False)
    parser.add_argument("--last", type=int, help="how many of the newest kept checkpoints (default: all kept)")
    parser.add_argument("--out", help="the averaged .keras model (default: RUN/averaged.keras, "
                                      "which --model averaged selects)")
    args = parser.parse_args()

    from pipeline.averaging import average_kept_checkpoints

    print(average_kept_checkpoints(args.run, args.last, args.out).describe())
    return 0


if __name__ == "__main__":
    run_main(main)
