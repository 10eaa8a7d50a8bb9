"""Markdown written back in the source's own layout where mdformat would choose its own: mdformat's renderers for
the blocks whose spelling CommonMark leaves free, told to spell each as the source did, and the parser told to
keep what it would otherwise normalize away.

A translated Markdown file's diff should show the translation. mdformat, which renders the tokens back, writes
one house style: `*` and `+` bullets as `-` (and `*` for every other list), ordered lists numbered `1.` `1.` `1.`,
a thematic break as 70 underscores, setext headings (`Title` over `=====`) as ATX (`# Title`), `~~~` fences as
backticks, indented code as fenced, link destinations percent-encoded (`wiki/Äpfel` as `wiki/%C3%84pfel`,
`<./my file.md>` as `./my%20file.md`), and every reference definition moved to the end of the file, sorted, its
label lowercased (`[Guide][guide link]`), an unused one dropped. Each of these is kept as written here:

- `keep_written(md)` (the parser): link destinations are kept as written where they can be written so again (no
  `<`, `>`, backslash, control character), a reference link's label as written (`meta["written label"]`), and each
  run of reference definitions is an `html_block` token of the source's lines, which the renderer writes as read
  (`DEFINITIONS`: the labels it defines, for `relinked_definitions`).
- `RENDERERS` (the renderer): bullets and numbers as written (each item's own number and indentation), a thematic
  break's own characters, a setext heading as setext, a fence's own characters and length (where the code still
  fits inside), indented code indented (but in a list item, where a fence is never misread), reference links by
  their labels as written.

What is left as mdformat writes it: a paragraph's line breaks within a translated text, table padding, hard breaks
(a backslash), trailing spaces.
"""
from __future__ import annotations

from typing import Any, Callable

import regex

DEFINITIONS = "definitions"              # an html_block's meta key: the labels its lines define, with their hrefs
WRITTEN_LABEL = "written label"          # a reference link's meta key: (form, label as written)
SOURCE_LINES = "source lines"             # the render environment's key: the parsed text's lines (tokens' maps)
THEMATIC_BREAK = regex.compile(r"([-*_])(?:[ \t]*+\1){2,}+[ \t]*+\Z")     # the end of a thematic break's line
UNSAFE_DESTINATION = regex.compile(r"[<>\\\x00-\x1f\x7f]")     # kept only percent-encoded, as mdformat writes it


def keep_written(md: Any) -> Any:
    """`md` (a MarkdownIt) keeping link destinations, reference labels and reference definitions as written."""
    normalize = md.normalizeLink
    md.normalizeLink = lambda url: normalize(url) if UNSAFE_DESTINATION.search(url) else url
    reference = md.block.ruler.__rules__[md.block.ruler.__find__("reference")].fn
    md.block.ruler.at("reference", _definitions(reference))
    for name in ("link", "image"):
        rule = md.inline.ruler.__rules__[md.inline.ruler.__find__(name)].fn
        md.inline.ruler.at(name, _labelled(rule))
    return md


def _definitions(reference: Callable[..., bool]) -> Callable[..., bool]:
    """markdown-it's reference rule, the definitions it reads (one after another, no blank line between) also one
    `html_block` of their lines as written."""

    def rule(state: Any, start: int, end: int, silent: bool) -> bool:
        known = set(state.env.get("references", {}))
        if not reference(state, start, end, silent):
            return False
        if silent:
            return True
        while state.line < end and not state.isEmpty(state.line) and state.sCount[state.line] >= state.blkIndent \
                and state.sCount[state.line] - state.blkIndent < 4 and reference(state, state.line, end, False):
            pass
        references = state.env.get("references", {})
        token = state.push("html_block", "", 0)
        token.map, token.content = [start, state.line], state.getLines(start, state.line, state.blkIndent, True)
        token.meta = {DEFINITIONS: {label: references[label].get("href") for label in references
                                    if label not in known}}
        return True

    return rule


def _labelled(link: Callable[..., bool]) -> Callable[..., bool]:
    """markdown-it's link (or image) rule, a reference link's label also kept as written: ("full", label) for
    `[text][Label]`, ("collapsed", text) for `[text][]`, ("shortcut", text) for `[text]`."""

    def rule(state: Any, silent: bool) -> bool:
        start, count = state.pos, len(state.tokens)
        if not link(state, silent):
            return False
        if silent or len(state.tokens) <= count:
            return True
        token = next((token for token in state.tokens[count:] if token.type in ("link_open", "image")), None)
        if token is not None and token.meta.get("label"):       # (the text pending before it is pushed first)
            source = state.src[start:state.pos]
            opening = 2 if source.startswith("!") else 1
            text_end = _closing_bracket(source, opening)
            text = source[opening:text_end]
            rest = source[text_end + 1:]
            if rest == "[]":
                token.meta[WRITTEN_LABEL] = ("collapsed", text)
            elif rest.startswith("[") and rest.endswith("]"):
                token.meta[WRITTEN_LABEL] = ("full", rest[1:-1])
            else:
                token.meta[WRITTEN_LABEL] = ("shortcut", text)
        return True

    return rule


def _closing_bracket(source: str, start: int) -> int:
    """Where the `]` closing a link's text (which opens before `start`) is: brackets nest, `\\]` and code spans'
    brackets do not count."""
    depth, at = 1, start
    while at < len(source):
        character = source[at]
        if character == "\\":
            at += 2
            continue
        if character == "`":
            run = len(source) - len(source[at:].lstrip("`"))
            fence = source[at:run]
            closing = source.find(fence, run)
            at = run if closing < 0 else closing + len(fence)
            continue
        if character == "[":
            depth += 1
        elif character == "]":
            depth -= 1
            if depth == 0:
                return at
        at += 1
    return len(source)


def relinked_definitions(token: Any, references: dict[str, dict[str, Any]]) -> None:
    """A run of definitions' lines (`token`, an html_block from `keep_written`) with each destination that was
    pointed elsewhere since (a heading's new anchor, `HeadingAnchors.relink`) written anew in place."""
    defined = (token.meta or {}).get(DEFINITIONS)
    if not defined:
        return
    for label, before in defined.items():
        after = references.get(label, {}).get("href")
        if not isinstance(before, str) or not isinstance(after, str) or before == after:
            continue
        found = regex.search(r"\]:[ \t]*+\n?[ \t]*+(<?)" + regex.escape(before) + r"(?=>|[ \t\n]|\Z)", token.content)
        if found is not None:
            token.content = token.content[:found.end() - len(before)] + after + token.content[found.end():]


# -- the renderer ---------------------------------------------------------------------------------------------------
def _default(name: str) -> Callable[[Any, Any], str]:
    from mdformat.renderer import DEFAULT_RENDERERS

    return DEFAULT_RENDERERS[name]


def _inside(node: Any, kind: str) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type == kind:
            return True
        parent = parent.parent
    return False


def _tight(node: Any) -> bool:
    """Whether a list is tight: its items' paragraphs are hidden (markdown-it's mark), as mdformat reads it."""
    return all(grandchild.hidden for child in node.children for grandchild in child.children
               if grandchild.type == "paragraph")


def _items(node: Any, context: Any, markers: list[str]) -> str:
    """A list's items, each after its own marker, its other lines indented under its text."""
    separator = "\n" if _tight(node) else "\n\n"
    rendered = []
    with context.indented(max(len(marker) for marker in markers) + 1):
        for child, marker in zip(node.children, markers):
            first, *rest = child.render(context).split("\n")
            indent = " " * (len(marker) + 1)
            rendered.append("\n".join([f"{marker} {first}" if first else marker,
                                       *(f"{indent}{line}" if line else "" for line in rest)]))
    return separator.join(rendered)


def _bullet_list(node: Any, context: Any) -> str:
    """A bullet list with the source's bullet (`*`, `+` or `-`): consecutive lists already differ in the source."""
    if node.markup not in ("-", "*", "+"):
        return _default("bullet_list")(node, context)
    return _items(node, context, [node.markup] * len(node.children))


def _ordered_list(node: Any, context: Any) -> str:
    """An ordered list with each item's number as written (`1.` `2.` `3.`, or `1.` `1.` `1.`) and its delimiter."""
    numbers = [child.info for child in node.children]
    if node.markup not in (".", ")") or not all(number.isdigit() and len(number) <= 9 for number in numbers):
        return _default("ordered_list")(node, context)
    return _items(node, context, [number + node.markup for number in numbers])


def _hr(node: Any, context: Any) -> str:
    """A thematic break as its line writes it (`---`, `* * *`), but in a list item (`- ---` would be a break)."""
    lines = context.env.get(SOURCE_LINES)
    if lines is not None and node.map and not _inside(node, "list_item"):
        found = THEMATIC_BREAK.search(lines[node.map[0]])
        if found is not None:
            return found.group(0).strip()
    return _default("hr")(node, context)


def _heading(node: Any, context: Any) -> str:
    """A setext heading as setext: its text escaped as a paragraph's lines are, underlined as long as its longest
    line (at least 3)."""
    if node.markup not in ("=", "-"):
        return _default("heading")(node, context)
    text = _default("paragraph")(node, context)
    if not text.strip():
        return _default("heading")(node, context)
    return f"{text}\n{node.markup * max(3, max(len(line) for line in text.split(chr(10))))}"


def _fence(node: Any, context: Any) -> str:
    """A fenced block with its own fence (`~~~`, ```` ```` ````), where the code still fits inside it."""
    written = _default("fence")(node, context)
    fence = node.markup
    if len(fence) < 3 or len(set(fence)) != 1 or fence[0] not in "`~" or (fence[0] == "`" and "`" in node.info):
        return written
    opening = len(written) - len(written.lstrip(written[:1]))
    closing = len(written) - len(written.rstrip(written[:1]))
    body = written[opening:len(written) - closing]
    longest = max((len(run) for run in regex.findall(regex.escape(fence[0]) + "++", node.content)), default=0)
    return f"{fence}{body}{fence}" if len(fence) > longest else written


def _code_block(node: Any, context: Any) -> str:
    """Indented code indented as written (in a list item, fenced as mdformat writes it)."""
    if _inside(node, "list_item") or not node.content.strip():
        return _default("code_block")(node, context)
    return "\n".join(f"    {line}" if line.strip() else "" for line in node.content.rstrip("\n").split("\n"))


def _reference(default: Callable[[Any, Any], str], image: bool) -> Callable[[Any, Any], str]:
    """A reference link (or image) by its label as written: `[text][Guide Link]`, `[text][]`, `[text]`."""

    def render(node: Any, context: Any) -> str:
        written = default(node, context)                 # (which marks the label used, for escaping brackets)
        form, label = node.meta.get(WRITTEN_LABEL, (None, None))
        if form is None:
            return written
        start = 2 if image else 1
        text = written[start:_closing_bracket(written, start)]
        opening = "![" if image else "["
        if form != "full" and text == label:
            return f"{opening}{text}]" + ("[]" if form == "collapsed" else "")
        return f"{opening}{text}][{label}]"

    return render


def renderers() -> dict[str, Callable[[Any, Any], str]]:
    """mdformat renderers (`RENDERERS` of a parser extension) writing the source's layout (the module's
    docstring)."""
    return {"bullet_list": _bullet_list, "ordered_list": _ordered_list, "hr": _hr, "heading": _heading,
            "fence": _fence, "code_block": _code_block, "link": _reference(_default("link"), False),
            "image": _reference(_default("image"), True)}
