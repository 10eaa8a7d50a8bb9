"""Fine-tuning a trained run on new data: what the child run takes from its parent, and its lineage.

    python scripts/prepare.py --config configs/finetune-docs.yaml --vectorizers-from runs/anki/run
    python scripts/train.py   --config configs/finetune-docs.yaml --init-from runs/anki/run

The child keeps the parent's architecture (`model.*`; only `model.dropout` may change) and its
tokenizers (`data.tokenizer`, the vocabulary sizes, and the vectorizers themselves, so ids mean the
same), starts from the parent's weights (`best` by default) with a fresh optimizer and the
`finetune.*` schedule, and records where it came from in `lineage.json`. Everything else (data,
corpora and weights, max_length, budget) is the child config's own. Replay of the parent's data is
a second corpus with a small weight.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from pipeline.config import Config, ConfigError, flatten, load_config
from pipeline.io_utils import atomic_write_json
from pipeline.rundir import RunDir, VECTORIZERS_FILE, prepared_path, run_path

TOKENIZER_KEYS = ("tokenizer", "sentencepiece_type", "en_vocab_size", "it_vocab_size", "joint_vocab_size")
FREE_MODEL_KEYS = ("dropout",)          # may differ from the parent's: they change no weight


def inherited_tree(parent: Config) -> dict[str, Any]:
    """The config values a child run takes from its parent: the architecture and the tokenizer settings."""
    return {"model": parent.to_dict()["model"], "data": {k: getattr(parent.data, k) for k in TOKENIZER_KEYS}}


def check_inherited(config: Config, inherited: dict[str, Any], parent_dir: str | os.PathLike) -> None:
    """Refuse a child config that changes an inherited value, naming the key and both values."""
    flat, wanted = flatten(config.to_dict()), flatten(inherited)
    for key, value in wanted.items():
        if key.split(".")[-1] in FREE_MODEL_KEYS and key.startswith("model."):
            continue
        if flat.get(key) != value:
            raise ConfigError(f"config key '{key}': fine-tuning keeps the parent run's value {value!r} "
                              f"({parent_dir}), got {flat.get(key)!r}; remove the key or set it equal")


def load_child_config(path: str | os.PathLike | None, overrides: list[str], workdir: str | None,
                      parent_dir: str | os.PathLike) -> Config:
    """The child's config: defaults <- the parent's architecture and tokenizer settings <- file <- overrides."""
    inherited = inherited_tree(RunDir(parent_dir).require().load_config())
    config = load_config(path, overrides, workdir, base=inherited)
    check_inherited(config, inherited, parent_dir)
    return config


def resumed_child_config(path: str | os.PathLike | None, overrides: list[str], workdir: str | None) -> Config | None:
    """For `train --resume` of a fine-tuned run: its config with what it inherited (from lineage.json, so
    the parent directory need not exist any more); None when the run was trained from scratch."""
    plain = load_config(path, overrides, workdir)
    lineage = RunDir(run_path(plain)).load_lineage()
    if lineage is None:
        return None
    config = load_config(path, overrides, workdir, base=lineage["inherited"])
    check_inherited(config, lineage["inherited"], lineage["parent"])
    return config


def check_same_tokenizers(prepared_vectorizers: Path, parent_dir: str | os.PathLike) -> None:
    """The prepared data must be encoded with the parent's tokenizers (`prepare --vectorizers-from`)."""
    from pipeline.tokenizers import tokenizer_to_state
    from pipeline.vectorizers import load_vectorizers

    ours, theirs = load_vectorizers(prepared_vectorizers), RunDir(parent_dir).load_vectorizers()
    for side in ("english", "italian"):
        if tokenizer_to_state(getattr(ours, side)) != tokenizer_to_state(getattr(theirs, side)):
            raise ValueError(f"prepared data {prepared_vectorizers.parent}: its {side} tokenizer is not the one of "
                             f"{parent_dir}; prepare it with --vectorizers-from {parent_dir}")


def load_parent_weights(model: Any, parent_dir: str | os.PathLike, which: str = "best") -> Path:
    """Copy the parent's `which` weights into `model` (built from the child config), variable by variable,
    after checking that every variable's path and shape match; returns the parent's model file."""
    from pipeline.serializable import load_model     # Keras only here: prepare imports this module too

    path = RunDir(parent_dir).model_file(which)
    parent = load_model(parent_dir, which)
    ours, theirs = model.weights, parent.weights
    if len(ours) != len(theirs):
        raise ValueError(f"parent model {path}: {len(theirs)} weights, the child's architecture has {len(ours)}")
    for mine, other in zip(ours, theirs):
        if tuple(mine.shape) != tuple(other.shape):
            raise ValueError(f"parent model {path}: weight {other.path} has shape {tuple(other.shape)}, the child's "
                             f"{mine.path} {tuple(mine.shape)} (learned positions need the same data.max_length "
                             "and decode.max_extra_length)")
    model.set_weights(parent.get_weights())
    return path


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def lineage_record(parent_dir: str | os.PathLike, which: str, model_file: Path, inherited: dict[str, Any],
                   steps: int | None = None) -> dict[str, Any]:
    """What lineage.json holds: the parent run, its model file and checksum, what was inherited, and the
    parent's own lineage (so a chain of fine-tunings reads back to the run trained from scratch)."""
    parent = RunDir(parent_dir)
    return {"parent": str(parent.path.resolve()), "parent_model": which,
            "parent_model_file": str(model_file.resolve()), "parent_model_sha256": file_sha256(model_file),
            "parent_steps": steps, "inherited": inherited, "parent_lineage": parent.load_lineage(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def check_child(config: Config, parent_dir: str | os.PathLike) -> None:
    """Before fine-tuning: the config keeps the parent's inherited values, and its prepared data uses the
    parent's tokenizers."""
    check_inherited(config, inherited_tree(RunDir(parent_dir).require().load_config()), parent_dir)
    check_same_tokenizers(prepared_path(config) / VECTORIZERS_FILE, parent_dir)


def start_from_parent(model: Any, run: RunDir, parent_dir: str | os.PathLike, which: str = "best") -> str:
    """Load the parent's `which` weights into `model` and write the child's lineage.json; returns a line
    saying where the run starts from."""
    parent = RunDir(parent_dir)
    model_file = load_parent_weights(model, parent_dir, which)
    steps = json.loads(parent.summary_file.read_text()).get("total_steps") if parent.summary_file.is_file() else None
    atomic_write_json(run.lineage_file, lineage_record(parent_dir, which, model_file,
                                                       inherited_tree(parent.load_config()), steps))
    return f"fine-tuning from {model_file} ({steps} steps)"
