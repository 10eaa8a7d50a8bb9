"""A translated heading gets a new anchor (renderers make it from the heading's text): a README's table of contents
and its other links to its own headings follow the headings, in GitHub's style and in MkDocs' `toc` style."""
from pipeline.documents import translate_document
from pipeline.documents.markdown import github_anchor, toc_anchor

from stand_ins import suffixed

README = """# Project

- [Getting started](#getting-started)
- [The `run` command](#the-run-command)
- [Again][again]
- [Second one](#getting-started-1)
- [Elsewhere](other.md#getting-started)
- [Nowhere](#no-such-heading)
- [Home](https://example.com/#getting-started)

## Getting started

## The `run` command

## Getting started

## Fixed {#fixed}

See [fixed](#fixed).

[again]: #getting-started
"""


def translated(text: str, model=suffixed) -> str:
    return translate_document(None, text.encode(), name="README.md", translate=model).decode()


def test_links_to_a_heading_follow_its_translation_in_githubs_style():
    out = translated(README)
    assert "[Getting started](#getting-it-started-it)" in out
    assert "[The `run` command](#the-it-run-command-it)" in out          # code spans count, as GitHub counts them
    assert "[Second one](#getting-it-started-it-1)" in out                # a repeated heading keeps its number
    assert "[again]: #getting-it-started-it" in out                       # reference definitions too


def test_other_fragments_and_explicit_ids_are_left_alone():
    out = translated(README)
    assert "(other.md#getting-started)" in out and "(#no-such-heading)" in out
    assert "(https://example.com/#getting-started)" in out
    assert "## Fixed-it {#fixed}" in out and "[fixed](#fixed)" in out


def test_mkdocs_toc_anchors_follow_too_and_accents_are_dropped_as_toc_drops_them():
    page = "# Why?\n\nSee [why](#why) and [again](#why_1).\n\n# Why?\n"
    out = translated(page, lambda texts: [t.replace("Why?", "Perché?") for t in texts])
    # GitHub's anchor of "Why?" is "why" too: GitHub's style wins, and keeps the accent
    assert "[why](#perché)" in out
    assert "[again](#perche_1)" in out             # only toc's style numbers with "_": its anchor, accents dropped


def test_anchor_styles_match_the_renderers():
    assert github_anchor("The `run` command: a-b & C_d!") == "the-run-command-a-b--c_d"
    assert github_anchor("Perché è così") == "perché-è-così"
    assert toc_anchor("The run command: a-b & C_d!") == "the-run-command-a-b-c_d"
    assert toc_anchor("Perché è così") == "perche-e-cosi"


def test_a_document_without_headings_or_fragments_is_unchanged_by_this():
    page = "Plain [link](https://example.com) and [local](#top).\n"
    assert translated(page, lambda texts: texts) == page


def test_the_round_trip_checker_finds_a_table_of_contents_left_pointing_at_old_anchors():
    from pathlib import Path

    from roundtrip import problems

    readme = (Path(__file__).parent / "data" / "real" / "clippy-README.md").read_bytes()
    out = translate_document(None, readme, name="README.md",
                             translate=lambda texts: [t.replace("Usage", "Uso") for t in texts])
    assert b"* [Uso instructions](#uso)" in out and b"## Uso\n" in out
    assert problems("README.md", readme, out) == []
    assert problems("README.md", readme, out.replace(b"](#uso)", b"](#usage)")) != []
