"""Errors as `{"error": "..."}` JSON: the exception, its handlers, the body-size limit and Bearer auth."""
from __future__ import annotations

import logging
import secrets
from typing import Any, Callable

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("pipeline.service")


class ServiceError(Exception):
    """An error the client should see: HTTP `status` and a one-line `message`."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


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
    """Every error leaves as `{"error": "..."}`; unexpected ones are logged and answered with a 500."""

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
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return error_response(500, f"internal error: {type(exc).__name__}")


# -- body size ---------------------------------------------------------------------------------------------------
class BodyLimitMiddleware:
    """Answer 413 to a body over `max_bytes`, declared or streamed, before any route reads it."""

    def __init__(self, app: ASGIApp, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await self._too_large(scope, receive, send)
            return
        chunks, size = [], 0
        while True:                                   # buffer the body (at most max_bytes) ...
            message = await receive()
            if message["type"] != "http.request":     # the client left
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_bytes:
                await self._too_large(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        replay: list[Message] = [{"type": "http.request", "body": b"".join(chunks), "more_body": False}]

        async def replayed() -> Message:              # ... and hand it on whole, then the real channel
            return replay.pop() if replay else await receive()

        await self.app(scope, replayed, send)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = error_response(413, f"request body over {self.max_bytes:,} bytes", {"Connection": "close"})
        await response(scope, receive, send)


# -- CORS --------------------------------------------------------------------------------------------------------
class JsonCORSMiddleware(CORSMiddleware):
    """Starlette's CORS middleware, a refused preflight answered as `{"error": "Disallowed CORS origin"}`."""

    def preflight_response(self, request_headers: Headers) -> Response:
        response = super().preflight_response(request_headers)
        if response.status_code < 400:
            return response
        headers = {name: value for name, value in response.headers.items()
                   if name not in ("content-length", "content-type")}
        return error_response(response.status_code, bytes(response.body).decode(), headers)


# -- authentication ----------------------------------------------------------------------------------------------
def key_matches(given: str | None, expected: str) -> bool:
    """Whether `given` is the API key, compared in constant time."""
    return given is not None and secrets.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def bearer_auth(api_key: str) -> Callable[..., Any]:
    """A dependency refusing (401) any request without `Authorization: Bearer <api_key>`."""
    scheme = HTTPBearer(auto_error=False, description="the value of the service's --api-key-env variable")

    async def check(credentials: HTTPAuthorizationCredentials | None = Depends(scheme)) -> None:
        if not credentials or not key_matches(credentials.credentials, api_key):
            raise ServiceError(401, "missing or wrong API key: send the header 'Authorization: Bearer <key>'",
                               {"WWW-Authenticate": "Bearer"})
    return check
