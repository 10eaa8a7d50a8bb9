#!/usr/bin/env python
"""Average the weights of a run's last N kept checkpoints into one model (default RUN/averaged.keras)."""
import _bootstrap  # noqa: F401

import argparse

from pipeline.cli import run_main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--run", required=True, help="run directory written by scripts/train.py")
    parser.add_argument("--last", type=int, help="how many of the newest kept checkpoints (default: all kept)")
    parser.add_argument("--out", help="the averaged .keras model (default: RUN/averaged.keras, "
                                      "which --model averaged selects)")
    args = parser.parse_args()

    from pipeline.averaging import average_kept_checkpoints

    print(average_kept_checkpoints(args.run, args.last, args.out).describe())
    return 0


if __name__ == "__main__":
    run_main(main)
