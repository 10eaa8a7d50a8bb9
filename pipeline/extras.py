"""Optional dependencies (sacreBLEU, matplotlib): import them, or fail in one line naming the extra."""
from __future__ import annotations

import importlib
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
