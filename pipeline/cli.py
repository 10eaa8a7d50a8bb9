"""Shared command-line plumbing: quiet TensorFlow logs, common flags, one-line errors."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from pipeline.extras import MissingExtra
from pipeline.logs import quiet_native_logs
from pipeline.rundir import MODELS
from pipeline.translate import ENGINES

USER_ERRORS: tuple[type[BaseException], ...] = (ValueError, FileNotFoundError, FileExistsError, NotADirectoryError,
                                                IsADirectoryError, PermissionError, MissingExtra)


def config_parser(description: str, default_config: str = "configs/tiny.yaml") -> argparse.ArgumentParser:
    """A parser with the flags every stage shares: --config, --workdir, --set."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=default_config, help="YAML config (default: %(default)s)")
    parser.add_argument("--workdir", help="override the config's workdir")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one config value (repeatable), e.g. --set train.epochs=3")
    return parser


def add_run_arguments(parser: argparse.ArgumentParser, model: bool = True, engine: bool = False) -> None:
    """The flags naming what a script reads: --run, and --model (which weights), --engine (which decoder)."""
    parser.add_argument("--run", required=True, help="run directory written by scripts/train.py")
    if model:
        parser.add_argument("--model", choices=MODELS, default="best",
                            help="best, final or averaged weights (scripts/average.py; default: %(default)s)")
    if engine:
        parser.add_argument("--engine", choices=ENGINES, default="keras",
                            help="our Keras decoder, or CTranslate2 (needs the ctranslate2 extra; --run may then be "
                                 "a CTranslate2 export; default: %(default)s)")


def translation_parser(description: str, sampling: bool = False) -> argparse.ArgumentParser:
    """A parser with the flags every decoding script shares: --run, --model, --engine, --beam, --batch-size
    (and with `sampling`, --sample, --temperature, --top-k, --top-p, --seed)."""
    parser = argparse.ArgumentParser(description=description)
    add_run_arguments(parser, engine=True)
    parser.add_argument("--beam", type=int, help="beam size (1 = greedy; default from the run's config)")
    parser.add_argument("--batch-size", type=int, help="sentences decoded together")
    if sampling:
        group = parser.add_argument_group("sampling", "draw each translation from the model instead of searching "
                                                      "for the most likely one (e.g. for back-translation)")
        group.add_argument("--sample", action="store_true", help="sample instead of greedy or beam search")
        group.add_argument("--temperature", type=float, help="below 1 sharpens, above 1 flattens (default 1)")
        group.add_argument("--top-k", type=int, help="draw among the K most likely tokens only (default: all)")
        group.add_argument("--top-p", type=float, help="draw among the fewest tokens holding probability P (default 1)")
        group.add_argument("--seed", type=int, help="the same seed and input give the same output (default: random)")
    return parser


def run_main(main: Callable[[], int | None]) -> None:
    """Run `main` with native log noise filtered (`logs.quiet_native_logs`), turning expected user errors into
    one line on stderr and exit status 2."""
    quiet_native_logs()
    try:
        sys.exit(main() or 0)
    except USER_ERRORS as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
