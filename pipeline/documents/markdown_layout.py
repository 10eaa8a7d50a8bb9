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
- `renderers()` (the renderer): bullets and numbers as written (each item's own number, the spaces after it, and
  the blank lines between items and between an item's blocks), a thematic break's own characters, a setext heading
  as setext, a fence's own characters and length (where the code still fits inside), indented code indented (but
  in a list item or right after a list, where a fence is never misread), reference links by their labels as
  written, and a translated paragraph wrapped as wide as the source wrapped it.

What is left as mdformat writes it: table padding, hard breaks (a backslash), trailing spaces.
"""
from __future__ import annotations

from typing import Any, Callable

import regex

DEFINITIONS = "definitions"              # an html_block's meta key: it is a run of reference definitions
MAX_DEFINITION_LINES = 100               # the most lines one reference definition is read over (`_definitions`)
# A definition's label, at a line's start (`[Guide Link]:`)
DEFINITION_START = regex.compile(r"^[ \t]{0,3}+\[((?:\\.|[^\\\[\]]){1,999}+)\]:", regex.M)
WRITTEN_LABEL = "written label"          # a reference link's meta key: (form, label as written)
DELIMITER_ROW = regex.compile(r"\|?+[ \t]*+:?-++:?[ \t]*+(?:\|[ \t]*+:?-++:?[ \t]*+)*+\|?+")   # `|---|:-:|`
TRANSLATED = "translated"                 # an inline token's meta key: its text was translated (`InlineSegment`)
SOURCE_LINES = "source lines"             # the render environment's key: the parsed text's lines (tokens' maps)
THEMATIC_BREAK = regex.compile(r"([-*_])(?:[ \t]*+\1){2,}+[ \t]*+\Z")     # the end of a thematic break's line
# In MDX, a brace or `<` in text is an expression or a tag unless escaped: one not escaped yet, with the backslashes
# before it (an even count escape one another)
MDX_UNESCAPED = regex.compile(r"(?<!\\)(\\*+)?([{}<])")     # (from a run's start: linear)
REFERENCE_LIKE = regex.compile(r"&(?=#?[A-Za-z0-9]++;)")   # a `&` that would be read as a reference's start
UNSAFE_DESTINATION = regex.compile(r"[<>\\\x00-\x1f\x7f]")     # kept only percent-encoded, as mdformat writes it


def mdx_escaped(text: str) -> str:
    """Markdown written for MDX: each brace and `<` that is not escaped, escaped (`\\{`)."""
    return MDX_UNESCAPED.sub(lambda m: m.group(0) if len(m.group(1) or "") % 2 else
                             f"{m.group(1) or ''}\\{m.group(2)}", text)


def keep_written(md: Any) -> Any:
    """`md` (a MarkdownIt) keeping link destinations, reference labels and reference definitions as written."""
    normalize = md.normalizeLink
    md.normalizeLink = lambda url: normalize(url) if UNSAFE_DESTINATION.search(url) else REFERENCE_LIKE.sub(
        "&amp;", url)                                    # (`&amp;` read in `foo&amp;amp;`: written so again)
    md.core.ruler.after("text_join", "image_text_join", _image_text_join)
    reference = md.block.ruler.__rules__[md.block.ruler.__find__("reference")].fn
    md.block.ruler.at("reference", _definitions(reference))
    for name in ("link", "image"):
        rule = md.inline.ruler.__rules__[md.inline.ruler.__find__(name)].fn
        md.inline.ruler.at(name, _labelled(rule))
    return md


def _image_text_join(state: Any) -> None:
    """Core rule: an image's description with its escapes as text (markdown-it's `text_join` joins only an
    inline's own children, and mdformat writes an image's description from its text: `![a \\{b\\}](x.png)` came
    back `![a b](x.png)`)."""
    for token in state.tokens:
        for child in token.children or ():
            if child.type == "image" and child.children:
                for grandchild in child.children:
                    if grandchild.type == "text_special":
                        grandchild.type = "text"


def _definitions(reference: Callable[..., bool]) -> Callable[..., bool]:
    """markdown-it's reference rule, the definitions it reads (one after another, no blank line between) also one
    `html_block` of their lines as written (`meta[DEFINITIONS]`). Each definition is read within
    `MAX_DEFINITION_LINES` of its first line: markdown-it's rule reads on to the end of the block for each one
    (8,000 definitions, one a line: 145 s)."""

    def bounded(state: Any, line: int, end: int, silent: bool) -> bool:
        saved = state.lineMax
        state.lineMax = min(saved, line + MAX_DEFINITION_LINES)
        try:
            return reference(state, line, min(end, state.lineMax), silent)
        finally:
            state.lineMax = saved

    def rule(state: Any, start: int, end: int, silent: bool) -> bool:
        if not bounded(state, start, end, silent):
            return False
        if silent:
            return True
        while state.line < end and not state.isEmpty(state.line) and state.sCount[state.line] >= state.blkIndent \
                and state.sCount[state.line] - state.blkIndent < 4 and bounded(state, state.line, end, False):
            pass
        token = state.push("html_block", "", 0)
        token.map, token.content = [start, state.line], state.getLines(start, state.line, state.blkIndent, True)
        token.meta = {DEFINITIONS: True}
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
            token.meta[WRITTEN_LABEL] = _written_label(state.src[start:state.pos])
        return True

    return rule


def _written_label(source: str) -> tuple[str, str]:
    """A reference link's form and label as written, from its source (`[text][Label]`, `[text][]`, `[text]`),
    read from its end: a label holds no bracket that is not escaped, where its text may (in code, in HTML)."""
    opening = 2 if source.startswith("!") else 1
    at = len(source) - 1                                 # the last `[` not escaped: the last bracket's start
    while at > 0:
        at = source.rfind("[", 0, at)
        backslashes = len(source[:at]) - len(source[:at].rstrip("\\"))
        if at < 0 or backslashes % 2 == 0:
            break
    if at > opening and source[at - 1] == "]":
        label = source[at + 1:-1]
        return ("collapsed", source[opening:at - 1]) if not label else ("full", label)
    return "shortcut", source[opening:-1]


def relinked_definitions(token: Any, moved: dict[str, tuple[str, str]]) -> None:
    """A run of definitions' lines (`token`, an html_block from `keep_written`) with each destination that was
    pointed elsewhere since (`moved`: a label, as markdown-it keys it, -> (its href before, after): a heading's new
    anchor, `HeadingAnchors.relink`) written anew in place."""
    if not moved or not (token.meta or {}).get(DEFINITIONS):
        return
    from markdown_it.common.utils import normalizeReference

    pieces, at = [], 0
    for found in DEFINITION_START.finditer(token.content):
        change = moved.get(normalizeReference(found.group(1)))
        if change is None:
            continue
        before, after = change
        destination = regex.compile(r"[ \t]*+\n?[ \t]*+<?" + regex.escape(before) + r"(?=>|[ \t\n]|\Z)")
        written = destination.match(token.content, found.end())
        if written is not None:
            pieces += [token.content[at:written.end() - len(before)], after]
            at = written.end()
    token.content = "".join([*pieces, token.content[at:]])


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


def blank_before(node: Any, lines: list[str] | None) -> bool | None:
    """Whether the source has a blank line (but for quote marks) right before a block; None where it is not known."""
    if lines is None or not node.map or not 0 < node.map[0] <= len(lines):
        return None
    return not lines[node.map[0] - 1].replace(">", "").strip()


def _list_item(node: Any, context: Any) -> str:
    """A list item's blocks, parted as the source parts them (a blank line or none): mdformat parted them by
    whether the whole list is tight, which it asked again for each item (8,000 items: 33 s), and a setext heading
    or a definition after a paragraph with no blank line between read as that paragraph's text."""
    lines = context.env.get(SOURCE_LINES)
    tight = _tight(node.parent) if any(blank_before(child, lines) is None for child in node.children[1:]) \
        else False
    pieces = []
    for index, child in enumerate(node.children):
        if index:
            blank = blank_before(child, lines)
            pieces.append("\n\n" if blank or blank is None and not tight else "\n")
        pieces.append(child.render(context))
    text = "".join(pieces)
    return text if text.strip() else ""


def _items(node: Any, context: Any, markers: list[str]) -> str:
    """A list's items, each after its own marker and the spaces the source puts after it (one to four), its other
    lines indented under its text, and a blank line before it where the source has one."""
    lines = context.env.get(SOURCE_LINES)
    tight = _tight(node) if any(blank_before(child, lines) is None for child in node.children[1:]) else False
    rendered = []
    spacings = [_spacing(child, marker, lines) for child, marker in zip(node.children, markers)]
    with context.indented(max(len(marker) + len(space) for marker, space in zip(markers, spacings))):
        for child, marker, space in zip(node.children, markers, spacings):
            first, *rest = child.render(context).split("\n")
            indent = " " * (len(marker) + len(space))
            blank = blank_before(child, lines) if rendered else False
            rendered.append(("\n\n" if blank or blank is None and not tight else "\n") * bool(rendered))
            rendered.append("\n".join([f"{marker}{space}{first}" if first else marker,
                                       *(f"{indent}{line}" if line else "" for line in rest)]))
    return "".join(rendered)


def _spacing(item: Any, marker: str, lines: list[str] | None) -> str:
    """The spaces after an item's marker in the source (1 to 4, `1.  text`); one where not known, or where the
    item opens with code (whose own indentation follows one space)."""
    if lines is None or not item.map or not item.children or item.children[0].type == "code_block":
        return " "
    found = regex.match(r"[ \t>]*+" + regex.escape(marker) + r"( {1,4}+)(?! )", lines[item.map[0]])
    return found.group(1) if found else " "


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
    """A fenced block with its own fence (`~~~`, ```` ```` ````), where the code still fits inside it; code that
    does not end its last line (a fence left open at the file's end) still has the closing fence on a line of its
    own (mdformat wrote `code~~~`, and the rest of the file became code)."""
    if node.content and not node.content.endswith("\n"):
        node.token.content += "\n"
    written = _default("fence")(node, context)
    fence = node.markup
    if len(fence) < 3 or len(set(fence)) != 1 or fence[0] not in "`~" or (fence[0] == "`" and "`" in node.info) \
            or node.info.strip().startswith(fence[0]):       # (`~~~ ~x`: its space would be needed)
        return written
    opening = len(written) - len(written.lstrip(written[:1]))
    closing = len(written) - len(written.rstrip(written[:1]))
    body = written[opening:len(written) - closing]
    longest = max((len(run) for run in regex.findall(regex.escape(fence[0]) + "++", node.content)), default=0)
    return f"{fence}{body}{fence}" if len(fence) > longest else written


def _code_block(node: Any, context: Any) -> str:
    """Indented code indented as written (in a list item, fenced as mdformat writes it)."""
    previous = node.previous_sibling
    if _inside(node, "list_item") or not node.content.strip() or previous is not None and previous.type in (
            "bullet_list", "ordered_list"):              # (right after a list: in its last item, if indented)
        return _default("code_block")(node, context)
    return "\n".join(f"    {line}" if line.strip() else "" for line in node.content.rstrip("\n").split("\n"))


def _reference(default: Callable[[Any, Any], str], image: bool) -> Callable[[Any, Any], str]:
    """A reference link (or image) by its label as written: `[text][Guide Link]`, `[text][]`, `[text]`."""

    def render(node: Any, context: Any) -> str:
        written = default(node, context)                 # (which marks the label used, for escaping brackets)
        form, label = node.meta.get(WRITTEN_LABEL, (None, None))
        if image and context.env.get("mdx"):            # a description as text: its braces escaped in MDX
            end = written.rfind("](") if form is None else written.rfind("][") if written.endswith("]") and \
                written.count("[") > 1 else len(written) - 1
            if end > 2:
                written = "![" + mdx_escaped(written[2:end]) + written[end:]
        if form is None:
            return written
        tail = f"][{node.meta['label'].lower()}]"        # how mdformat ends one: its text is what comes before
        opening = "![" if image else "["
        text = written[len(opening):-len(tail)] if written.endswith(tail) else written[len(opening):-1]
        if form != "full" and text == label:
            return f"{opening}{text}]" + ("[]" if form == "collapsed" else "")
        return f"{opening}{text}][{label}]"

    return render


def _paragraph(node: Any, context: Any) -> str:
    """A paragraph the source wrapped over several lines, translated (its translation has no line breaks of its
    own), wrapped again no wider than the source's longest line: a translated paragraph came back on one line.
    One that kept its line breaks (not translated, or translated piece by piece) is written as they are."""
    lines = context.env.get(SOURCE_LINES)
    if lines is None or not node.map or node.map[1] - node.map[0] < 2 or not node.children or any(
            child.type in ("softbreak", "hardbreak") for child in node.children[0].walk()):
        return _default("paragraph")(node, context)
    options = context.options.setdefault("mdformat", {})
    saved = options.get("wrap")
    options["wrap"] = max(len(line.rstrip()) for line in lines[node.map[0]:node.map[1]])
    try:
        return _default("paragraph")(node, context)
    finally:
        if saved is None:
            del options["wrap"]
        else:
            options["wrap"] = saved


def _cells(line: str) -> list[str]:
    """A table row's cells as written (GFM: cut at each `|` not escaped, code spans too), without the pipes at its
    ends."""
    cells, start, at = [], 0, 0
    while at < len(line):
        if line[at] == "\\":
            at += 2
            continue
        if line[at] == "|":
            cells.append(line[start:at])
            start = at + 1
        at += 1
    cells.append(line[start:])
    if cells and not cells[0].strip():
        cells = cells[1:]
    if cells and not cells[-1].strip():
        cells = cells[:-1]
    return cells


def table(default: Callable[[Any, Any], str]) -> Callable[[Any, Any], str]:
    """A table as the source writes it where that can hold its translation: each row no text of which was
    translated as written, the delimiter row too; a row with a translated cell in the source's style (its outer
    pipes, the spaces around its cells), where the source does not align its columns (else, as mdformat writes
    it, padded to align: a translation changes the widths)."""

    def render(node: Any, context: Any) -> str:
        lines = context.env.get(SOURCE_LINES)
        rows = [child for part in node.children for child in part.children if child.type == "tr"]
        if lines is None or not node.map or node.map[1] - node.map[0] != len(rows) + 1:
            return default(node, context)
        quoted = _inside(node, "blockquote")
        written = [regex.sub(r"^[ \t]*+(?:>[ \t]?)*+[ \t]*+" if quoted else r"^[ \t]*+", "", line).rstrip()
                   for line in lines[node.map[0]:node.map[1]]]
        cells = [_cells(line) for line in written]
        if any(len(row) != len(cells[0]) for row in cells) or len(cells[0]) != len(rows[0].children) \
                or not DELIMITER_ROW.fullmatch(written[1]):
            return default(node, context)                # (lines not read as the table's: as mdformat writes it)
        out = [written[0] if not _changed(rows[0]) else None, written[1],
               *(line if not _changed(row) else None for line, row in zip(written[2:], rows[1:]))]
        if None not in out:
            return "\n".join(out)
        if len({len(line) for line in written}) == 1:    # aligned: realigned to the new widths
            return default(node, context)
        outer = written[0].startswith("|"), written[0].endswith("|")
        padded = " | " in written[0] or written[0].startswith("| ") or written[0].endswith(" |")
        for index, row in enumerate([rows[0], *rows[1:]]):
            line_index = 0 if index == 0 else index + 1
            if out[line_index] is not None:
                continue
            texts = [cell.render(context).strip() for cell in row.children]
            if not (texts[0] and texts[-1]) and not all(outer) or any("\n" in text for text in texts):
                return default(node, context)            # (an empty edge cell needs the outer pipes)
            joiner = " | " if padded else "|"
            text = joiner.join(texts)
            if outer[0]:
                text = ("| " if padded else "|") + text
            if outer[1]:
                text += " |" if padded else "|"
            out[line_index] = text
        return "\n".join(out)

    return render


def _changed(row: Any) -> bool:
    return any((cell.children[0].meta or {}).get(TRANSLATED) for cell in row.children if cell.children)


def renderers() -> dict[str, Callable[[Any, Any], str]]:
    """mdformat renderers (`RENDERERS` of a parser extension) writing the source's layout (the module's
    docstring)."""
    return {"bullet_list": _bullet_list, "ordered_list": _ordered_list, "hr": _hr, "heading": _heading,
            "paragraph": _paragraph, "list_item": _list_item,
            "fence": _fence, "code_block": _code_block, "link": _reference(_default("link"), False),
            "image": _reference(_default("image"), True)}
