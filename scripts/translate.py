#!/usr/bin/env python
"""Translate English to Italian with a trained run: arguments, --input FILE, or standard input."""
import _bootstrap  # noqa: F401

import sys

from pipeline.cli import run_main, translation_parser


def main() -> int:
    parser = translation_parser(__doc__)
    parser.add_argument("sentences", nargs="*", help="English sentences to translate")
    parser.add_argument("--input", help="file with one English sentence per line")
    parser.add_argument("--output", help="write translations here (default: standard output)")
    parser.add_argument("--max-length", type=int, help="most tokens per translation")
    args = parser.parse_args()
    if args.sentences and args.input:
        parser.error("give sentences or --input, not both")

    from pipeline.io_utils import atomic_write_text, read_text_lines
    from pipeline.translator import Translator

    sentences = args.sentences or (read_text_lines(args.input) if args.input else sys.stdin.read().splitlines())
    translator = Translator.from_run(args.run, args.model)
    outputs = translator.translate(sentences, beam=args.beam, max_length=args.max_length,
                                   batch_size=args.batch_size, progress=bool(args.input))
    text = "".join(line + "\n" for line in outputs)
    if args.output:
        atomic_write_text(args.output, text)
        print(f"translated {len(outputs)} lines into {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    run_main(main)
