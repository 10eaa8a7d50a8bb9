"""A page's front matter as static sites write it (Jekyll, Hugo, Docusaurus, MkDocs, Astro): the values a site shows
(title, description, summary, sidebar label) are translated, in their own quoting where it still reads as the same
string, and everything else comes back byte for byte; the block always parses as it did."""
import tomllib

import pytest
import yaml

from pipeline.documents import translate_document
from stand_ins import recording, suffixed

JEKYLL = """---
layout: post
title: Getting started   # shown in the browser tab
description: "Install the tool, then run it: that is all."
summary: 'It''s quick to set up'
sidebar_label: Setup
date: 2024-05-01
slug: getting-started
tags: [install, guide]
excerpt: >-
  A folded block scalar
  stays as written.
author:
  name: Ada Lovelace
  title: Countess
---

Body text here.
"""


def test_the_values_a_site_shows_are_translated_and_the_rest_is_kept():
    model, seen = recording(suffixed)
    out = translate_document(None, JEKYLL.encode(), name="post.md", translate=model).decode()
    front = out[:out.index("\n---\n") + 5]
    assert front == """---
layout: post
title: Getting-it started-it   # shown in the browser tab
description: "Install-it the-it tool-it, then-it run-it it: that-it is all-it."
summary: 'It''s quick-it to set-it up'
sidebar_label: Setup-it
date: 2024-05-01
slug: getting-started
tags: [install, guide]
excerpt: >-
  A folded block scalar
  stays as written.
author:
  name: Ada Lovelace
  title: Countess
---
"""
    assert {"post", "getting-started", "Ada Lovelace", "Countess"}.isdisjoint(seen)   # never read by the model
    assert "Body-it text-it here-it." in out


@pytest.mark.parametrize("translation, written", [
    ("Guida: come iniziare", 'title: "Guida: come iniziare"'),       # `: ` would start a mapping
    ("No", 'title: "No"'),                                             # a plain No is YAML's false
    ("- primo passo", 'title: "- primo passo"'),                       # a plain `- ` is a list
    ("Prezzo #1 in città", 'title: "Prezzo #1 in città"'),             # ` #` starts a comment
    ("Prezzo n.#1", "title: Prezzo n.#1"),                             # `#` after a word does not
    ('Il "vero" inizio', 'title: Il "vero" inizio'),
])
def test_a_translation_is_quoted_where_plain_yaml_would_read_it_otherwise(translation, written):
    page = b"---\ntitle: Getting started\n---\n\nHello.\n"
    out = translate_document(None, page, name="a.md", translate=lambda texts: [
        translation if text == "Getting started" else text for text in texts]).decode()
    assert out.split("\n")[1] == written
    assert yaml.safe_load(out.split("---")[1])["title"] == " ".join(translation.split())


def test_hugo_s_toml_front_matter_and_windows_line_ends():
    page = ('+++\r\ntitle = "Getting started"\r\ndescription = \'Install it, then run it\'\r\ndraft = false\r\n'
            '[params]\r\ntitle = "Not a page title"\r\n+++\r\n\r\nHello there.\r\n').encode()
    out = translate_document(None, page, name="_index.md", translate=suffixed)
    front = out.decode().split("+++")[1]
    assert front == ('\r\ntitle = "Getting-it started-it"\r\ndescription = \'Install-it it, then-it run-it it\'\r\n'
                     'draft = false\r\n[params]\r\ntitle = "Not a page title"\r\n')
    assert tomllib.loads(front.replace("\r\n", "\n"))["params"]["title"] == "Not a page title"
    assert b"\r\n" in out and b"\n" not in out.replace(b"\r\n", b"")


def test_a_translation_no_quoting_can_hold_keeps_the_source_s_value():
    page = "+++\ntitle = 'Getting started'\n+++\nHello.\n".encode()
    out = translate_document(None, page, name="a.md", translate=lambda texts: [
        "L'inizio" if text == "Getting started" else text for text in texts]).decode()
    assert out.startswith("+++\ntitle = \"L'inizio\"\n+++\n")          # a literal string cannot hold an apostrophe
    broken = "---\ntitle: Getting started\ntitle: Again\n---\nHello.\n"     # a key twice: YAML keeps the last
    out = translate_document(None, broken.encode(), name="a.md", translate=suffixed).decode()
    assert yaml.safe_load(out.split("---")[1]) == {"title": "Again-it"}


def test_hostile_models_and_layouts_keep_the_block_readable():
    import time

    page = "---\ntitle: Getting started\nsummary: 'A quick tour'\n---\n\n!!! note \"Read this\"\n    Body text.\n"
    out = translate_document(None, page.encode(), name="a.md", translate=lambda texts: [
        "" if text == "Read this" else "Uno\x01due" if text == "A quick tour" else text for text in texts]).decode()
    assert '!!! note "Read this"\n' in out                       # an empty title keeps the source's (was: "")
    assert yaml.safe_load(out.split("---")[1])["summary"] == "Uno\x01due"     # double-quoted: escaped
    toml = '+++\nauthors = [\n  ["Ada", "Bob"],\n]\ntitle = "Getting started"\n[params]\nx = 1\n+++\nHello.\n'
    out = translate_document(None, toml.encode(), name="a.md", translate=suffixed).decode()
    assert 'title = "Getting-it started-it"' in out              # an array's line is no table (was: not read)
    spaced = "---\ntitle: a" + " " * 40000 + "b\n---\nHello.\n"
    started = time.perf_counter()
    translate_document(None, spaced.encode(), name="a.md", translate=suffixed)
    assert time.perf_counter() - started < 4                    # was minutes: a lazy value tried at each space


def test_nested_aliases_cost_what_their_text_does():
    """The translated block is compared with the source's data one shared node at a time: nested aliases of a few
    hundred bytes name billions of values (before: 1.6 s at eight levels, ten times more for each level)."""
    levels = ['a0: &a0 ["x", "y"]'] + [f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 10) + "]"
                                       for level in range(1, 12)]
    page = "---\ntitle: Hello world\n" + "\n".join(levels) + "\nratio: .nan\n---\n\nSome text.\n"
    out = translate_document(None, page.encode(), name="post.md", translate=suffixed).decode()
    assert out == page.replace("Hello world", "Hello-it world-it").replace("Some text.", "Some-it text-it.")
