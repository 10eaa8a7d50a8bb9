"""Build terminology test sets from our own held-out data and the FreeDict English-Italian dictionary (issue 26).

For each pair of a prepared test split, every dictionary headword found in the English sentence (at word
boundaries, longest match first: `Glossary.find`) whose dictionary translation occurs in the Italian reference
becomes a term of that sentence. Two sets come out:

- plain: the glossary asks for the translation the reference uses. One glossary for the whole set, so a headword
  keeps the translation most references use, and sentences whose reference uses another one are left out, as are
  sentences in which the glossary matches a word whose glossary translation the reference does not use.
- hard: for headwords with two or more dictionary translations, the glossary asks for one the reference does
  *not* use (the least frequent in the plain set's references), so a constraint must override the model's
  preference. Only term use is meaningful there: BLEU against the reference would reward ignoring the glossary.

Each set is a directory with `sentences.tsv` (english, italian reference, the terms of the sentence as
`english=italian|...`) and `glossary.tsv` (english<TAB>italian), plus a README naming the sources and licences.

The dictionary comes from Debian's `dict-freedict-eng-ita` package (GPL-2+), read where dictd installs it; nothing
is downloaded:

    apt-get install dict-freedict-eng-ita
    python bench/build_term_sets.py --prepared runs/broad60/prepared --out data/terms \
        --dictionary-out data/dictionaries/freedict-eng-ita.tsv

Without dictd, `--dictionary data/dictionaries/freedict-eng-ita.tsv` reads the shipped text form instead; with
`--split valid` this builds the validation sets on which glossary methods are chosen (the test sets stay for
reporting):

    python bench/build_term_sets.py --prepared runs/broad60/prepared --split valid --out runs/terms-valid \
        --dictionary data/dictionaries/freedict-eng-ita.tsv

`--dictionary-out` also writes the dictionary itself as text (`english<TAB>synonym|synonym`, one line per sense),
the file from which prepare's `data.term_annotation` draws its training annotations (`pipeline/terms.py`).
"""
from __future__ import annotations

import argparse
import gzip
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.io_utils import atomic_directory, atomic_write_bytes, read_text_lines  # noqa: E402
from pipeline.text import clean_side  # noqa: E402
from pipeline.glossary import Glossary, find_words, fold  # noqa: E402
from pipeline.terms import read_dictionary  # noqa: E402

DICTD = Path("/usr/share/dictd")
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def dictd_number(text: str) -> int:
    """dictd's base-64 numbers (most significant digit first)."""
    value = 0
    for character in text:
        value = value * 64 + B64.index(character)
    return value


# Function words make poor terms (a glossary holds names and content words) and FreeDict's entries for them are
# mostly other senses: they are left out.
FUNCTION_WORDS = frozenset("""a about above after again against all also am an and any are as at be because been
before being below between both but by can could did do does doing down during each even ever every few for from
further had has have having he her here hers him his how i if in into is it its just let me might more most must my
no nor not now of off on once one only or other our out over own same shall she should so some such than that the
their them then there these they this those through to too under until up upon very was we well were what when
where which while who whom why will with would yes yet you your""".split())


def read_freedict(index: Path, data: Path) -> dict[str, list[list[str]]]:
    """English headword -> its senses, each a list of Italian synonyms (a line of the entry, split at commas),
    in the dictionary's order, from a dictd index and body."""
    body = gzip.decompress(data.read_bytes())
    entries: dict[str, list[list[str]]] = defaultdict(list)
    for line in index.read_text(encoding="utf-8").splitlines():
        headword, offset, length = line.split("\t")
        if headword.startswith("00database") or not headword.strip():
            continue
        start = dictd_number(offset)
        text = body[start:start + dictd_number(length)].decode("utf-8")
        for sense in text.splitlines()[1:]:                      # the first line repeats the headword and its IPA
            sense = re.sub(r"^\d+\.\s*", "", sense.strip())
            synonyms = [clean_side(t.replace("\u2010", "-")) for t in sense.split(",")]
            synonyms = [t for t in synonyms if t and not t.startswith("(")]
            if synonyms and synonyms not in entries[headword]:
                entries[headword].append(synonyms)
    return {clean_side(headword.replace("\u2010", "-")): senses for headword, senses in entries.items()
            if senses and headword.lower() not in FUNCTION_WORDS and len(headword) > 2}


def occurs(term: str, text: str) -> bool:
    """Whether `term` occurs in `text` as whole words, ignoring case."""
    return find_words(term, text) is not None


def sentence_terms(pairs, dictionary: dict[str, list[list[str]]]) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(english, italian, [(headword, the translation the reference uses)]) for pairs with at least one term."""
    headwords = Glossary({headword: headword for headword in dictionary}, name="FreeDict headwords")
    found = []
    for english, italian in pairs:
        terms = []
        for match in headwords.find(english):
            headword = match.term.source
            used = [t for sense in dictionary[headword] for t in sense if occurs(t, italian)]
            if used:
                terms.append((english[match.start:match.end], used[0]))
        if terms:
            found.append((english, italian, terms))
    return found


def consistent(rows, glossary_of):
    """The rows in which every match of the set's one glossary (`glossary_of(rows)`) asks for what the reference
    uses: a glossary also matches words of a sentence that are not among its terms (its reference translates them
    otherwise), and obeying it there would be scored as an error. Dropping a row can only shrink the glossary, so
    this repeats until nothing changes."""
    while True:
        glossary = Glossary(glossary_of(rows), name="term set glossary")
        kept = [row for row in rows if all(occurs(match.term.target, row[1]) for match in glossary.find(row[0]))]
        if len(kept) == len(rows):
            return rows
        rows = kept


def write_set(directory: Path, rows: list[tuple[str, str, list[tuple[str, str]]]], glossary: dict[str, str],
              readme: str) -> None:
    with atomic_directory(directory) as tmp:
        (tmp / "sentences.tsv").write_text(
            "".join(f"{en}\t{it}\t{'|'.join(f'{s}={t}' for s, t in terms)}\n" for en, it, terms in rows),
            encoding="utf-8")
        (tmp / "glossary.tsv").write_text("english\titalian\n" + "".join(f"{s}\t{t}\n" for s, t in
                                                                          sorted(glossary.items())),
                                          encoding="utf-8")
        (tmp / "README.md").write_text(readme, encoding="utf-8")


def write_dictionary(path: Path, dictionary: dict[str, list[list[str]]]) -> None:
    header = ("# FreeDict English-Italian dictionary 0.1.2 (https://freedict.org), GPL-2+, as Debian's "
              "dict-freedict-eng-ita ships it;\n# one line per sense: english<TAB>synonym|synonym. "
              "Written by bench/build_term_sets.py.\n")
    lines = "".join(f"{headword}\t{'|'.join(sense)}\n" for headword in sorted(dictionary)
                    for sense in dictionary[headword] if not any("|" in t or "\t" in t for t in sense))
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, (header + lines).encode("utf-8"))
    print(f"dictionary: {len(dictionary):,} headwords -> {path}", file=sys.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prepared", required=True, help="a prepared workdir's prepared/ directory")
    parser.add_argument("--split", default="test", help="the split to draw from (default: %(default)s)")
    parser.add_argument("--out", required=True, help="directory receiving plain/ and hard/")
    parser.add_argument("--dictionary", help="read the dictionary from this english<TAB>synonym|... file (the "
                        "shipped data/dictionaries/freedict-eng-ita.tsv) instead of dictd's files")
    parser.add_argument("--dictionary-out", help="also write the dictionary as english<TAB>synonym|... lines")
    parser.add_argument("--per-corpus", type=int, default=400, help="at most this many sentences per corpus")
    args = parser.parse_args()
    if args.dictionary:
        dictionary = read_dictionary(args.dictionary)
    else:
        index, data = DICTD / "freedict-eng-ita.index", DICTD / "freedict-eng-ita.dict.dz"
        if not index.is_file():
            raise SystemExit(f"{index}: not found; apt-get install dict-freedict-eng-ita, or pass --dictionary "
                             "data/dictionaries/freedict-eng-ita.tsv")
        dictionary = read_freedict(index, data)
    if args.dictionary_out:
        write_dictionary(Path(args.dictionary_out), dictionary)
    prepared = Path(args.prepared)
    splits = sorted(prepared.glob(f"{args.split}.*.tsv")) or [prepared / f"{args.split}.tsv"]
    rows = []
    for split in splits:
        pairs = [tuple(line.split("\t")[:2]) for line in read_text_lines(split, "split file") if "\t" in line]
        seen, picked = set(), []
        for row in sentence_terms(pairs, dictionary):
            if row[0] not in seen:                               # one reference per English sentence
                seen.add(row[0])
                picked.append(row)
        rows += picked[:args.per_corpus]
        print(f"{split.name}: {len(pairs):,} pairs, {len(picked):,} with a dictionary term, kept "
              f"{min(len(picked), args.per_corpus):,}", file=sys.stderr)
    usage: dict[str, Counter] = defaultdict(Counter)
    usage_form: dict[str, str] = {}                              # the first surface form of each term
    for _, _, terms in rows:
        for source, target in terms:
            usage[fold(source)][target] += 1
            usage_form.setdefault(fold(source), source)
    plain_glossary = {source: counts.most_common(1)[0][0] for source, counts in usage.items()}
    agreeing = [(en, it, terms) for en, it, terms in rows
                if all(plain_glossary[fold(s)] == t for s, t in terms)]

    def plain_glossary_of(kept):
        """The plain glossary restricted to the terms of `kept` rows, each in its first surface form."""
        return {usage_form[key]: plain_glossary[key] for key in {fold(s) for row in kept for s, _ in row[2]}}

    plain = consistent(agreeing, plain_glossary_of)
    by_fold = {fold(headword): headword for headword in dictionary}
    hard_glossary, hard = {}, []
    for en, it, terms in agreeing:                  # only term use is scored: the reference need not agree
        hard_terms = []
        for source, target in terms:
            senses = dictionary[by_fold[fold(source)]]
            # a synonym from the same sense (the same line of the entry) that the reference does not use
            others = [t for sense in senses if target in sense for t in sense if t != target and not occurs(t, it)]
            if others and fold(source) not in hard_glossary:
                hard_glossary[fold(source)] = (source, others[-1])
            if fold(source) in hard_glossary and hard_glossary[fold(source)][1] != target:
                hard_terms.append((source, hard_glossary[fold(source)][1]))
        if hard_terms:
            hard.append((en, it, hard_terms))
    credits = (f"Built from `{args.split}` of {prepared} (`configs/broad60.yaml`: seed 1234, four corpora) with at "
               f"most {args.per_corpus} sentences per corpus.\n\n"
               "Sources: the English sentences and Italian references are pairs of our own held-out "
               f"{args.split} split, from "
               "Tatoeba (https://tatoeba.org, CC-BY 2.0 FR, via ManyThings.org) and the documentation corpora "
               "(LibreOffice help MPL-2.0, GIMP manual GFDL-1.2+, Debian Reference GPL-2+, Debian New Maintainers' "
               "Guide MIT, GNOME documentation CC-BY-SA-3.0; see ../shared/data/docs-en-it/README). The glossary "
               "entries come from the FreeDict English-Italian dictionary 0.1.2 (https://freedict.org, GPL-2+), "
               "as Debian's dict-freedict-eng-ita ships it. Built by bench/build_term_sets.py.\n")
    out = Path(args.out)
    plain_terms = plain_glossary_of(plain)
    hard_terms = dict(hard_glossary[key] for key in {fold(s) for row in hard for s, _ in row[2]})
    write_set(out / "plain", plain, plain_terms,
              "# Terminology test set: plain\n\nThe glossary asks for the translation each reference uses: wherever it "
              "matches a sentence, the reference holds its Italian.\n\n" + credits)
    write_set(out / "hard", hard, hard_terms,
              "# Terminology test set: hard\n\nThe glossary asks for a dictionary synonym (from the same line of the "
              "FreeDict entry) that the reference does not use: score term use, not BLEU. FreeDict gives no part of "
              "speech, so a few synonyms are of another word class (need -> fabbisogno) and cannot fit the sentence "
              "fluently; term use is still measurable.\n\n" + credits)
    print(f"term sets: plain {len(plain):,} sentences, {len(plain_terms):,} glossary terms; hard {len(hard):,} "
          f"sentences, {len(hard_terms):,} terms -> {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
