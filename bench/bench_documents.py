"""Document overhead: a 200-paragraph HTML page, a 1,000-cue .srt and a 500-entry .po, translated as documents
and as plain text (the same segments, one `translate` call), side by side in each repeat.

usage: python bench/bench_documents.py --run RUN [--engine ctranslate2] [--beam 1] [--repeats 3]

The documents are built from English sentences of the software-documentation corpus (../shared/data/docs-en-it,
GIMP help), with the markup real files carry: inline tags in a fifth of the paragraphs, two-line cues and
italics in the subtitles, printf and Python placeholders in a fifth of the catalog's entries. `segments/s` counts
the document's segments; `overhead` is document time over plain time, minus one (the target is <= 0.15).
Document time is everything: parsing, the whole-segment pass, the retries between kept spans, and writing.
"""
from __future__ import annotations

import argparse
import gzip
import html
import random
import time

from common import ROOT, emit, median

from pipeline.documents import open_document, translate_segments
from pipeline.translate import ENGINES, open_translator

CORPUS = ROOT.parent / "shared" / "data" / "docs-en-it" / "gimp-help.tsv.gz"


def sentences(count: int, seed: int) -> list[str]:
    with gzip.open(CORPUS, "rt", encoding="utf-8") as stream:
        english = [line.split("\t", 1)[0].strip() for line in stream]
    usable = sorted({s for s in english if 30 <= len(s) <= 160 and s[-1:] in ".?!:" and "\t" not in s})
    return random.Random(seed).sample(usable, count)


def html_page(texts: list[str]) -> bytes:
    body = []
    for index in range(0, 400, 2):
        first, second = html.escape(texts[index]), html.escape(texts[index + 1])
        if index % 10 == 0:
            words = first.split(" ")
            words[1] = f"<b>{words[1]}</b>"
            first = " ".join(words)
        body.append(f"<p>{first} {second}</p>")
    return ("<!DOCTYPE html>\n<html><head><title>Manual</title></head><body>\n" + "\n".join(body)
            + "\n</body></html>\n").encode("utf-8")


def subtitles(texts: list[str]) -> bytes:
    cues = []
    for index, text in enumerate(texts[:1000]):
        words = text.split(" ")
        if index % 3 == 0 and len(words) > 4:
            text = " ".join(words[:len(words) // 2]) + "\n" + " ".join(words[len(words) // 2:])
        if index % 7 == 0:
            text = f"<i>{text}</i>"
        start = index * 4
        cues.append(f"{index + 1}\n00:{start // 60 // 60:02d}:{start // 60 % 60:02d},000 --> "
                    f"00:{start // 60 // 60:02d}:{start // 60 % 60:02d},500\n{text}\n")
    return "\n".join(cues).encode("utf-8")


def catalog(texts: list[str]) -> bytes:
    entries = ['msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n']
    for index, text in enumerate(texts[:500]):
        if index % 10 == 0:
            text = text.rstrip(".?!:") + " in %s."
        elif index % 10 == 5:
            text = text.rstrip(".?!:") + " (%(count)d items)."
        escaped = text.replace("\\", "\\\\").replace('"', '\\"')
        entries.append(f'#: src/file.c:{index}\nmsgid "{escaped}"\nmsgstr ""\n')
    return "\n".join(entries).encode("utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--run", required=True)
    parser.add_argument("--engine", default="ctranslate2", choices=ENGINES)
    parser.add_argument("--beam", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    pool = sentences(1900, args.seed)
    files = {"page.html": html_page(pool[:400]), "talk.srt": subtitles(pool[400:1400]),
             "app.po": catalog(pool[1400:1900])}
    translator = open_translator(args.run, engine=args.engine)

    def translate(texts):
        return translator.translate(texts, beam=args.beam)

    translate(pool[:64])                                                  # warm up
    for name, data in files.items():
        segments = [segment.text for segment in open_document(data, name=name).segments]
        plain_times, document_times, retried = [], [], 0
        for _ in range(args.repeats):
            started = time.perf_counter()
            translate([text.strip() for text in segments])
            plain_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            document = open_document(data, name=name)
            translate_segments(document.segments, translate)
            document.render()
            document_times.append(time.perf_counter() - started)
            retried = sum(not segment.whole for segment in document.segments)
        plain, whole = median(plain_times), median(document_times)
        emit(f"document_{name}", round(len(segments) / whole, 1), "segments/s", segments=len(segments),
             plain_segments_per_s=round(len(segments) / plain, 1), overhead=round(whole / plain - 1, 3),
             retried_segments=retried, engine=args.engine, beam=args.beam, repeats=args.repeats,
             plain_s=[round(t, 2) for t in plain_times], document_s=[round(t, 2) for t in document_times])


if __name__ == "__main__":
    main()
