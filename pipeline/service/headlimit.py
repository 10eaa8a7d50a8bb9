"""Limits on a request's head, the URL and the headers: a JSON 414 or 431 before any route sees them.

uvicorn (h11) holds at most `head_buffer_bytes(...)` of an unfinished head, more than these limits accept, so a
head that passes them is always read whole; a larger one is refused by the server itself, with the same JSON
(`connections.guarded_protocol`).
"""
from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from pipeline.service.errors import error_response

HEAD_SLACK_BYTES = 8192        # the request line's method and version, blank lines: room over the two limits


def head_buffer_bytes(max_url_bytes: int, max_header_bytes: int) -> int:
    """The most bytes of an unfinished request head the server buffers: above what the limits accept."""
    return max_url_bytes + max_header_bytes + HEAD_SLACK_BYTES


def url_message(max_url_bytes: int) -> str:
    return f"URL over {max_url_bytes:,} bytes (path and query string): send long texts in the request body"


def headers_message(max_header_bytes: int) -> str:
    return f"request headers over {max_header_bytes:,} bytes"


def url_bytes(scope: Scope) -> int:
    """The request target's length as sent: raw path, and `?query` when there is one."""
    path = scope.get("raw_path") or scope["path"].encode("utf-8", "surrogateescape")
    query = scope.get("query_string", b"")
    return len(path) + (1 + len(query) if query else 0)


def header_bytes(scope: Scope) -> int:
    """The headers' length as sent: `name: value\\r\\n` each."""
    return sum(len(name) + len(value) + 4 for name, value in scope["headers"])


class HeadLimitMiddleware:
    """Answer 414 to a URL (path and query string) over `max_url_bytes` and 431 to headers over
    `max_header_bytes`, as `{"error": ...}`, before anything reads the request."""

    def __init__(self, app: ASGIApp, max_url_bytes: int, max_header_bytes: int):
        self.app, self.max_url_bytes, self.max_header_bytes = app, max_url_bytes, max_header_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            if url_bytes(scope) > self.max_url_bytes:
                await self._refuse(414, url_message(self.max_url_bytes), scope, receive, send)
                return
            if header_bytes(scope) > self.max_header_bytes:
                await self._refuse(431, headers_message(self.max_header_bytes), scope, receive, send)
                return
        await self.app(scope, receive, send)

    @staticmethod
    async def _refuse(status: int, message: str, scope: Scope, receive: Receive, send: Send) -> None:
        await error_response(status, message, {"Connection": "close"})(scope, receive, send)
