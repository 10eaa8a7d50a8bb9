"""Pages and documents that are templates, as web projects keep them (Django, Jinja, Liquid in a Jekyll site's
Markdown, Twig, Handlebars, Angular and Vue): the template's tags come back exactly as written, from a model that
mangles braces, and the words around them are translated."""
from pipeline.documents import translate_document
from stand_ins import recording, suffixed

PAGE = b"""<!DOCTYPE html><html><body>
{% extends "base.html" %}
{% block content %}
<h1>Welcome back, {{ user.first_name }}!</h1>
<p>You have {{ count }} new messages. {% if admin %}Manage the <a href="{% url 'admin' %}">site settings</a>.{% endif %}</p>
<p title="{{ tooltip }}">Click {{ button|upper }} to continue</p>
{# a note for translators #}
{% endblock %}
</body></html>"""
POST = b"""---
title: Install
---
# Installing {{ site.product }}

{% include note.html content="Read this first" %}

Run the installer and restart {{ page.app_name }} when it asks.
"""


def mangling(texts: list[str]) -> list[str]:
    """A model that reads template tags as punctuation: `{{ x }}` -> `{ x }`, `{% if %}` -> `( if )`."""
    return [text.replace("{{", "{").replace("}}", "}").replace("{%", "(").replace("%}", ")")
            for text in suffixed(texts)]


def test_a_django_template_keeps_its_tags_and_its_words_are_translated():
    model, seen = recording(mangling)
    out = translate_document(None, PAGE, name="dashboard.html", translate=model).decode()
    for line in ('{% extends "base.html" %}', "{% block content %}", "{# a note for translators #}",
                 "{% endblock %}", "<h1>Welcome-it back-it, {{ user.first_name }}!</h1>",
                 "<p>You-it have-it {{ count }} new-it messages-it. {% if admin %}Manage-it the-it "
                 "<a href=\"{% url 'admin' %}\">site-it settings-it</a>.{% endif %}</p>",
                 '<p title="{{ tooltip }}">Click-it {{ button|upper }} to continue-it</p>'):
        assert line in out
    assert not any("extends" in text or "translators" in text for text in seen)   # tags alone: not read


def test_liquid_tags_in_a_jekyll_page_stay():
    out = translate_document(None, POST, name="install.md", translate=mangling).decode()
    assert "# Installing-it {{ site.product }}\n" in out
    assert '\n{% include note.html content="Read this first" %}\n' in out
    assert "restart-it {{ page.app_name }} when-it" in out


def test_a_tag_is_only_what_lies_between_its_own_braces():
    page = (b"<p>Type {{ to open a tag and then {{ user.name }} gets filled in.</p>"
            b"<p>Raw output {{{ body_html }}} stays as written.</p>")
    out = translate_document(None, page, name="help.html", translate=mangling).decode()
    assert "Type-it { to open-it a tag-it and-it then-it {{ user.name }} gets-it filled-it in.</p>" in out, out
    assert "Raw-it output-it {{{ body_html }}} stays-it as written-it.</p>" in out, out
    # was: "{{ to open a tag and then {{ user.name }}" one tag, its words unread
