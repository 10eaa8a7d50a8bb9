"""The translation service: an HTTP API and a page over a trained run, with dynamic batching.

    from pipeline.service import ServiceSettings, create_app, serve
    serve("runs/cpu60/run", ServiceSettings(max_batch=64))      # what scripts/serve.py does
    serve(["runs/en-it/run", "runs/it-en/run"])                  # one run per direction: --run A --run B

FastAPI and uvicorn come with the `serve` extra; they are imported only when used.
"""
from __future__ import annotations

from typing import Any

from pipeline.service.server import api_key_from_env, serve

__all__ = ["ServiceSettings", "api_key_from_env", "create_app", "serve"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from pipeline.service.app import create_app
        return create_app
    if name == "ServiceSettings":
        from pipeline.service.settings import ServiceSettings
        return ServiceSettings
    raise AttributeError(f"module 'pipeline.service' has no attribute {name!r}")
