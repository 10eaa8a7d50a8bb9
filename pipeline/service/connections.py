"""The server's side of a connection, before and around the app: uvicorn's h11 protocol with limits of its own.

- What the server refuses itself is answered as `{"error": ...}` JSON, as the app answers: a request head over the
  buffer is a 414 (its first line is over `max_url_bytes`, or unfinished) or a 431 (headers); anything h11 cannot
  parse is a 400.
- A request head must arrive whole within `head_timeout_s` of the connection opening (on a kept-alive connection,
  of its first byte), however slowly its bytes trickle in: past it, a connection that sent part of a head gets a
  JSON 408 and is closed; a new one that sent nothing is closed (a kept-alive one, after uvicorn's keep-alive).
- A request body must not stall: `body_timeout_s` with no byte of it (while the server is ready to read) closes
  the connection, and the route sees the client gone. Nor may it trickle: it must arrive whole within
  `body_timeout_s`, plus a second for each `min_body_bytes_per_s` bytes it has sent (Apache's mod_reqtimeout rule,
  `body=60,MinRate=500`), or the connection is closed too: a byte a second would hold a connection for days.
- At most `max_connections` connections at once, and `max_client_connections` from one client address (0: no
  limit per address, for a service behind a proxy): past either, a new connection gets a JSON 503 with
  `Retry-After` and is closed at once. Idle connections then cannot use up the process's file descriptors.
- An `Upgrade: websocket` request is served as plain HTTP: the service has no WebSocket routes.
- A request whose body is framed twice (`Content-Length` and `Transfer-Encoding` both) is a JSON 400 and the
  connection is closed: a proxy in front that reads the other header would see another request in the same bytes
  (request smuggling; RFC 9112 6.3 lets a server refuse it, and the connection must not be reused anyway).
- A request target in absolute form (`GET http://host:8000/languages HTTP/1.1`, as a client configured to use a
  proxy sends it) is served as its path, with the target's host read as the `Host` (RFC 9112 3.2.2: a server must
  accept it and ignore the `Host` header); it was a 404. One that names user information (`http://user:pw@host/`)
  is a JSON 400 (RFC 9110 4.2.4: an error), never a `Host`.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import re
import sys
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pipeline.service.settings import ServiceSettings

REFUSAL_LINGER_S = 2.0        # how long a connection whose head was refused may still send before it is closed
OVER_CAPACITY_RETRY_S = 1     # Retry-After of the 503 to a connection past the caps
SPARE_DESCRIPTORS = 256       # descriptors kept for what is not a connection: models, documents, the store, logs

log = logging.getLogger("pipeline.service")


def json_error_bytes(status: int, message: str, headers: dict[str, str] | None = None) -> bytes:
    """A whole HTTP/1.1 response `{"error": message}` that closes the connection, as bytes for a transport."""
    body = json.dumps({"error": message}, separators=(",", ":")).encode()
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}", "content-type: application/json",
             f"content-length: {len(body)}", "connection: close",
             *(f"{name}: {value}" for name, value in (headers or {}).items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


TWO_FRAMINGS_MESSAGE = ("the request has both Content-Length and Transfer-Encoding: send one of them "
                        "(RFC 9112 6.3)")
USER_INFO_MESSAGE = "a request target with user information (user@host) is refused (RFC 9110 4.2.4)"
ABSOLUTE_FORM = re.compile(rb"(?i)https?://([^/?#]*)([^#]*)")   # scheme://authority, then path and query


def head_timeout_message(seconds: float) -> str:
    return f"the request head did not arrive within {seconds:g} s"


def over_capacity_message(limit: int, per_client: bool) -> str:
    where = "from one client address" if per_client else "in all"
    return f"too many connections {where} (at most {limit:,}): retry on a connection already open, or later"


def fit_open_files(settings: ServiceSettings) -> ServiceSettings:
    """`settings`, with the process allowed as many open files as it may have (the soft limit raised to the hard
    one), and `max_connections` lowered, with a warning, where that still leaves fewer than `SPARE_DESCRIPTORS`
    beside them (past it, accepting fails and asyncio logs every failure)."""
    try:
        import resource
    except ImportError:                        # not a Unix: no such limit to fit
        return settings
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = settings.max_connections + SPARE_DESCRIPTORS
    if soft != resource.RLIM_INFINITY and soft < wanted:
        raised = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return settings
    fitted = max(1, soft - SPARE_DESCRIPTORS)
    print(f"warning: --max-connections {settings.max_connections:,} lowered to {fitted:,}: this process may open "
          f"{soft:,} files (ulimit -n)", file=sys.stderr)
    return dataclasses.replace(settings, max_connections=fitted,
                               max_client_connections=min(settings.max_client_connections, fitted))


def checked_request(request: Any) -> Any:
    """An h11 `Request` as the app should see it (the module's docstring): a ValueError (the 400's message) for
    one whose body is framed twice or whose absolute-form target names user information; one whose target is in
    absolute form (`http://host:port/path?query`) in origin form (`/path?query`), `Host` the target's authority;
    any other as it is. A target whose authority is empty or whose path is not a path is left as it is (a 404 or
    a 400 later, as before)."""
    import h11

    names = {name.lower() for name, _ in request.headers}
    if b"content-length" in names and b"transfer-encoding" in names:
        raise ValueError(TWO_FRAMINGS_MESSAGE)
    found = ABSOLUTE_FORM.fullmatch(request.target)
    if found is None or not found.group(1) or (found.group(2) and found.group(2)[:1] not in (b"/", b"?")):
        return request
    authority, rest = found.group(1), found.group(2) or b"/"
    if b"@" in authority:                                  # a password in the URL: never a Host
        raise ValueError(USER_INFO_MESSAGE)
    if rest.startswith(b"?"):
        rest = b"/" + rest
    headers = [(name, authority if name.lower() == b"host" else value) for name, value in request.headers]
    if b"host" not in names:
        headers.insert(0, (b"host", authority))
    return h11.Request(method=request.method, target=rest, headers=headers, http_version=request.http_version)


_protocols: dict[tuple[Any, ...], type] = {}


def guarded_protocol(settings: ServiceSettings, buffer_bytes: int) -> type:
    """uvicorn's h11 protocol with this module's limits (see its docstring), for `uvicorn.Config(http=...)`;
    `buffer_bytes`: the most of an unfinished head that h11 holds (`headlimit.head_buffer_bytes`)."""
    key = (settings.max_url_bytes, settings.max_header_bytes, buffer_bytes, settings.head_timeout_s,
           settings.body_timeout_s, settings.min_body_bytes_per_s, settings.max_connections,
           settings.max_client_connections)
    if key not in _protocols:
        _protocols[key] = _make_protocol(settings, buffer_bytes)
    return _protocols[key]


def _make_protocol(settings: ServiceSettings, buffer_bytes: int) -> type:
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    from pipeline.service.headlimit import headers_message, url_message

    max_url_bytes, head_timeout_s, body_timeout_s = settings.max_url_bytes, settings.head_timeout_s, \
        settings.body_timeout_s
    min_rate = settings.min_body_bytes_per_s
    max_connections, max_client_connections = settings.max_connections, settings.max_client_connections

    class GuardedH11Protocol(H11Protocol):
        refused = False
        answered = False
        refusal: str | None = None                # the 400's message, where the server knows better than h11
        head_timer: asyncio.TimerHandle | None = None
        body_timer: asyncio.TimerHandle | None = None
        rate_timer: asyncio.TimerHandle | None = None
        body_started: float | None = None         # when the body of the request being read began
        body_bytes = 0                            # what has come since

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            read_event = self.conn.next_event

            def next_event() -> Any:
                """h11's next event, a request's framing and target checked first (the module's docstring)."""
                event = read_event()
                if isinstance(event, h11.Request):
                    try:
                        event = checked_request(event)
                    except ValueError as refusal:
                        self.refusal = str(refusal)
                        raise h11.RemoteProtocolError(self.refusal) from None
                return event
            self.conn.next_event = next_event     # type: ignore[method-assign]

        # -- connections -----------------------------------------------------------------------------------------
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > max_connections:
                self._refuse_now(over_capacity_message(max_connections, per_client=False))
            elif max_client_connections and self.client and self._from_this_client() > max_client_connections:
                self._refuse_now(over_capacity_message(max_client_connections, per_client=True))
            else:
                self._watch()

        def _from_this_client(self) -> int:
            host = self.client[0]
            return sum(1 for other in self.connections
                       if not getattr(other, "refused", False) and other.client and other.client[0] == host)

        def _refuse_now(self, message: str) -> None:
            """A 503 before any request: written, then the connection closed (a flood of them must not hold
            descriptors while it lingers)."""
            self.refused = True
            self.transport.write(json_error_bytes(503, message, {"retry-after": str(OVER_CAPACITY_RETRY_S)}))
            self.transport.close()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_timers()
            super().connection_lost(exc)

        # -- reading ---------------------------------------------------------------------------------------------
        def data_received(self, data: bytes) -> None:
            if not self.refused:              # after a refusal, the rest of what the client sends is dropped
                if self.body_started is not None:
                    self.body_bytes += len(data)
                super().data_received(data)
                self._watch()

        def on_response_complete(self) -> None:
            self.answered = True
            super().on_response_complete()
            self._watch()

        def _watch(self) -> None:
            """Arm the timer of what the connection waits for: a head (one deadline, from when the wait began)
            or more body (reset by every byte); neither while the app works on a request or answers it."""
            if self.refused or self.transport.is_closing():
                self._cancel_timers()
                return
            state = self.conn.their_state
            if state is h11.IDLE and self.conn.our_state is h11.IDLE:
                self._cancel_body_timer()
                # a kept-alive connection's silence is keep-alive's to end: the head's clock starts at a byte
                if self.head_timer is None and (not self.answered or self.conn.trailing_data[0]):
                    self.head_timer = self.loop.call_later(head_timeout_s, self._head_late)
                return
            self._cancel_head_timer()
            self._cancel_body_timer()
            if state is h11.SEND_BODY:
                self.body_timer = self.loop.call_later(body_timeout_s, self._body_stalled)
                if self.body_started is None and min_rate:
                    self.body_started, self.body_bytes = self.loop.time(), 0
                    self.rate_timer = self.loop.call_later(body_timeout_s, self._body_slow)
            else:
                self._cancel_rate_timer()

        def _head_late(self) -> None:
            self.head_timer = None
            if self.refused or self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
                return
            buffered, _ = self.conn.trailing_data
            if not buffered:                  # nothing sent: an idle connection, closed without a word
                self.transport.close()
                return
            self.refused = True
            self.transport.write(json_error_bytes(408, head_timeout_message(head_timeout_s)))
            self.transport.close()

        def _body_stalled(self) -> None:
            self.body_timer = None
            if self.transport.is_closing() or self.conn.their_state is not h11.SEND_BODY:
                return
            if self.flow.read_paused:         # we stopped reading (the app is behind): not the client's stall
                self.body_timer = self.loop.call_later(body_timeout_s, self._body_stalled)
                return
            log.info("%s: no byte of the request body for %g s: connection closed",
                     "%s:%d" % tuple(self.client[:2]) if self.client else "a client", body_timeout_s)
            self.transport.close()

        def _body_slow(self) -> None:
            """The body's deadline, `body_timeout_s` from its start plus a second per `min_rate` bytes since: later
            where more came meanwhile, or where we stopped reading (the app is behind); else the end."""
            self.rate_timer = None
            if self.transport.is_closing() or self.conn.their_state is not h11.SEND_BODY:
                return
            deadline = self.body_started + body_timeout_s + self.body_bytes / min_rate
            if self.flow.read_paused:
                self.body_started += self.loop.time() + body_timeout_s - deadline   # paused time is not theirs
                deadline = self.loop.time() + body_timeout_s
            if deadline > self.loop.time():
                self.rate_timer = self.loop.call_at(deadline, self._body_slow)
                return
            log.info("%s: the request body came at under %d bytes/s (%d bytes in %.0f s): connection closed",
                     "%s:%d" % tuple(self.client[:2]) if self.client else "a client", min_rate, self.body_bytes,
                     self.loop.time() - self.body_started)
            self.transport.close()

        def _cancel_rate_timer(self) -> None:
            self.body_started = None
            if self.rate_timer is not None:
                self.rate_timer.cancel()
                self.rate_timer = None

        def _cancel_head_timer(self) -> None:
            if self.head_timer is not None:
                self.head_timer.cancel()
                self.head_timer = None

        def _cancel_body_timer(self) -> None:
            if self.body_timer is not None:
                self.body_timer.cancel()
                self.body_timer = None

        def _cancel_timers(self) -> None:
            self._cancel_head_timer()
            self._cancel_body_timer()
            self._cancel_rate_timer()

        def _unsupported_upgrade_warning(self) -> None:
            """An `Upgrade` the service does not speak is served as plain HTTP, without a warning per request."""

        # -- refusals of the server's own ------------------------------------------------------------------------
        def shutdown(self) -> None:
            if self.refused:
                self.transport.close()
            else:
                super().shutdown()

        def send_400_response(self, msg: str) -> None:
            buffered, _ = self.conn.trailing_data
            status, message = 400, self.refusal or "invalid HTTP request"
            if len(buffered) > buffer_bytes:
                line_end = buffered.find(b"\n")
                if line_end < 0 or line_end > max_url_bytes:
                    status, message = 414, url_message(max_url_bytes)
                else:
                    status, message = 431, headers_message(settings.max_header_bytes)
            body = json.dumps({"error": message}, separators=(",", ":")).encode()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                       (b"connection", b"close")]
            try:
                for event in (h11.Response(status_code=status, headers=headers, reason=HTTPStatus(status).phrase),
                              h11.Data(data=body), h11.EndOfMessage()):
                    self.transport.write(self.conn.send(event))
            except h11.LocalProtocolError:        # a response had begun: nothing more can be said
                self.transport.close()
                return
            # closing now, with the client still sending, would reset the connection and could lose the answer
            # on its way: end our side, drop what still comes, and close when the client does or after a while
            self.refused = True
            self._cancel_timers()
            if self.transport.can_write_eof():
                self.transport.write_eof()
            self.loop.call_later(REFUSAL_LINGER_S, self.transport.close)

    return GuardedH11Protocol
