"""Cross-origin requests: from the web pages a deployment allows (`--cors-origins`), and from no others.

- `settings.normalized_origin`: an origin as a browser sends it (`https://a.example`: the scheme and host in lower case,
  no default port, no trailing slash), so that `--cors-origins https://A.example/` matches what a browser sends.
- `JsonCORSMiddleware`: Starlette's CORS middleware, a refused preflight answered as JSON.
- `CrossSiteGuard`: CORS only keeps a page from reading an answer; a form's POST from any site still reaches the
  service and runs (a page the operator opens could store glossaries or keep the model busy). A request that
  changes something (not GET, HEAD or OPTIONS) and carries a browser's `Origin` is refused with a 403 unless that
  origin is the service's own or one `--cors-origins` allows. Clients that are not browsers send no `Origin`.
  A service bound to this machine only also answers only requests that name it (`Host: localhost`, `127.0.0.1`,
  `[::1]`, or `--public-url`'s host): a page whose name a DNS rebinding points at 127.0.0.1 would otherwise be
  the service's own origin, and read its answers.
- Every answer says `X-Content-Type-Options: nosniff` (a download or a JSON error is never read as a page), and
  the page may not be framed by another site (`Content-Security-Policy: frame-ancestors 'self'`): it holds a
  field for the API key.
"""
from __future__ import annotations

from urllib.parse import urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pipeline.service.errors import error_response
from pipeline.service.settings import normalized_origin

SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


def _authority(origin: str) -> str:
    """An origin's `host[:port]`, its default port dropped: what a `Host` header says for it."""
    return origin.partition("://")[2]


def _host_name(host: str) -> str:
    """A `Host` header's name, without its port (`[::1]:8000` -> `::1`)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    return host.rpartition(":")[0] if host.count(":") == 1 else host


class JsonCORSMiddleware(CORSMiddleware):
    """Starlette's CORS middleware, a refused preflight answered as `{"error": "Disallowed CORS origin"}`."""

    def preflight_response(self, request_headers: Headers) -> Response:
        response = super().preflight_response(request_headers)
        if response.status_code < 400:
            return response
        headers = {name: value for name, value in response.headers.items()
                   if name not in ("content-length", "content-type")}
        return error_response(response.status_code, bytes(response.body).decode(), headers)


class CrossSiteGuard:
    """ASGI middleware (see the module docstring): `allowed_origins` are `--cors-origins` (normalized; `*`: any),
    `allowed_hosts` the host names a request must name (empty: any), `public_url` the service's own address."""

    def __init__(self, app: ASGIApp, allowed_origins: tuple[str, ...] = (), allowed_hosts: tuple[str, ...] = (),
                 public_url: str | None = None):
        self.app = app
        self.any_origin = "*" in allowed_origins
        self.origins = {origin for origin in allowed_origins if origin != "*"}
        address = urlsplit(public_url) if public_url else None
        self.public = normalized_origin(f"{address.scheme}://{address.netloc}") if address else None
        if self.public:
            self.origins.add(self.public)
        self.hosts = {host.lower() for host in allowed_hosts}
        if self.hosts and self.public:
            self.hosts.add(_host_name(_authority(self.public)))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if self.hosts and _host_name(host) not in self.hosts:
            message = (f"this service answers requests for {', '.join(sorted(self.hosts))}, not {host[:100]!r}: "
                       "give its public address with --public-url")
            await error_response(421, message)(scope, receive, send)
            return
        origin = headers.get("origin")
        if origin is not None and scope["method"] not in SAFE_METHODS and not self._allowed(origin, host):
            message = (f"a request from the web page of another site ({origin[:100]!r}) is refused: allow its origin "
                       "with --cors-origins")
            await error_response(403, message)(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                response_headers = MutableHeaders(scope=message)
                response_headers.setdefault("x-content-type-options", "nosniff")
                response_headers.setdefault("content-security-policy", "frame-ancestors 'self'")
            await send(message)
        await self.app(scope, receive, send_with_headers)

    def _allowed(self, origin: str, host: str) -> bool:
        if self.any_origin:
            return True
        try:
            origin = normalized_origin(origin)
        except ValueError:                         # `null` (a sandboxed frame, a file), or malformed
            return False
        return origin in self.origins or _authority(origin) == host.strip().lower()
