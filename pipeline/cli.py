"""Shared command-line plumbing: quiet TensorFlow logs, common flags (decoding flags from `pipeline.options`),
one-line errors, and the translate command (`translate_command`, what scripts/translate.py calls)."""
from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Callable, NoReturn

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from pipeline.extras import MissingExtra, attention_choice, cudnn_failure, cudnn_hint
from pipeline.language import LANGUAGE_NAMES
from pipeline.logs import quiet_native_logs
from pipeline.options import SAMPLING_OPTIONS, add_flags, check_ranges, given, unsupported
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


def add_run_arguments(parser: argparse.ArgumentParser, model: bool = True, engine: bool = False,
                      several_runs: bool = False) -> None:
    """The flags naming what a script reads: --run (repeatable with `several_runs`: a list), and --model (which
    weights), --engine (which decoder)."""
    if several_runs:
        parser.add_argument("--run", action="append", required=True,
                            help="run directory written by scripts/train.py; repeat it for several runs, one per "
                                 "direction (--model and --engine apply to each)")
    else:
        parser.add_argument("--run", required=True, help="run directory written by scripts/train.py")
    if model:
        parser.add_argument("--model", choices=MODELS, default="best",
                            help="best, final or averaged weights (scripts/average.py; default: %(default)s)")
    if engine:
        parser.add_argument("--engine", choices=ENGINES, default="keras",
                            help="our Keras decoder, or CTranslate2 (needs the ctranslate2 extra; --run may then be "
                                 "a CTranslate2 export; default: %(default)s)")


DECODING_FLAGS = ("beam", "batch_size")
TRANSLATE_FLAGS = (*DECODING_FLAGS, "max_length", *SAMPLING_OPTIONS)


def translation_parser(description: str, options: tuple[str, ...] = DECODING_FLAGS) -> argparse.ArgumentParser:
    """A parser with the flags every decoding script shares: --run, --model, --engine, and one flag per decoding
    option named (`pipeline.options.OPTIONS`: --beam, --batch-size by default)."""
    parser = argparse.ArgumentParser(description=description)
    add_run_arguments(parser, engine=True)
    parser.add_argument("--target", choices=sorted(LANGUAGE_NAMES),
                        help="the language to translate into: a bidirectional run (data.bidirectional) translates both "
                             "ways (default: the run's own direction); a one-way run accepts only its target")
    add_flags(parser, options)
    return parser


def translate_command(args: argparse.Namespace, error: Callable[[str], NoReturn]) -> int:
    """scripts/translate.py: texts (arguments, --input lines or standard input) to lines, or a document to its
    format, to --output or standard output. `error` reports a usage error (`parser.error`)."""
    from pipeline.documents import FORMATS, by_extension

    if args.sentences and args.input:
        error("give sentences or --input, not both")
    known = by_extension(Path(args.input).suffix) if args.input else None
    if args.input and not args.format:
        check_lines_suffix(args.input)
    document = args.format or (known.name if known and known.name != "txt" else None)   # a .txt file: lines
    if (args.format or args.overwrite) and not args.input:
        error("--format and --overwrite need --input")
    if document and FORMATS[document].binary and not args.output:
        error(f"a .{document} document needs --output")
    if args.glossary_case_sensitive and not args.glossary:
        error("--glossary-case-sensitive needs --glossary")
    options = given(args, TRANSLATE_FLAGS)
    check_ranges(options, flags=True)                      # --batch-size 0, --max-length -5: one line, exit 2
    lacking = unsupported(args.engine, options)
    if lacking:
        flags = ["--" + name.replace("_", "-") for name in lacking]
        error(f"{', '.join(flags[:-1])} and {flags[-1]} need --engine keras" if len(flags) > 1
              else f"{flags[0]} needs --engine keras")
    _check_output(args)
    glossary = _glossary(args)
    parsed = _open_input_document(args, document) if document else None     # a bad file fails before loading
    sentences = None if document else _input_lines(args)                      # so does a bad text file
    from pipeline.translate import open_translator        # ctranslate2: imports neither TensorFlow nor Keras

    translator = open_translator(args.run, args.model, args.engine, target=args.target)
    if glossary is not None and translator.glossary_style != "annotate":
        print(f"note: {args.run} was not trained with term annotations (data.term_annotation), so glossary terms are "
              "masked instead, which the model honours less often; see the README's Glossaries", file=sys.stderr)
    options.update(glossary=glossary, progress=bool(args.input))
    if parsed is not None:
        return _translate_document(translator, parsed, document, args.output, options)
    return _translate_lines(translator, sentences, args.output, options)


def check_lines_suffix(path: str) -> None:
    """A ValueError naming `path` and the document extensions, where an --input of no registered extension is
    not text to read line by line either: lines are a file without an extension, a .txt, or a corpus side named by
    its language (`test.en`); anything else (`.resx`, `.sbv`, `.docm`) is a document this CLI cannot write back."""
    from pipeline.documents import by_extension, suffixes

    suffix = Path(path).suffix
    if suffix and by_extension(suffix) is None and suffix[1:].lower() not in LANGUAGE_NAMES:
        raise ValueError(f"{path}: no document format is known by the extension {suffix}; expected one of "
                         f"{', '.join(suffixes())} (.txt, a language code such as .en, or no extension: one text a "
                         "line), or give --format")


def _check_output(args: argparse.Namespace) -> None:
    from pipeline.rundir import check_output_file

    if args.output:
        check_output_file(args.output, "output file")      # before any translating
        if args.input and Path(args.output).resolve() == Path(args.input).resolve():
            raise ValueError(f"output file {args.output}: is the input file; write the translation to another file")


def _glossary(args: argparse.Namespace) -> Any:
    """--glossary, read for the run's direction (from its vectorizers: no model is loaded yet)."""
    if not args.glossary:
        return None
    from pipeline.glossary import Glossary
    from pipeline.rundir import RunDir

    vectorizers = RunDir(args.run).require().load_vectorizers()
    direction = next((d for d in vectorizers.directions if d.target == args.target), vectorizers.direction)
    return Glossary.load(args.glossary, case_sensitive=args.glossary_case_sensitive, direction=direction)


def _open_input_document(args: argparse.Namespace, format: str) -> tuple[Any, str]:
    from pipeline.documents import open_document, read_source

    data, name = read_source(args.input)
    return open_document(data, format, name, overwrite=args.overwrite), name


def _translate_document(translator: Any, parsed: tuple[Any, str], format: str, output: str | None,
                        options: dict[str, Any]) -> int:
    from pipeline.documents import translate_document
    from pipeline.io_utils import atomic_write_bytes

    document, name = parsed
    data = translate_document(translator, document, name=name, **options)
    if output:
        atomic_write_bytes(output, data)
        print(f"translated {len(document.segments)} segments of {name} ({format}) into {output}", file=sys.stderr)
    else:
        sys.stdout.buffer.write(data)
    return 0


def _input_lines(args: argparse.Namespace) -> list[str]:
    from pipeline.io_utils import read_stdin_lines, read_text_lines

    return args.sentences or (read_text_lines(args.input) if args.input else read_stdin_lines())


def _translate_lines(translator: Any, sentences: list[str], output: str | None, options: dict[str, Any]) -> int:
    from pipeline.io_utils import atomic_write_text

    outputs = translator.translate(sentences, **options)
    text = "".join(line + "\n" for line in outputs)
    if output:
        atomic_write_text(output, text)
        print(f"translated {len(outputs)} lines into {output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def run_main(main: Callable[[], int | None]) -> None:
    """Run `main` with native log noise filtered (`logs.quiet_native_logs`), turning expected user errors into
    one line on stderr and exit status 2, and a failure of cuDNN's fused attention into its traceback and a last
    line that says the way round it (exit status 1)."""
    quiet_native_logs()
    try:
        attention_choice()               # a wrong NMT_ATTENTION fails here, in one line, not inside a traced layer
        sys.exit(main() or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception as exc:
        cause = cudnn_failure(exc)
        if cause is not None:            # not the user's input: the traceback, then the way round it
            traceback.print_exc()
            print(f"error: {cudnn_hint(cause)}", file=sys.stderr)
            sys.exit(1)
        if isinstance(exc, USER_ERRORS):
            print(f"error: {exc}", file=sys.stderr)
            sys.exit(2)
        raise
