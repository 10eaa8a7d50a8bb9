"""Decoding options, declared once: name, type, range, help and the engines that support each. The CLI's flags
(`pipeline.cli`), the service's request schema (`pipeline.service.api`), the engines' checks
(`pipeline.translate.engine`) and the decoder's range checks (`pipeline.decoding`) are all derived from `OPTIONS`.

    OPTIONS["beam"].check(0)          # ValueError: beam must be >= 1, got 0
    unsupported("ctranslate2", {"sample": True})   # ["sample", "temperature", "top_k", "top_p", "seed"]

Adding an option is one `Option(...)` line here plus its use in the decoder. Imports nothing of ours.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any, Iterable

ENGINES = ("keras", "ctranslate2")     # the engines (`pipeline.translate.open_translator`), named once


@dataclass(frozen=True)
class Option:
    """One decoding option: the keyword `Engine.translate` takes (the CLI flag is it with dashes)."""
    name: str
    type: type
    help: str
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    note: str = ""                            # after the range in a message, e.g. " (0: no cut)"
    engines: tuple[str, ...] = ENGINES
    group: str | None = None                  # the CLI's argument group ("sampling")

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def range_text(self, maximum: float | None = None) -> str:
        """"> 0", ">= 1", "in (0, 1]" or "from 1 to 8" (`maximum`: a tighter upper bound, e.g. the service's)."""
        top = self.maximum if maximum is None else maximum
        low = "" if self.minimum is None else f"{self.minimum:g}"
        if top is None:
            return f"{'>' if self.exclusive_minimum else '>='} {low}" if low else "any value"
        if self.exclusive_minimum:
            return f"in ({low}, {top:g}]"
        return f"from {low} to {top:g}" if low else f"<= {top:g}"

    def check(self, value: Any, maximum: float | None = None, label: str | None = None) -> None:
        """ValueError naming the option (or `label`, e.g. its flag), its range and `value` when `value` is out of
        range."""
        if self.type is bool or value is None:
            return
        top = self.maximum if maximum is None else maximum
        low_ok = (self.minimum is None or (value > self.minimum if self.exclusive_minimum else value >= self.minimum))
        if not low_ok or (top is not None and value > top):
            raise ValueError(f"{label or self.name} must be {self.range_text(maximum)}{self.note}, got {value}")


SAMPLING = "sampling"
OPTIONS: dict[str, Option] = {option.name: option for option in (
    Option("beam", int, "beam size (1 = greedy; default from the run's config)", minimum=1),
    Option("batch_size", int, "sentences decoded together", minimum=1),
    Option("length_penalty", float, "GNMT alpha (default from the run's config)", minimum=0),
    Option("max_length", int, "most tokens per translated sentence", minimum=1),
    Option("sample", bool, "sample instead of greedy or beam search", engines=("keras",), group=SAMPLING),
    Option("temperature", float, "below 1 sharpens, above 1 flattens (default 1)", minimum=0, exclusive_minimum=True,
           engines=("keras",), group=SAMPLING),
    Option("top_k", int, "draw among the K most likely tokens only (default: all)", minimum=0, note=" (0: no cut)",
           engines=("keras",), group=SAMPLING),
    Option("top_p", float, "draw among the fewest tokens holding probability P (default 1)", minimum=0, maximum=1,
           exclusive_minimum=True, note=" (1: no cut)", engines=("keras",), group=SAMPLING),
    Option("seed", int, "the same seed and input give the same output (default: random)", engines=("keras",),
           group=SAMPLING),
)}
SAMPLING_OPTIONS = tuple(name for name, option in OPTIONS.items() if option.group == SAMPLING)


def unsupported(engine: str, options: dict[str, Any]) -> list[str]:
    """The options `engine` lacks, all of them, when any of them is given (set, or True for a flag); else []."""
    lacking = [name for name, option in OPTIONS.items() if engine not in option.engines]
    given = [name for name in lacking if options.get(name) not in (None, False)]
    return lacking if given else []


def check_engine_options(engine: str, options: dict[str, Any]) -> None:
    """ValueError where `engine` cannot decode with the options given."""
    lacking = unsupported(engine, options)
    if lacking:
        supported = sorted({e for name in lacking for e in OPTIONS[name].engines})
        names = ", ".join(lacking[:-1]) + f" and {lacking[-1]}" if len(lacking) > 1 else lacking[0]
        raise ValueError(f"{names} need engine {' or '.join(map(repr, supported))}, not {engine!r}")


def check_ranges(options: dict[str, Any], flags: bool = False) -> None:
    """ValueError for the first option given out of its declared range (named as its flag with `flags`)."""
    for name, value in options.items():
        if name in OPTIONS:
            OPTIONS[name].check(value, label=OPTIONS[name].flag if flags else None)


def add_flags(parser: argparse.ArgumentParser, names: Iterable[str]) -> None:
    """One flag per option named, typed as declared (a bool option is a switch), grouped by `Option.group`."""
    groups: dict[str, Any] = {}
    for name in names:
        option = OPTIONS[name]
        target: Any = parser
        if option.group == SAMPLING:
            target = groups.get(SAMPLING) or groups.setdefault(SAMPLING, parser.add_argument_group(
                SAMPLING, "draw each translation from the model instead of searching for the most likely one "
                          "(e.g. for back-translation)"))
        if option.type is bool:
            target.add_argument(option.flag, action="store_true", help=option.help)
        else:
            target.add_argument(option.flag, type=option.type, help=option.help)


def given(args: argparse.Namespace, names: Iterable[str]) -> dict[str, Any]:
    """The options named that the command line set (a switch only when on)."""
    values = {name: getattr(args, name, None) for name in names}
    return {name: value for name, value in values.items() if value is not None and value is not False}
