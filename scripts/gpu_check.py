#!/usr/bin/env python
"""Check a GPU machine end to end: prepare, train N minutes, score the test splits, convert for CTranslate2.

  KERAS_BACKEND=jax python scripts/gpu_check.py --minutes 4          # configs/gpu.yaml, the shared corpora
  KERAS_BACKEND=jax python scripts/gpu_check.py --minutes 0.5 --config configs/tiny.yaml   # the bundled sample
"""
import _bootstrap  # noqa: F401

from pipeline.cli import config_parser, run_main


def main() -> int:
    parser = config_parser(__doc__, default_config="configs/gpu.yaml")
    parser.add_argument("--minutes", type=float, default=4.0, help="training budget (default: %(default)s)")
    parser.add_argument("--test-sentences", type=int, default=500, help="per corpus, at most (default: %(default)s)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args()
    if args.minutes <= 0 or args.test_sentences < 1:
        parser.error(f"--minutes must be > 0 and --test-sentences >= 1, got {args.minutes} and {args.test_sentences}")

    from pipeline.config import load_config
    from pipeline.gpu_check import format_report, gpu_check

    # the check scores the test splits: the validation BLEU that training ends with would decode as much again
    config = load_config(args.config, ["train.final_bleu_sentences=0", *args.set, f"train.max_minutes={args.minutes}"],
                         args.workdir)
    print(format_report(gpu_check(config, args.minutes, args.test_sentences, progress=not args.quiet)))
    return 0


if __name__ == "__main__":
    run_main(main)
