"""Cross-origin requests from the web pages a deployment allows (`--cors-origins`)."""
from __future__ import annotations

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import Response

from pipeline.service.errors import error_response


class JsonCORSMiddleware(CORSMiddleware):
    """Starlette's CORS middleware, a refused preflight answered as `{"error": "Disallowed CORS origin"}`."""

    def preflight_response(self, request_headers: Headers) -> Response:
        response = super().preflight_response(request_headers)
        if response.status_code < 400:
            return response
        headers = {name: value for name, value in response.headers.items()
                   if name not in ("content-length", "content-type")}
        return error_response(response.status_code, bytes(response.body).decode(), headers)
