"""The request-body size limit: a 413 before any route reads an oversized body."""
from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pipeline.service.errors import error_response


class BodyLimitMiddleware:
    """Answer 413 to a body over `max_bytes` (over `larger[path]` on the paths named there, such as file
    uploads), declared or streamed, before any route reads it."""

    def __init__(self, app: ASGIApp, max_bytes: int, larger: dict[str, int] | None = None):
        self.app, self.max_bytes, self.larger = app, max_bytes, dict(larger or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.larger.get(scope["path"], self.max_bytes)
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit:
            await self._too_large(scope, receive, send, limit)
            return
        chunks, size = [], 0
        while True:                                   # buffer the body (at most max_bytes) ...
            message = await receive()
            if message["type"] != "http.request":     # the client left
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > limit:
                await self._too_large(scope, receive, send, limit)
                return
            if not message.get("more_body", False):
                break
        replay: list[Message] = [{"type": "http.request", "body": b"".join(chunks), "more_body": False}]

        async def replayed() -> Message:              # ... and hand it on whole, then the real channel
            return replay.pop() if replay else await receive()

        await self.app(scope, replayed, send)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        response = error_response(413, f"request body over {limit:,} bytes", {"Connection": "close"})
        await response(scope, receive, send)
