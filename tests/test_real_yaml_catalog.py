"""YAML string catalogs as Rails, Symfony and Hugo keep them: string values translated with Ruby's and Symfony's
placeholders kept, the locale root key renamed, and comments, quoting, block scalars, indentation and every value
that is not a message as written."""
import pytest
import yaml

from pipeline.documents import by_extension, translate_document
from pipeline.language import Direction
from stand_ins import recording, suffixed

RAILS = """# Rails locale
en-GB:
  hello: "Hello world"
  greeting: 'Hi %{name}, welcome'
  plain: Save changes # a comment
  items:
    one: One item
    other: "%{count} items"
  long: >-
    A folded
    block scalar
  list:
    - First entry
    - Second entry
  num: 3
  date: 2024-01-01
  key_ref: common.save
  flag: true
"""


def test_a_rails_catalog_is_translated_and_keeps_its_layout():
    model, seen = recording(suffixed)
    out = translate_document(None, RAILS.encode(), name="en.yml", translate=model).decode()
    assert out == RAILS.replace("en-GB:", "it-IT:").replace("Hello world", "Hello-it world-it") \
        .replace("welcome", "welcome-it").replace("Save changes", "Save-it changes-it") \
        .replace("One item", "One-it item-it").replace("%{count} items", "%{count} items-it") \
        .replace("A folded\n    block scalar", "A folded-it\n    block-it\n    scalar-it") \
        .replace("First entry", "First-it entry-it").replace("Second entry", "Second-it entry-it")
    assert "Hi 70, welcome" in seen and not any("common.save" in text for text in seen)


def test_a_value_that_would_read_otherwise_is_quoted_and_the_direction_names_the_root():
    out = translate_document(None, RAILS.encode(), name="en.yml", translate=lambda texts: [
        text.upper() + ": sì" for text in texts])
    data = yaml.safe_load(out)
    assert data["it-IT"]["plain"] == "SAVE CHANGES: sì" and data["it-IT"]["num"] == 3    # `: ` quoted
    symfony = "welcome:\n    title: Welcome back\n"
    out = translate_document(None, symfony.encode(), name="messages.en.yaml", translate=suffixed).decode()
    assert out == "welcome:\n    title: Welcome-it back-it\n"                          # no locale root; 4 spaces
    italian = translate_document(None, b"it:\n  hello: Ciao a tutti\n", name="it.yml", translate=suffixed,
                                 direction=Direction("it", "en"))
    assert italian == b"en:\n  hello: Ciao-it a tutti-it\n"


def test_the_format_is_known_and_broken_files_are_one_line_errors():
    assert by_extension(".yml").name == "yaml" and by_extension(".yaml").name == "yaml"
    with pytest.raises(ValueError, match=r"^a\.yml: not YAML: line 3: expected .,. or .\]., but got .<stream end>.$"):
        translate_document(None, b"en:\n  a: [unclosed\n", name="a.yml", translate=suffixed)
    with pytest.raises(ValueError, match=r"^b\.yml: not a YAML catalog: 2 documents, expected one$"):
        translate_document(None, b"a: One\n---\nb: Two\n", name="b.yml", translate=suffixed)


def test_what_ruby_reads_as_no_string_is_kept_and_never_written():
    source = ("---\nen:\n  f: 1.50\n  mode: 0755\n  ok: yes\n  date:\n    order:\n      - :year\n      - :month\n"
              "  a: Hello world\n...\n")
    out = translate_document(None, source.encode(), name="en.yml", translate=suffixed).decode()
    assert out == source.replace("en:", "it:").replace("Hello world", "Hello-it world-it")   # (was: all as written)
    out = translate_document(None, b"en:\n  a: Hello world\n", name="en.yml", translate=lambda texts: ["No"])
    assert out == b'it:\n  a: "No"\n'                                       # a plain No is Ruby's false


def test_anchors_merges_and_hugo_ids_keep_their_meaning():
    source = ("defaults: &defaults\n  save: Save changes\nen:\n  <<: *defaults\n  hello: &msg Hello world\n"
              "  again: *msg\n")
    model, seen = recording(suffixed)
    out = translate_document(None, source.encode(), name="en.yml", translate=model).decode()
    assert out == ("defaults: &defaults\n  save: Save-it changes-it\nit:\n  <<: *defaults\n"
                   "  hello: &msg Hello-it world-it\n  again: *msg\n")         # (was: expanded, or not translated)
    assert sorted(seen) == ["Hello world", "Save changes"]                    # each string once
    hugo = "- id: home\n  translation: Home page\n"
    assert translate_document(None, hugo.encode(), name="i18n/en.yaml", translate=suffixed) == \
        b"- id: home\n  translation: Home-it page-it\n"                       # (was: id: home-it)


def test_icu_catalogs_quote_apostrophes_and_configuration_files_are_refused():
    def elided(texts: list[str]) -> list[str]:
        return [text.replace("Open the ", "Apri l'") for text in texts]
    out = translate_document(None, b"open_app: 'Open the {app}'\n", name="messages+intl-icu.en.yaml",
                             translate=elided)
    assert out == b"open_app: 'Apri l''''{app}'\n"                 # ICU's l''{app}, in YAML's single quotes
    compose = b"services:\n  web:\n    image: nginx\n    command: echo Hello world\n"
    with pytest.raises(ValueError, match=r"^docker-compose\.yml: a configuration file \(its top level holds "
                                         r"`services`\), not a string catalog: not translated$"):
        translate_document(None, compose, name="docker-compose.yml", translate=suffixed)


def test_second_review_cases():
    symfony = b"tasks: Your tasks for today\nimage: Profile picture\nwifi_off: Off\n"
    out = translate_document(None, symfony, name="messages.en.yaml", translate=lambda texts: [
        t.upper() for t in texts])
    assert out == b'tasks: YOUR TASKS FOR TODAY\nimage: PROFILE PICTURE\nwifi_off: "OFF"\n'   # a catalog, Off too
    workflow = b"on:\n  push:\n    branches: [main]\njobs:\n  test:\n    steps:\n      - run: echo Hello world\n"
    with pytest.raises(ValueError, match=r"^ci\.yml: a configuration file"):
        translate_document(None, workflow, name="ci.yml", translate=suffixed)
    playbook = b"- hosts: all\n  tasks:\n    - shell: echo Hello world\n"
    with pytest.raises(ValueError, match=r"^site\.yml: a configuration file"):
        translate_document(None, playbook, name="site.yml", translate=suffixed)


def test_third_review_cases():
    catalog = b"services: Our services\njobs: Open positions\nok: OK\nconfirm: Yes\n"
    out = translate_document(None, catalog, name="en.yml", translate=lambda texts: [t.upper() for t in texts])
    assert out == b'services: OUR SERVICES\njobs: OPEN POSITIONS\nok: OK\nconfirm: "YES"\n'   # texts, not config
    compose = b"version: '3'\nservices:\n  web:\n    command: echo Hello world\nqa: Quality\n"
    with pytest.raises(ValueError, match=r"^docker-compose\.yml: a configuration file"):
        translate_document(None, compose, name="docker-compose.yml", translate=suffixed)   # `qa:` is no locale


def test_nested_aliases_cost_what_their_text_does():
    """A few hundred bytes of nested aliases name billions of strings: each container is read and compared once
    (before: 9 s at six levels, ten times more for each level)."""
    lines = ['a0: &a0 ["Hello world", "Save changes"]']
    lines += [f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 10) + "]" for level in range(1, 9)]
    source = "\n".join(lines) + "\nall: [" + ", ".join(["*a8"] * 10) + "]\nnan: .nan\n"   # (.nan equals none)
    model, seen = recording(suffixed)
    out = translate_document(None, source.encode(), name="en.yml", translate=model).decode()
    assert sorted(seen) == ["Hello world", "Save changes"]
    assert out == source.replace("Hello world", "Hello-it world-it").replace("Save changes", "Save-it changes-it")


@pytest.mark.parametrize("name,catalog", [
    ("en.yaml", "en:\n  message:\n    hello: hello world\n    link: \"@:message.hello and welcome\"\n"
                "    braced: \"See @:{'message.hello'} now, {'@'} is literal\"\n"),
    ("en.json", '{"message": {"hello": "hello world", "link": "@:message.hello and welcome",'
                ' "braced": "See @:{\'message.hello\'} now, {\'@\'} is literal"}}'),
])
def test_vue_i18n_s_linked_messages_and_literals_come_back_as_written(name, catalog):
    def meddling(texts):              # translates inside anything that looks like a word, drops a quote
        return [text.replace("message", "messaggio").replace("hello", "ciao").replace("'", "") for text in texts]
    model, seen = recording(meddling)
    out = translate_document(None, catalog.encode(), name=name, translate=model).decode()
    assert "@:message.hello and welcome" not in seen and "@:message.hello" in out       # was: read, and changed
    assert "@:{'message.hello'}" in out and "{'@'}" in out


@pytest.mark.parametrize("name,catalog", [
    ("en.yaml", "en:\n  apples: \"no apples | one apple | {count} apples\"\n  keys: \"Ctrl {'|'} Alt | {n} keys\"\n"
                "  title: Home | About\n"),
    ("en.json", '{"apples": "no apples | one apple | {count} apples", "keys": "Ctrl {\'|\'} Alt | {n} keys",'
                ' "title": "Home | About"}'),
])
def test_vue_i18n_s_plural_cases_are_translated_one_by_one(name, catalog):
    def merging(texts):               # a model that makes one sentence of what it is given, bars and all
        return ["nessuna mela" if " | " in text and "apples" in text else text.replace("apple", "mela")
                .replace("keys", "tasti") for text in texts]
    model, seen = recording(merging)
    out = translate_document(None, catalog.encode(), name=name, translate=model).decode()
    assert {"no apples", "one apple", "70 apples", "Ctrl 70 Alt", "70 keys"} <= set(seen)   # codes as numbers
    assert "no melas | one mela | {count} melas" in out and "Ctrl {'|'} Alt | {n} tasti" in out   # was: nessuna mela
    assert "Home | About" in seen                 # no count: a title's bar, not a choice, read whole as before


def test_vue_i18n_s_cases_have_no_labels_and_i18next_s_count_is_no_choice():
    catalog = '{"total": "Total: no items | Total: one item | Total: {count} items", "shown": "{{count}} shown | Page 2"}'
    model, seen = recording(lambda texts: [text.replace("Total", "Totale") for text in texts])
    out = translate_document(None, catalog.encode(), name="en.json", translate=model).decode()
    assert "Totale: no items | Totale: one item | Totale: {count} items" in out    # was: `Total:` read as a label
    assert "{{count}} shown | Page 2" in seen or "70 shown | Page 2" in seen        # i18next's: one text


def test_a_folded_string_keeps_its_lines_and_a_translated_one_is_folded_as_wide():
    """A `>-` string was written back on one line, untranslated too: its folds as written, and a translation
    folded at spaces no wider than the source's longest line."""
    source = ("en:\n  update: >-\n    Update the model now and save all of the records\n"
              "    to the database before you go.\n  same: >-\n    Kept as\n    it is.\n")
    out = translate_document(None, source.encode(), name="en.yml",
                             translate=lambda texts: [t if t.startswith("Kept") else t.upper() for t in texts]).decode()
    assert out == source.replace("en:", "it:", 1).replace("Update the model now and save all of the records\n"
                                                          "    to the database before you go.",
                                                          "UPDATE THE MODEL NOW AND SAVE ALL OF THE RECORDS\n"
                                                          "    TO THE DATABASE BEFORE YOU GO.")
    longer = translate_document(None, source.encode(), name="en.yml",
                                translate=lambda texts: [t + " and then some more words" for t in texts]).decode()
    lines = longer.split("\n")[2:5]
    assert all(len(line) <= 4 + 48 for line in lines) and "\n    words to make" not in longer
    assert lines[2].strip().endswith("more words")
