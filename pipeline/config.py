"""One typed config for every stage: defaults <- YAML file <- command-line overrides.

Every section is a dataclass; unknown keys, wrong types and impossible values are
refused with a one-line `ConfigError` that names the key and what is allowed.
"""
from __future__ import annotations

import dataclasses
import os
import re
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from pipeline.language import Direction
from pipeline.options import OPTIONS


class ConfigError(ValueError):
    """A config file or override that cannot be used; the message names the key."""


@dataclass
class CorpusConfig:
    """One training corpus of `data.corpora`: a file prepare reads (or two line-aligned files) and its weight."""
    path: str | list = ""          # ita.txt(.gz), ita-eng.zip, a .tsv(.gz), or [train.en, train.it]
    weight: float = 1.0            # expected passes over this corpus's training pairs per epoch (see datasets.Mixture)
    name: str = ""                 # how reports, splits and metrics name it (default: the file name's stem)
    columns: str = "en-it"         # the language order of its columns (or of its two files): en-it, or it-en

    @property
    def paths(self) -> list[str]:
        return [self.path] if isinstance(self.path, str) else list(self.path)


@dataclass
class DataConfig:
    corpora: list = field(default_factory=list)   # [CorpusConfig, ...]; empty: prepare's --input or the bundled sample
    exclude: list = field(default_factory=list)   # files of held-out sentences: pairs with either side equal to a line go
    source_language: str = "en"   # the direction the run translates: en -> it, or it -> en (the same corpora, turned round)
    target_language: str = "it"
    bidirectional: bool = False   # one model for both ways: each pair also turned round, the target's tag (<2en>, <2it>)
                                  # first on the source side; source/target_language give the default direction
    max_length: int = 20          # tokens per side after punctuation splitting; longer pairs are dropped
    valid_fraction: float = 0.05  # share of distinct English sentences held out for validation (in either direction,
                                  # so a pair held out one way is held out the other way too)
    test_fraction: float = 0.05   # share held out for the test split
    tokenizer: str = "sentencepiece"   # sentencepiece (subwords, open vocabulary) | word (the tutorials')
    sentencepiece_type: str = "unigram"   # unigram | bpe
    en_vocab_size: int = 8000     # including padding and [UNK] (and, for SentencePiece, the 256 byte pieces)
    it_vocab_size: int = 12000
    joint_vocab_size: int = 0     # > 0: one vocabulary for both languages (en/it sizes are then unused)
    tokenizer_max_sentences: int = 1_000_000   # at most this many sentences (sampled) train the vocabularies
    shard_rows: int = 500_000     # rows per prepared .npy shard (each side): bounds prepare's memory
    too_long_warning: float = 0.01   # prepare warns when data.max_length drops more than this share of a corpus
    term_annotation: float = 0.0  # > 0: this share of training pairs gets inline term annotations, so the model learns
                                  # to honour glossaries (pipeline/terms.py); validation and test pairs never do
    term_dictionary: str = ""     # english<TAB>synonym|synonym lines the annotations come from ("": the bundled FreeDict)
    term_swap: float = 0.0        # share of annotated terms that ask for another synonym, or names made up (reference rewritten)
    term_replace: float = 0.0     # share of annotations that replace their English term instead of following it

    @property
    def direction(self) -> Direction:
        return Direction(self.source_language, self.target_language)


@dataclass
class ModelConfig:
    d_model: int = 128
    num_heads: int = 8
    ff_dim: int = 512
    encoder_layers: int = 2
    decoder_layers: int = 2
    dropout: float = 0.1
    positional: str = "sinusoidal"   # or "learned"
    scale_embeddings: bool = True     # multiply token embeddings by sqrt(d_model)
    norm_first: bool = False          # pre-LN instead of the paper's post-LN
    tie_embeddings: bool = True       # share decoder input embedding and output projection
    share_embeddings: bool = False    # one token embedding for source and target (needs data.joint_vocab_size)


@dataclass
class TrainConfig:
    batch_size: int = 64               # sentences per batch (unused when batch_tokens > 0)
    batch_tokens: int = 0              # > 0: padded tokens per batch, rows x width (wins over batch_size)
    accumulate_steps: int = 1          # batches per optimizer update (gradient accumulation)
    epochs: int = 10
    warmup_steps: int = 4000
    learning_rate_scale: float = 1.0   # multiplies the Noam schedule
    peak_learning_rate: float = 0.0    # > 0: the same warm-up/inverse-sqrt shape, peaking at this rate (scale unused)
    label_smoothing: float = 0.1
    buckets: int = 8                   # batch widths shared by source and target, least padding (1-12; 1 = one width)
    bucket_width: int = 1              # batch widths are multiples of this (8 suits GPUs; 0 or 1 = any width)
    early_stopping_patience: int = 3   # epochs without validation-loss improvement (0 = off)
    checkpoint_every_steps: int = 500  # 0 = only at epoch ends
    checkpoint_every_epoch: bool = True  # false: an epoch's end checkpoints only when training stops there
    keep_checkpoints: int = 5          # keep the weights of the last N checkpoints for averaging (0 = none)
    average_last: int = 0              # after training, average the last N kept checkpoints into averaged.keras
    max_steps: int = 0                 # stop after this many optimizer steps (0 = no limit)
    max_minutes: float = 0.0           # stop after this much training time, summed over resumes (0 = no limit)
    mixed_precision: str = "none"      # none | mixed_float16 | mixed_bfloat16
    jit_compile: bool = False          # TensorFlow: XLA, else graph mode (JAX always compiles the training step)
    distribute: str = "none"           # none | mirrored | multi_worker (TensorFlow) | data_parallel (JAX)
    final_bleu_sentences: int = 1000   # after training, sacreBLEU on at most this many valid sentences per corpus (0 = off)


@dataclass
class FinetuneConfig:
    """The schedule of `train --init-from RUN`: a fresh optimizer, a short warm-up and a lower peak rate."""
    warmup_steps: int = 200
    peak_learning_rate: float = 3.0e-4


class DecodeSettings(NamedTuple):
    """How one call decodes: what the caller gave, else the run's `decode` section."""
    beam: int
    alpha: float                       # GNMT length penalty
    batch_size: int


@dataclass
class DecodeConfig:
    beam_size: int = 4
    length_penalty: float = 0.6        # GNMT alpha; 0 = no normalisation
    batch_size: int = 64
    max_extra_length: int = 10         # output may be this many tokens longer than the input
    ban_unk: bool = True               # never output [UNK]: take the best in-vocabulary word instead
    jit_compile: bool = True           # TensorFlow: compile decoding with XLA (JAX always compiles it)

    def resolve(self, beam: int | None = None, length_penalty: float | None = None, batch_size: int | None = None,
                sample: bool = False) -> DecodeSettings:
        """The one place decoding defaults are filled in (engines, evaluation, the SavedModel, the service):
        the arguments given, else this section's values; beam 1 when sampling."""
        beam = (1 if sample else self.beam_size) if beam is None else int(beam)
        OPTIONS["beam"].check(beam)
        alpha = self.length_penalty if length_penalty is None else float(length_penalty)
        return DecodeSettings(beam, alpha, batch_size or self.batch_size)


@dataclass
class Config:
    seed: int = 1234
    workdir: str = "runs/tiny"
    data: DataConfig = field(default_factory=DataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    decode: DecodeConfig = field(default_factory=DecodeConfig)
    finetune: FinetuneConfig = field(default_factory=FinetuneConfig)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


CHOICES = {
    "data.source_language": ("en", "it"),
    "data.target_language": ("en", "it"),
    "data.tokenizer": ("word", "sentencepiece"),
    "data.sentencepiece_type": ("unigram", "bpe"),
    "model.positional": ("sinusoidal", "learned"),
    "train.mixed_precision": ("none", "mixed_float16", "mixed_bfloat16"),
    "train.distribute": ("none", "mirrored", "multi_worker", "data_parallel"),
}
POSITIVE = {
    "data.max_length", "data.en_vocab_size", "data.it_vocab_size", "model.d_model",
    "model.num_heads", "model.ff_dim", "model.encoder_layers", "model.decoder_layers",
    "train.batch_size", "train.accumulate_steps", "train.buckets", "train.epochs", "train.warmup_steps",
    "train.learning_rate_scale",
    "decode.beam_size", "decode.batch_size", "data.tokenizer_max_sentences",
    "data.shard_rows", "finetune.warmup_steps", "finetune.peak_learning_rate",
}
NON_NEGATIVE = {
    "train.batch_tokens", "train.bucket_width", "train.early_stopping_patience", "train.checkpoint_every_steps",
    "train.max_steps", "train.max_minutes", "decode.length_penalty", "decode.max_extra_length", "seed",
    "data.joint_vocab_size", "train.keep_checkpoints", "train.average_last", "train.peak_learning_rate",
    "train.final_bleu_sentences",
}
FRACTIONS = {"data.valid_fraction", "data.test_fraction", "model.dropout", "train.label_smoothing",
             "data.too_long_warning", "data.term_swap", "data.term_replace"}


def default_corpus_name(paths: list[str]) -> str:
    """A corpus's name when the config gives none: its (first) file name up to the first dot."""
    return Path(paths[0]).name.split(".")[0] or "corpus"


def _validate_corpora(data: DataConfig) -> None:
    """Weights >= 0 with one > 0, and unique names (the file stem when none is given) usable in file names."""
    for i, corpus in enumerate(data.corpora):
        corpus.name = corpus.name or default_corpus_name(corpus.paths)
        if not CORPUS_NAME.fullmatch(corpus.name):
            raise ConfigError(f"config key 'data.corpora[{i}].name': expected letters, digits, '_', '.' or '-' "
                              f"(at most 64, starting with a letter or digit), got {corpus.name!r}")
        if corpus.columns not in ("en-it", "it-en"):
            raise ConfigError(f"config key 'data.corpora[{i}].columns': must be one of en-it, it-en, "
                              f"got {corpus.columns!r}")
        if corpus.weight < 0:
            raise ConfigError(f"config key 'data.corpora[{i}].weight': must be >= 0, got {corpus.weight!r}")
    names = [c.name for c in data.corpora]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"config key 'data.corpora': names must differ, got {', '.join(twice)} more than once "
                          "(give each corpus a name)")
    if data.corpora and not any(c.weight > 0 for c in data.corpora):
        raise ConfigError("config key 'data.corpora': at least one corpus needs a weight > 0")


def _coerce(key: str, value: Any, kind: type) -> Any:
    """Check one scalar against its declared type (ints are accepted as floats)."""
    if kind is bool:
        ok = isinstance(value, bool)
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    else:
        ok = isinstance(value, kind)
    if not ok:
        raise ConfigError(f"config key '{key}': expected {kind.__name__}, got {type(value).__name__} {value!r}")
    return value


LIST_ITEMS = {"data.corpora": CorpusConfig, "data.exclude": str}   # what each list-valued key holds
CORPUS_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def _build_list(key: str, value: Any) -> list:
    """A list-valued key: a list (or one item) of `LIST_ITEMS[key]`; a corpus may be given as its path alone."""
    item = LIST_ITEMS[key]
    values = value if isinstance(value, list) else [value]
    out = []
    for i, entry in enumerate(values):
        where = f"{key}[{i}]"
        if item is CorpusConfig:
            if isinstance(entry, (str, list)):
                entry = {"path": entry}
            corpus = _build(CorpusConfig, entry, where + ".")
            paths = corpus.paths
            if not 1 <= len(paths) <= 2 or not all(isinstance(p, str) and p for p in paths):
                raise ConfigError(f"config key '{where}.path': expected a file, or a list of two line-aligned files "
                                  f"(in the order of its columns, {corpus.columns}), got {corpus.path!r}")
            out.append(corpus)
        else:
            out.append(_coerce(where, entry, item))
    return out


def _build(cls: type, values: dict[str, Any], prefix: str) -> Any:
    """Instantiate dataclass `cls` from `values`, refusing unknown keys and wrong types."""
    if not isinstance(values, dict):
        raise ConfigError(f"config key '{prefix.rstrip('.') or '<root>'}': expected a mapping, got {type(values).__name__}")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    kwargs = {}
    for key, value in values.items():
        if key not in names:
            raise ConfigError(f"config key '{prefix}{key}' is unknown; allowed here: {', '.join(names)}")
        kind = hints[key]
        if dataclasses.is_dataclass(kind):
            kwargs[key] = _build(kind, value, f"{prefix}{key}.")
        elif prefix + key in LIST_ITEMS:
            kwargs[key] = _build_list(prefix + key, value)
        elif cls is CorpusConfig and key == "path":
            if not isinstance(value, (str, list)):
                raise ConfigError(f"config key '{prefix}{key}': expected a file name or a list of two, "
                                  f"got {type(value).__name__} {value!r}")
            kwargs[key] = value
        else:
            kwargs[key] = _coerce(prefix + key, value, kind)
    return cls(**kwargs)


def validate(config: Config) -> Config:
    """Refuse impossible values with a one-line error naming the key."""
    flat = flatten(config.to_dict())
    for key, allowed in CHOICES.items():
        if flat[key] not in allowed:
            raise ConfigError(f"config key '{key}': must be one of {', '.join(allowed)}, got {flat[key]!r}")
    for key in POSITIVE:
        if flat[key] <= 0:
            raise ConfigError(f"config key '{key}': must be > 0, got {flat[key]!r}")
    for key in NON_NEGATIVE:
        if flat[key] < 0:
            raise ConfigError(f"config key '{key}': must be >= 0, got {flat[key]!r}")
    for key in FRACTIONS:
        if not 0.0 <= flat[key] < 1.0:
            raise ConfigError(f"config key '{key}': must be in [0, 1), got {flat[key]!r}")
    _validate_corpora(config.data)
    if config.data.source_language == config.data.target_language:
        raise ConfigError(f"config key 'data.target_language': must differ from data.source_language="
                          f"{config.data.source_language}, got {config.data.target_language!r}")
    if config.data.bidirectional and not (config.data.tokenizer == "sentencepiece" and config.data.joint_vocab_size):
        raise ConfigError("config key 'data.bidirectional': needs one joint SentencePiece vocabulary (data.tokenizer="
                          "sentencepiece and data.joint_vocab_size > 0), where the language tags are pieces")
    if config.data.term_annotation and (config.data.source_language != "en" or config.data.bidirectional):   # the term dictionary is English -> Italian
        raise ConfigError("config key 'data.term_annotation': term annotation needs data.source_language=en "
                          f"(its dictionary is English -> Italian), got {config.data.source_language!r}")
    if not 0.0 <= config.data.term_annotation <= 1.0:
        raise ConfigError(f"config key 'data.term_annotation': must be in [0, 1], got {config.data.term_annotation!r}")
    if config.data.valid_fraction + config.data.test_fraction >= 1.0:
        raise ConfigError("config keys 'data.valid_fraction' + 'data.test_fraction' must be < 1, got "
                          f"{config.data.valid_fraction + config.data.test_fraction}")
    m = config.model
    if m.d_model % 2:
        raise ConfigError(f"config key 'model.d_model': must be even for the sinusoidal position table, got {m.d_model}")
    if m.d_model % m.num_heads:
        raise ConfigError(f"config key 'model.num_heads': must divide model.d_model={m.d_model}, got {m.num_heads}")
    smallest = 300 if config.data.tokenizer == "sentencepiece" else 8   # 4 specials + 256 bytes + characters
    for key in ("en_vocab_size", "it_vocab_size") + (("joint_vocab_size",) if config.data.joint_vocab_size else ()):
        if getattr(config.data, key) < smallest:
            raise ConfigError(f"config key 'data.{key}': must be >= {smallest} with data.tokenizer="
                              f"{config.data.tokenizer}, got {getattr(config.data, key)}")
    if config.train.distribute == "data_parallel" and not config.train.jit_compile:   # op by op, XLA's CPU collectives deadlock
        raise ConfigError("config key 'train.jit_compile': train.distribute=data_parallel needs true, got false")
    if config.train.buckets > 12:
        raise ConfigError(f"config key 'train.buckets': at most 12 batch widths, got {config.train.buckets}")
    if config.train.accumulate_steps > 1 and config.train.distribute != "none":   # weights are per whole batch
        raise ConfigError(f"config key 'train.accumulate_steps': needs train.distribute=none, got "
                          f"{config.train.accumulate_steps} with train.distribute={config.train.distribute}")
    if config.train.average_last > config.train.keep_checkpoints:
        raise ConfigError(f"config key 'train.average_last': must be <= train.keep_checkpoints="
                          f"{config.train.keep_checkpoints}, got {config.train.average_last}")
    if m.share_embeddings and not config.data.joint_vocab_size:
        raise ConfigError("config key 'model.share_embeddings': needs one joint vocabulary "
                          "(set data.joint_vocab_size > 0)")
    return config


def flatten(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A nested config dict as {"section.key": value}."""
    out = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            out.update(flatten(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = value
    return out


def parse_override(text: str) -> tuple[list[str], Any]:
    """Parse `section.key=value` (value in YAML syntax) into (path, value)."""
    if "=" not in text:
        raise ConfigError(f"override {text!r}: expected section.key=value")
    key, raw = text.split("=", 1)
    try:
        value = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise ConfigError(f"override {text!r}: value is not valid YAML ({exc.__class__.__name__})") from None
    return key.strip().split("."), value


def _merge(base: dict[str, Any], tree: dict[str, Any]) -> dict[str, Any]:
    """`tree` over `base`, section by section (a copy; neither is changed)."""
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in base.items()}
    for key, value in tree.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def load_config(path: str | os.PathLike | None = None, overrides: list[str] = (),
                workdir: str | None = None, base: dict[str, Any] | None = None) -> Config:
    """Load defaults <- `base` (e.g. what a fine-tuned run inherits) <- YAML file <- `section.key=value`
    overrides <- workdir, then validate."""
    tree: dict[str, Any] = {}
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"config file {path}: not found")
        try:
            tree = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" line {mark.line + 1}" if mark else ""
            raise ConfigError(f"config file {path}{where}: not valid YAML") from None
        if not isinstance(tree, dict):
            raise ConfigError(f"config file {path}: expected a mapping of sections, got {type(tree).__name__}")
    if base:
        tree = _merge(base, tree)
    for item in overrides:
        keys, value = parse_override(item)
        node = tree
        for k in keys[:-1]:
            node = node.setdefault(k, {})
            if not isinstance(node, dict):
                raise ConfigError(f"override {item!r}: '{k}' is not a section")
        node[keys[-1]] = value
    if workdir is not None:
        tree["workdir"] = str(workdir)
    try:
        return validate(_build(Config, tree, ""))
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}" if path else str(exc)) from None


def config_from_dict(tree: dict[str, Any]) -> Config:
    """Rebuild a validated Config from `Config.to_dict()` output (e.g. a run's config.yaml)."""
    return validate(_build(Config, tree, ""))


def save_config(config: Config, path: str | os.PathLike) -> None:
    """Write the resolved config as YAML, atomically."""
    from pipeline.io_utils import atomic_write_text
    atomic_write_text(path, yaml.safe_dump(config.to_dict(), sort_keys=False))
