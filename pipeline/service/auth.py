"""The API key: `Authorization: Bearer <key>` on our routes, LibreTranslate's `api_key` on its own."""
from __future__ import annotations

import secrets
from typing import Any, Callable, Sequence

from fastapi import Depends
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.datastructures import Headers
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Receive, Scope, Send

from pipeline.service.errors import ServiceError, error_response


UNAUTHORIZED = "missing or wrong API key: send the header 'Authorization: Bearer <key>'"
UNAUTHORIZED_RESPONSE = (401, "missing or wrong API key (with --api-key-env)", UNAUTHORIZED)   # for error_responses


def key_matches(given: str | None, expected: str) -> bool:
    """Whether `given` is the API key, compared in constant time."""
    return given is not None and secrets.compare_digest(given.encode("utf-8", "surrogatepass"),
                                                        expected.encode("utf-8", "surrogatepass"))


def bearer_auth(api_key: str) -> Callable[..., Any]:
    """A dependency refusing (401) any request without `Authorization: Bearer <api_key>`."""
    scheme = HTTPBearer(auto_error=False, description="the value of the service's --api-key-env variable")

    async def check(credentials: HTTPAuthorizationCredentials | None = Depends(scheme)) -> None:
        if not credentials or not key_matches(credentials.credentials, api_key):
            raise ServiceError(401, UNAUTHORIZED,
                               {"WWW-Authenticate": "Bearer"})
    return check


def bearer_key(headers: Headers) -> str | None:
    """The credentials of an `Authorization: Bearer <credentials>` header (the scheme in any case), as FastAPI's
    `HTTPBearer` reads them; None without one."""
    scheme, _, credentials = headers.get("authorization", "").partition(" ")
    return credentials if scheme.lower() == "bearer" and credentials else None


class BearerAuthMiddleware:
    """ASGI middleware: a request for one of `routes` without the key is a 401 before anything reads its body, so a
    client without the key cannot have a body parsed (a route's own `bearer_auth` dependency runs only after FastAPI
    has read and parsed it, and a malformed body was a 400 before the 401)."""

    def __init__(self, app: ASGIApp, api_key: str, routes: Sequence[BaseRoute]):
        self.app, self.api_key, self.routes = app, api_key, list(routes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and any(route.matches(scope)[0] is not Match.NONE for route in self.routes) \
                and not key_matches(bearer_key(Headers(scope=scope)), self.api_key):
            await error_response(401, UNAUTHORIZED, {"WWW-Authenticate": "Bearer"})(scope, receive, send)
            return
        await self.app(scope, receive, send)
