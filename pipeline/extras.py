"""Optional dependencies (sacreBLEU, matplotlib, the Keras backends): import them, or fail in one line naming the
extra; which backend this process runs on where none is named, and which attention kernel (`NMT_ATTENTION`)."""
from __future__ import annotations

import importlib
import importlib.util
import os
from types import ModuleType


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
    choice = os.environ.get(ATTENTION_ENV, "").strip().lower() or "auto"
    if choice not in ATTENTION_CHOICES:
        raise ValueError(f"environment variable {ATTENTION_ENV}: must be one of {', '.join(ATTENTION_CHOICES)}, "
                         f"got {os.environ[ATTENTION_ENV]!r}")
    return choice
