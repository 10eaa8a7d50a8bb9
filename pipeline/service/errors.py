"""Errors as `{"error": "..."}` JSON: the exception routes raise, and the handlers that answer every error so."""
from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pipeline.extras import ATTENTION_ENV, cudnn_failure, cudnn_hint
from pipeline.text import gate_text, shortened

log = logging.getLogger("pipeline.service")


class ServiceError(Exception):
    """An error the client should see: HTTP `status` and a one-line `message`."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers


ERROR_SCHEMA: dict[str, Any] = {"type": "object", "required": ["error"], "additionalProperties": False,
                                "properties": {"error": {"type": "string", "description": "one line"}}}


def error_responses(codes: list[tuple[int, str, str]]) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for (status, when, example message): every error is `{"error": "..."}`."""
    return {status: {"description": when, "content": {"application/json": {
        "schema": ERROR_SCHEMA, "example": {"error": example}}}} for status, when, example in codes}


MAX_ERROR_CHARS = 500         # an error message quoting what a client sent is cut here, not echoed whole


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """`{"error": message}`; the message passes the text gate and is cut at `MAX_ERROR_CHARS`, since it may quote
    what a client sent (a 9 MB `source` was echoed whole)."""
    return JSONResponse({"error": shortened(gate_text(message), MAX_ERROR_CHARS)}, status_code=status,
                        headers=headers)


# -- request validation -> one readable line ---------------------------------------------------------------------
def validation_message(errors: list[dict[str, Any]], field_rules: dict[str, str]) -> tuple[int, str]:
    """(status, message) for pydantic errors: 400 for a body that is not JSON, else 422 naming the field.

    `field_rules` says what a field accepts ("must be ..."), once for every way its value can be wrong.
    """
    for error in errors:
        if error["type"] == "json_invalid":
            return 400, f"invalid JSON body: {error.get('ctx', {}).get('error', error['msg'])}"
    error = errors[0]
    path = [str(part) for part in error["loc"][1:]]          # loc[0] is "body" / "query"
    if not path:
        if error["type"] == "missing":
            return 400, "empty body: send a JSON object"
        if isinstance(error.get("input"), bytes):              # FastAPI hands over a non-JSON body as bytes
            return 415, "send a JSON body with 'Content-Type: application/json'"
        return 422, f"the body must be a JSON object, got {_json_type(error.get('input'))}"
    name = path[0]
    if error["type"] == "missing":
        return 422, f"missing '{name}'" + (f": it {field_rules[name]}" if name in field_rules else "")
    if name in field_rules:
        return 422, f"'{name}' {field_rules[name]}"
    return 422, f"'{'.'.join(path)}': {error['msg']}"


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def install_error_handlers(app: FastAPI, field_rules: dict[str, str]) -> None:
    """Every error leaves as `{"error": "..."}`; unexpected ones are logged and answered with a 500 (a failure of
    cuDNN's fused attention with the way round it, in the log and the answer)."""

    @app.exception_handler(ServiceError)
    async def _service_error(request: Request, exc: ServiceError) -> JSONResponse:
        return error_response(exc.status, exc.message, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        status, message = validation_message(list(exc.errors()), field_rules)
        return error_response(status, message)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return error_response(exc.status_code, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        cause = cudnn_failure(exc)
        if cause is not None:         # the server's fault, not the request's: the log says the way round it
            log.error("%s on %s %s", cudnn_hint(cause), request.method, request.url.path, exc_info=exc)
            return error_response(500, "internal error: cuDNN's fused attention failed on this server; its operator "
                                       f"can restart it with {ATTENTION_ENV}=xla")
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return error_response(500, f"internal error: {type(exc).__name__}")


# -- errors that code below the routes answers in plain text --------------------------------------------------------
KEPT_ERROR_HEADERS = ("allow", "content-range", "retry-after", "www-authenticate")
QUOTED_ERROR_CHARS = 300       # a plain-text error body up to this long is kept as the message


def phrase(status: int) -> str:
    """HTTP's reason phrase for `status` ("Requested Range Not Satisfiable"), or "error <status>"."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return f"error {status}"


def is_json(content_type: str) -> bool:
    media = content_type.split(";")[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


class JsonErrorBodies:
    """ASGI middleware: an error answered in another form than JSON by code the handlers never see (Starlette's
    file responses refuse a malformed or unsatisfiable `Range` in plain text, or with no body) leaves as
    `{"error": ...}` all the same: its one-line text, or the status's phrase. A HEAD answer has no body to change."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] == "HEAD":
            await self.app(scope, receive, send)
            return
        held: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] >= 400 \
                    and not is_json(Headers(raw=message.get("headers", [])).get("content-type", "")):
                held["start"] = message
                return
            if "start" not in held or message["type"] != "http.response.body":
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            start = held.pop("start")
            text = b"".join(chunks).decode("utf-8", "replace").strip()
            status = start["status"]
            if not text or len(text) > QUOTED_ERROR_CHARS or "\n" in text:
                text = phrase(status)
            original = Headers(raw=start.get("headers", []))
            kept = {name: original[name] for name in KEPT_ERROR_HEADERS if name in original}
            await error_response(status, text, kept)(scope, receive, send)

        await self.app(scope, receive, sending)


class HeadAsGet:
    """ASGI middleware: `HEAD` is answered as `GET` would be, headers only (Content-Length included), as HTTP asks
    of a server and as LibreTranslate's Flask does; FastAPI's GET routes alone answered it with a 405."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return
        ended = False

        async def headers_only(message: Message) -> None:
            nonlocal ended
            if message["type"] != "http.response.body":
                await send(message)
            elif not ended:                            # the body is dropped; the answer ends at once
                ended = True
                await send({"type": "http.response.body", "body": b"", "more_body": False})

        await self.app({**scope, "method": "GET"}, receive, headers_only)


SERVER_METHODS = "GET, HEAD, POST, DELETE"   # every method some route answers (`OPTIONS *`'s Allow)


class AsteriskForm:
    """ASGI middleware: a request for `*`, the server as a whole (RFC 9110 9.3.7): `OPTIONS *` is a 204 whose
    `Allow` names the methods the service answers; any other method's is a 400, as only OPTIONS may ask it. The
    routes answered both with a 404, as if `*` were a path."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("raw_path", scope.get("path", "").encode()) != b"*":
            await self.app(scope, receive, send)
        elif scope["method"] == "OPTIONS":
            await send({"type": "http.response.start", "status": 204, "headers": [
                (b"allow", SERVER_METHODS.encode())]})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        else:
            await error_response(400, f"the target * (the server as a whole) is for OPTIONS only, not "
                                      f"{scope['method'][:20]}")(scope, receive, send)
