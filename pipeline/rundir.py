"""The run directory: its layout, loading what it holds, and checking paths a user names.

    <workdir>/prepared/  vectorizers.pkl  splits.json  {train,valid,test}-NNNNN-{source,target}.npy
                         valid.tsv  test.tsv  [valid.<corpus>.tsv  test.<corpus>.tsv ...]  report.json
    <workdir>/run/       config.yaml  vectorizers.pkl  model.keras  best.keras  [averaged.keras]  history.json
                         train_summary.json  [lineage.json]  logs/
                         checkpoint/{model.keras, state.json, step-NNNNNNNN.weights.h5...}
                         [ctranslate2[-model|-averaged]/]  the CTranslate2 engine's float32 conversion
                         [eval/<set>-beam<N>.json, .hyp.txt]  [plots/*.png]
    a CTranslate2 export  config.yaml  vectorizers.pkl  model.bin  pipeline.json  ... (`pipeline.export.ctranslate2`)

This module is the only owner of these names, the workdir's two halves included (`prepared_path(config)`,
`run_path(config)`); `pipeline.config` owns only the `workdir` setting. Training writes a run; `pipeline.serializable.load_run` hands the
engines, export and the service what they read. Nothing here imports Keras.
"""
from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from pipeline.config import Config, ConfigError, config_from_dict

PREPARED_DIR = "prepared"           # <workdir>/: what prepare writes
RUN_DIR = "run"                     # <workdir>/: what training writes
CONFIG_FILE = "config.yaml"
VECTORIZERS_FILE = "vectorizers.pkl"
HISTORY_FILE = "history.json"
SUMMARY_FILE = "train_summary.json"
CHECKPOINT_DIR = "checkpoint"
CHECKPOINT_MODEL_FILE = "model.keras"
CHECKPOINT_STATE_FILE = "state.json"
LOGS_DIR = "logs"
EVAL_DIR = "eval"                   # run/: evaluation reports
PLOTS_DIR = "plots"                 # run/: figures
CT2_DIR = "ctranslate2"             # run/: the CTranslate2 engine's conversion of best.keras (+ "-<which>" for others)
CT2_SETTINGS_FILE = "pipeline.json"  # a CTranslate2 export: format, weights fingerprint, quantization
CT2_MODEL_FILE = "model.bin"        # a CTranslate2 export: CTranslate2's own model file
MODELS = ("best", "model", "averaged")   # best validation loss, final weights, mean of the last kept checkpoints
KEPT_CHECKPOINT = re.compile(r"step-(\d+)\.weights\.h5")
SPLITS_INDEX_FILE = "splits.json"   # prepared/: each split's rows, widths and shard files
REPORT_FILE = "report.json"         # prepared/: what prepare kept and dropped, per corpus
GPU_CHECK_FILE = "gpu_check.json"   # <workdir>/: the report of scripts/gpu_check.py
LINEAGE_FILE = "lineage.json"       # run/: the parent run a fine-tuned run started from, and its ancestors


def split_text_file(split: str, corpus: str | None = None) -> str:
    """The cleaned text of a held-out split (`valid.tsv`), or of one corpus's part of it (`valid.<corpus>.tsv`)."""
    return f"{split}.tsv" if corpus is None else f"{split}.{corpus}.tsv"


def prepared_path(config: Config) -> Path:
    """`<workdir>/prepared` of a config: what prepare writes and training reads."""
    return Path(config.workdir) / PREPARED_DIR


def run_path(config: Config) -> Path:
    """`<workdir>/run` of a config: what training writes."""
    return Path(config.workdir) / RUN_DIR


def run_name(run_dir: str | os.PathLike) -> str:
    """A run's directory by its workdir's name and its own (`tiny/run`): what a service shows of it, where the
    whole path on the server is no client's business."""
    path = Path(run_dir).resolve()
    return f"{path.parent.name}/{path.name}"


def prepared_beside(run_dir: str | os.PathLike) -> Path:
    """`<workdir>/prepared` for `<workdir>/run`."""
    return Path(run_dir).parent / PREPARED_DIR


def shard_file(split: str, index: int, side: str) -> str:
    """The name of one shard of a prepared split's id array, e.g. `train-00003-source.npy`."""
    return f"{split}-{index:05d}-{side}.npy"


class RunDirectoryError(ValueError):
    """A run directory, or a file in it, that is missing or unreadable; the message names the path."""


class PathProblem(ValueError):
    """A path a user named that cannot be used; the message names the path and the problem."""


@dataclass(frozen=True)
class RunDir:
    """Where each file of a run lives."""
    path: Path

    def __post_init__(self):
        object.__setattr__(self, "path", Path(self.path))

    @property
    def config_file(self) -> Path:
        return self.path / CONFIG_FILE

    @property
    def vectorizers_file(self) -> Path:
        return self.path / VECTORIZERS_FILE

    @property
    def history_file(self) -> Path:
        return self.path / HISTORY_FILE

    @property
    def summary_file(self) -> Path:
        return self.path / SUMMARY_FILE

    @property
    def lineage_file(self) -> Path:
        return self.path / LINEAGE_FILE

    def load_lineage(self) -> dict[str, Any] | None:
        """The parent this run was fine-tuned from (`train --init-from`), or None for a run trained from scratch."""
        import json

        if not self.lineage_file.is_file():
            return None
        try:
            return json.loads(self.lineage_file.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise RunDirectoryError(f"run file {self.lineage_file}: unreadable ({exc})") from None

    @property
    def checkpoint_dir(self) -> Path:
        return self.path / CHECKPOINT_DIR

    @property
    def checkpoint_model(self) -> Path:
        return self.checkpoint_dir / CHECKPOINT_MODEL_FILE

    @property
    def checkpoint_state(self) -> Path:
        return self.checkpoint_dir / CHECKPOINT_STATE_FILE

    def kept_checkpoint(self, step: int) -> Path:
        """The weights kept from the checkpoint at `step` (see `train.keep_checkpoints`)."""
        return self.checkpoint_dir / f"step-{step:08d}.weights.h5"

    def kept_checkpoints(self) -> list[Path]:
        """The kept checkpoint weights, oldest first."""
        if not self.checkpoint_dir.is_dir():
            return []
        found = [(int(m.group(1)), p) for p in self.checkpoint_dir.iterdir()
                 if (m := KEPT_CHECKPOINT.fullmatch(p.name))]
        return [path for _, path in sorted(found)]

    @staticmethod
    def kept_step(path: Path) -> int:
        """The training step a kept checkpoint file was written at."""
        match = KEPT_CHECKPOINT.fullmatch(path.name)
        if not match:
            raise ValueError(f"kept checkpoint {path}: expected a name like step-00001000.weights.h5")
        return int(match.group(1))

    @property
    def logs_dir(self) -> Path:
        return self.path / LOGS_DIR

    @property
    def eval_dir(self) -> Path:
        return self.path / EVAL_DIR

    @property
    def plots_dir(self) -> Path:
        return self.path / PLOTS_DIR

    def ctranslate2_dir(self, which: str = "best") -> Path:
        """Where the CTranslate2 engine keeps its float32 conversion of `<which>.keras`."""
        self.model_file(which)                        # checks `which`
        return self.path / (CT2_DIR if which == "best" else f"{CT2_DIR}-{which}")

    def ctranslate2_lock(self, which: str = "best") -> Path:
        """The lock file held while `<which>.keras` is converted into `ctranslate2_dir(which)` (one process at a time)."""
        export_dir = self.ctranslate2_dir(which)
        return export_dir.with_name(f".{export_dir.name}.lock")

    @property
    def is_ctranslate2_export(self) -> bool:
        """Whether this directory is a CTranslate2 export rather than a training run."""
        return (self.path / CT2_SETTINGS_FILE).is_file() or (self.path / CT2_MODEL_FILE).is_file()

    def model_file(self, which: str = "best") -> Path:
        if which not in MODELS:
            raise ValueError(f"model must be one of {', '.join(MODELS)}, got {which!r}")
        return self.path / f"{which}.keras"

    # -- reading ----------------------------------------------------------------------------------------
    def require(self) -> "RunDir":
        """The run directory itself must exist and be a directory."""
        if not self.path.exists():
            raise RunDirectoryError(f"run directory {self.path}: not found")
        if not self.path.is_dir():
            raise RunDirectoryError(f"run directory {self.path}: is a file, expected a directory")
        return self

    def load_config(self) -> Config:
        path = self.config_file
        if not path.is_file():
            raise RunDirectoryError(f"run file {path}: not found")
        try:
            return config_from_dict(yaml.safe_load(path.read_text(encoding="utf-8")))
        except (yaml.YAMLError, ConfigError, TypeError, UnicodeDecodeError) as exc:
            raise RunDirectoryError(f"run file {path}: unreadable ({str(exc).splitlines()[0]})") from None

    def load_vectorizers(self):
        from pipeline.vectorizers import load_vectorizers
        return load_vectorizers(self.vectorizers_file)


def load_run_config(run_dir: str | os.PathLike) -> Config:
    """The resolved config a run was trained with."""
    return RunDir(run_dir).load_config()


def weights_fingerprint(path: Path) -> dict[str, Any]:
    """Name, size and modification time of a weights file: what an export made from it records."""
    stat = path.stat()
    return {"file": path.name, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def config_differences(saved: Config, current: Config) -> list[str]:
    """`key: saved -> current` for every config value that differs (workdir excluded)."""
    from pipeline.config import flatten

    a, b = flatten(saved.to_dict()), flatten(current.to_dict())
    return [f"{key}: {a.get(key)!r} -> {b.get(key)!r}" for key in sorted(set(a) | set(b))
            if key != "workdir" and a.get(key) != b.get(key)]


# -- paths a user names ---------------------------------------------------------------------------------------
def _nearest_existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_output_dir(path: str | os.PathLike, what: str) -> Path:
    """A directory we will create or replace: not a file, and its nearest existing parent writable."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise PathProblem(f"{what} {path}: is a file, expected a directory")
    base = _nearest_existing(path if path.exists() else path.parent)
    if not base.is_dir():
        raise PathProblem(f"{what} {path}: {base} is a file, expected a directory")
    if not os.access(base, os.W_OK | os.X_OK):
        raise PathProblem(f"{what} {path}: no permission to write in {base}")
    return path


def check_output_file(path: str | os.PathLike, what: str) -> Path:
    """A file we will write: not a directory, its parent an existing, writable directory."""
    path = Path(path)
    if path.is_dir():
        raise PathProblem(f"{what} {path}: is a directory, expected a file")
    parent = path.parent
    if not parent.exists():
        raise PathProblem(f"{what} {path}: its directory {parent} does not exist")
    if not parent.is_dir():
        raise PathProblem(f"{what} {path}: {parent} is a file, expected a directory")
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise PathProblem(f"{what} {path}: no permission to write it")
    try:                    # what the atomic write will do: a temporary file beside it (root passes os.access)
        with tempfile.NamedTemporaryFile(dir=parent, prefix=f".{path.name}.", suffix=".check"):
            pass
    except OSError as exc:
        raise PathProblem(f"{what} {path}: cannot be written in {parent} ({exc.strerror or exc})") from None
    return path
