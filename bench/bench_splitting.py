"""Sentence splitting on real English: Tatoeba sentences joined into paragraphs, split again.

usage: python bench/bench_splitting.py [--sentences 3000] [--per-paragraph 6] [--repeats 5] [--corpus FILE]

Only corpus lines that are one sentence (one end mark, at the end) are used, so every join is a true
boundary: `recall` is the share found, `extra_splits` counts splits inside a sentence. Throughput is
`pipeline.translate.splitting.split_text` (splitting and the length check, a whitespace token count) over the paragraphs.
"""
from __future__ import annotations

import argparse
import random
import time

from common import SHARED_CORPUS, emit, median

from pipeline.translate.splitting import split_text
from pipeline.text import iter_lines, open_corpus, parse_line


def single_sentences(corpus, count: int, seed: int) -> list[str]:
    with open_corpus(corpus) as stream:
        english = [pair[0] for pair in map(parse_line, iter_lines(stream)) if isinstance(pair, tuple)]
    single = sorted({s for s in english if s[-1] in ".?!" and sum(s.count(c) for c in ".?!") == 1})
    return random.Random(seed).sample(single, count)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sentences", type=int, default=3000)
    parser.add_argument("--per-paragraph", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--corpus", default=str(SHARED_CORPUS))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sentences = single_sentences(args.corpus, args.sentences, args.seed)
    groups = [sentences[i:i + args.per_paragraph] for i in range(0, len(sentences), args.per_paragraph)]
    paragraphs = [" ".join(group) for group in groups]
    count_words = lambda text: len(text.split())                      # noqa: E731
    found = extra = 0
    for group, paragraph in zip(groups, paragraphs):
        pieces = set(split_text(paragraph, count_words, 10_000).pieces)
        found += sum(s in pieces for s in group)
        extra += len(pieces - set(group))
    seconds = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        for paragraph in paragraphs:
            split_text(paragraph, count_words, 10_000)
        seconds.append(time.perf_counter() - started)
    emit("segment_sentence_recall", round(found / len(sentences), 4), "share of sentences recovered whole",
         sentences=len(sentences), paragraphs=len(paragraphs), extra_splits=extra)
    emit("segment_throughput", round(len(sentences) / median(seconds)), "sentences/s", repeats=args.repeats)


if __name__ == "__main__":
    main()
