"""Optional dependencies (sacreBLEU, matplotlib, the Keras backends): import them, or fail in one line naming the
extra; which backend this process runs on where none is named, and which attention kernel (`NMT_ATTENTION`),
with the way round a cuDNN that fails."""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any


class MissingExtra(ImportError):
    """An optional dependency is not installed; the message says which extra to install."""


def require(module: str, extra: str) -> ModuleType:
    """Import `module`, or raise MissingExtra telling the user to `pip install -e '.[extra]'`."""
    try:
        return importlib.import_module(module)
    except ImportError:
        package = module.split(".")[0]
        raise MissingExtra(f"{package} is not installed; it comes with the '{extra}' extra: "
                           f"pip install -e '.[{extra}]'") from None


def safe_xml_parser(extra: str, **options: Any) -> Any:
    """lxml's XML parser that loads nothing: no DTD, no entity resolved, nothing from the network, and lxml's
    limits on a tree's depth and size kept (`options`: its others, `encoding`). MissingExtra names `extra` where
    lxml is not installed. Every reader of XML from a user's file parses with it."""
    etree = require("lxml.etree", extra)
    return etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True, huge_tree=False, **options)


def choose_backend() -> str:
    """Keras's backend for this process: `KERAS_BACKEND` if set, else TensorFlow where it is installed, else
    JAX, else PyTorch (Keras itself would insist on TensorFlow). Sets `KERAS_BACKEND`; imports none of them."""
    if not os.environ.get("KERAS_BACKEND"):
        installed = [name for name in ("tensorflow", "jax", "torch") if importlib.util.find_spec(name)]
        if installed and installed[0] != "tensorflow":
            os.environ["KERAS_BACKEND"] = installed[0]
    return os.environ.get("KERAS_BACKEND", "tensorflow")


ATTENTION_ENV = "NMT_ATTENTION"
ATTENTION_CHOICES = ("auto", "xla", "cudnn")


def attention_choice() -> str:
    """`NMT_ATTENTION` from the environment (`pipeline.layers.cudnn_attention_applies` follows it): "auto"
    (unset: cuDNN's flash attention where it applies, else XLA's), "xla" (XLA's kernel everywhere: the way round
    a cuDNN that refuses a shape) or "cudnn" (cuDNN's on every JAX attention with a padding mask, whether it
    applies or not: to see why it does not). ValueError names the variable for any other value."""
    choice = _attention_setting()
    if choice not in ATTENTION_CHOICES:
        raise ValueError(f"environment variable {ATTENTION_ENV}: must be one of {', '.join(ATTENTION_CHOICES)}, "
                         f"got {os.environ[ATTENTION_ENV]!r}")
    return choice


def _attention_setting() -> str:
    """`NMT_ATTENTION` as set, normalised (trimmed, lower case; "auto" where unset), not yet checked."""
    return os.environ.get(ATTENTION_ENV, "").strip().lower() or "auto"


def cudnn_failure(exc: BaseException | None) -> BaseException | None:
    """The innermost exception, `exc` or one it was raised from (Keras wraps a layer's), that JAX raised in its
    cuDNN code (`jax/_src/cudnn/`), or that JAX itself raised naming cuDNN (a compile that failed): a GPU whose
    cuDNN refuses the fused attention, which `NMT_ATTENTION=xla` avoids; None if none did, if JAX is not loaded,
    or if XLA's kernel is in use already. (TensorFlow's and PyTorch's own cuDNN errors do not count, nor
    Keras's JAX backend's frames: only files of the imported `jax` package.)"""
    jax = sys.modules.get("jax")
    if jax is None or getattr(jax, "__file__", None) is None or _attention_setting() == "xla":
        return None
    package = Path(jax.__file__).resolve().parent
    seen, found = set(), None
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        files = [Path(frame.filename).resolve() for frame in traceback.extract_tb(exc.__traceback__)]
        in_jax = [path for path in files if path.is_relative_to(package)]
        if type(exc).__name__ != "UnfilteredStackTrace" and (
                any(path.is_relative_to(package / "_src" / "cudnn") for path in in_jax)
                or (in_jax and "cudnn" in str(exc).lower() and "initialize backend" not in str(exc))):
            found = exc
        exc = exc.__cause__ or exc.__context__
    return found


def cudnn_hint(cause: BaseException) -> str:
    """One line for a `cudnn_failure`: JAX's own message (its first line) and the way round it."""
    first = (str(cause).splitlines() or [""])[0][:200]
    return (f"cuDNN's fused attention failed ({type(cause).__name__}: {first}); {ATTENTION_ENV}=xla in the "
            "environment runs XLA's attention kernel instead")
