#!/usr/bin/env python
"""Translate English to Italian with a trained run: arguments, --input FILE, or standard input.

Each argument or line is one text (a sentence or a paragraph of several) and gives one output line.
A document (--input talk.srt, .vtt, .po, .pot, .md, .html, .docx, .pptx, .odt, or any file with --format)
is translated whole and written back in its format, its structure intact (see the README's Documents)."""
import _bootstrap  # noqa: F401

import sys
from pathlib import Path

from pipeline.cli import run_main, translation_parser
from pipeline.documents import EXTENSIONS, FORMATS


def main() -> int:
    parser = translation_parser(__doc__, sampling=True)
    parser.add_argument("sentences", nargs="*", help="English texts to translate (a sentence or a paragraph each)")
    parser.add_argument("--input", help="English text file: each line (one or more sentences) gives one output line; "
                                        "or a document, by its extension or --format")
    parser.add_argument("--output", help="write translations here (default: standard output)")
    parser.add_argument("--format", choices=list(FORMATS),
                        help="translate --input as a document of this format (default: from its extension; a .txt "
                             "file is read line by line unless --format txt, which also re-wraps wrapped paragraphs)")
    parser.add_argument("--overwrite", action="store_true",
                        help="gettext catalogs: translate entries that already have a translation too")
    parser.add_argument("--max-length", type=int, help="most tokens per translated sentence")
    parser.add_argument("--glossary", help="a term list (.tsv/.csv english<TAB>italian, or .tbx) whose terms the "
                                           "translations must use; a term whose Italian is its English is kept verbatim")
    parser.add_argument("--glossary-case-sensitive", action="store_true",
                        help="match the glossary's English terms in their case only (default: any case)")
    args = parser.parse_args()
    if args.sentences and args.input:
        parser.error("give sentences or --input, not both")
    document = args.format or (EXTENSIONS.get(Path(args.input).suffix.lower()) if args.input else None)
    if document == "txt" and not args.format:
        document = None                                   # a .txt file: line by line, as always
    if (args.format or args.overwrite) and not args.input:
        parser.error("--format and --overwrite need --input")
    if document in ("docx", "pptx", "odt") and not args.output:
        parser.error(f"a .{document} document needs --output")

    from pipeline.io_utils import atomic_write_text, read_stdin_lines, read_text_lines
    from pipeline.rundir import check_output_file

    if args.output:
        check_output_file(args.output, "output file")      # before any translating
        if args.input and Path(args.output).resolve() == Path(args.input).resolve():
            raise ValueError(f"output file {args.output}: is the input file; write the translation to another file")

    glossary = None
    if args.glossary:
        from pipeline.glossary import Glossary

        glossary = Glossary.load(args.glossary, case_sensitive=args.glossary_case_sensitive)
    elif args.glossary_case_sensitive:
        parser.error("--glossary-case-sensitive needs --glossary")
    sentences = [] if document else (args.sentences or (read_text_lines(args.input) if args.input
                                                        else read_stdin_lines()))
    if document:
        from pipeline.documents import open_document, read_source

        data, name = read_source(args.input)
        parsed = open_document(data, document, name, overwrite=args.overwrite)   # a bad file fails before loading
    sampling = {name: value for name, value in (("sample", args.sample or None), ("temperature", args.temperature),
                                                ("top_k", args.top_k), ("top_p", args.top_p), ("seed", args.seed))
                if value is not None}
    if sampling and args.engine != "keras":
        parser.error("--sample, --temperature, --top-k, --top-p and --seed need --engine keras")
    from pipeline.translate import open_translator        # ctranslate2: imports neither TensorFlow nor Keras

    translator = open_translator(args.run, args.model, args.engine)
    if glossary is not None and translator.glossary_style != "annotate":
        print(f"note: {args.run} was not trained with term annotations (data.term_annotation), so glossary terms are "
              "masked instead, which the model honours less often; see the README's Glossaries", file=sys.stderr)
    options = dict(beam=args.beam, max_length=args.max_length, glossary=glossary, batch_size=args.batch_size,
                   progress=bool(args.input), **sampling)
    if document:
        from pipeline.documents import render_document, translate_segments
        from pipeline.io_utils import atomic_write_bytes

        translate_segments(parsed.segments, lambda texts: translator.translate(texts, **options))
        data = render_document(parsed, name)
        if args.output:
            atomic_write_bytes(args.output, data)
            print(f"translated {len(parsed.segments)} segments of {name} ({document}) into {args.output}",
                  file=sys.stderr)
        else:
            sys.stdout.buffer.write(data)
        return 0
    outputs = translator.translate(sentences, **options)
    text = "".join(line + "\n" for line in outputs)
    if args.output:
        atomic_write_text(args.output, text)
        print(f"translated {len(outputs)} lines into {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    run_main(main)
