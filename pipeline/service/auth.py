"""The API key: `Authorization: Bearer <key>` on our routes, LibreTranslate's `api_key` on its own."""
from __future__ import annotations

import secrets
from typing import Any, Callable

from fastapi import Depends
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from pipeline.service.errors import ServiceError


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
