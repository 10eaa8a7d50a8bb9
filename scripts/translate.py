#!/usr/bin/env python
"""Translate with a trained run, in its direction (English -> Italian, or Italian -> English): arguments,
--input FILE, or standard input.

Each argument or line is one text (a sentence or a paragraph of several) and gives one output line.
A document (--input talk.srt, or any file of a format below, by its extension or --format) is translated whole
and written back in its format, its structure intact (see the README's Documents)."""
import _bootstrap  # noqa: F401

from pipeline.cli import TRANSLATE_FLAGS, run_main, translate_command, translation_parser
from pipeline.documents import format_names, suffixes


def main() -> int:
    parser = translation_parser(f"{__doc__}\nDocument formats: {', '.join(suffixes())}.", TRANSLATE_FLAGS)
    parser.add_argument("sentences", nargs="*", help="texts in the run's source language (a sentence or a paragraph each)")
    parser.add_argument("--input", help="a text file in the run's source language: each line (one or more sentences) gives one output line; "
                                        "or a document, by its extension or --format")
    parser.add_argument("--output", help="write translations here (default: standard output)")
    parser.add_argument("--format", choices=format_names(),
                        help="translate --input as a document of this format (default: from its extension; a .txt "
                             "file, a file named by a language code such as test.en, or one without an extension is "
                             "read line by line unless --format txt, which also re-wraps wrapped paragraphs; any "
                             "other extension is an error)")
    parser.add_argument("--overwrite", action="store_true",
                        help="gettext catalogs: translate entries that already have a translation too")
    parser.add_argument("--glossary", help="a term list (.tsv/.csv source<TAB>target, or .tbx) whose terms the "
                                           "translations must use; a term whose target is its source is kept verbatim")
    parser.add_argument("--glossary-case-sensitive", action="store_true",
                        help="match the glossary's source terms in their case only (default: any case)")
    args = parser.parse_args()
    return translate_command(args, parser.error)


if __name__ == "__main__":
    run_main(main)
