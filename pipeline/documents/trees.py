"""Whether two parsed data trees (a YAML or TOML reader's mappings, sequences and scalars) read as the same data,
in time linear in their text: YAML's aliases share a node, and a few hundred bytes of nested aliases
(`b: &b [*a, *a, ...]`) name billions of them, which `==` would walk one by one."""
from __future__ import annotations

from typing import Any


def same_data(one: Any, other: Any) -> bool:
    """Whether `one` and `other` hold equal data (mappings in any order, Python's equality of scalars, NaN equal
    to NaN); each node shared by aliases is looked at once. A mapping's own keys count, not those a ruamel merge
    (`<<: *defaults`) brings."""
    shapes: dict[Any, int] = {}
    return _shape(one, shapes, {}) == _shape(other, shapes, {})


def _shape(node: Any, shapes: dict[Any, int], known: dict[int, tuple[int, Any]]) -> int:
    """The number `shapes` gives the data `node` holds: equal numbers, equal data."""
    if id(node) in known:
        return known[id(node)][0]
    if hasattr(node, "items") and callable(node.items):
        items = node.non_merged_items() if hasattr(node, "non_merged_items") else node.items()
        shape: Any = ("map", frozenset((_shape(key, shapes, known), _shape(value, shapes, known))
                                       for key, value in items))
    elif isinstance(node, (list, tuple)):
        shape = ("list", tuple(_shape(value, shapes, known) for value in node))
    elif isinstance(node, (set, frozenset)):
        shape = ("set", frozenset(_shape(value, shapes, known) for value in node))
    elif isinstance(node, float) and node != node:
        shape = ("nan",)
    else:
        kind = next((kind for kind in (str, bool, int, float, bytes) if isinstance(node, kind)), None)
        value = kind(node) if kind is not None else node.isoformat() if hasattr(node, "isoformat") else node
        try:
            shape = ("value", value, hash(value))
        except TypeError:                                   # (none a YAML or TOML reader makes: by its text)
            shape = ("text", type(node).__name__, repr(node))
    number = shapes.setdefault(shape, len(shapes))
    known[id(node)] = (number, node)                        # (the node held: its id stays its own)
    return number
