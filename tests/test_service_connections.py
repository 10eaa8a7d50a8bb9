"""The server's guard on connections, through a real uvicorn server (a stand-in translator: no model): a request
head that trickles in is a JSON 408 when its time is up and a silent connection is closed; a stalled body is cut
off; one client address cannot take every connection; a WebSocket upgrade is plain HTTP; and the server goes on
serving after each. Before the guard, each of these connections stayed open for good."""
import json
import socket
import time

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from test_service_housekeeping import Server, get, settings  # noqa: E402


def connect(server: Server) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=10)


def read_all(connection: socket.socket) -> bytes:
    """Everything the server sends until it closes (or the socket's timeout passes: a test failure)."""
    answer = b""
    while chunk := connection.recv(65536):
        answer += chunk
    return answer


def answer_of(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, body


def still_serving(server: Server) -> None:
    status, _, body = server.exchange(get(b"/languages"))
    assert status == 200 and b'"code":"en"' in body


def test_a_head_that_trickles_in_gets_a_json_408_when_its_time_is_up():
    with Server(settings(head_timeout_s=1.0)) as running:
        started = time.time()
        with connect(running) as connection:
            for byte in b"GET /languages HTTP/1.1\r\nHost: t":         # a byte every 0.1 s: never idle, never done
                try:
                    connection.sendall(bytes([byte]))
                except OSError:
                    break
                time.sleep(0.1)
            status, headers, body = answer_of(read_all(connection))
        assert (status, headers["content-type"]) == (408, "application/json")
        assert json.loads(body) == {"error": "the request head did not arrive within 1 s"}
        assert 0.9 < time.time() - started < 3
        still_serving(running)


def test_a_connection_that_sends_nothing_is_closed_and_one_that_is_served_is_not_cut_short():
    with Server(settings(head_timeout_s=0.5)) as running:
        started = time.time()
        with connect(running) as connection:
            assert read_all(connection) == b""                  # closed, without a word
        assert 0.4 < time.time() - started < 3
        with connect(running) as connection:                    # a whole head in time: served, and kept alive
            connection.sendall(b"GET /languages HTTP/1.1\r\nHost: t\r\n\r\n")
            time.sleep(0.8)                                     # past the head timeout, within keep-alive's 5 s
            connection.sendall(get(b"/languages"))
            answers = read_all(connection)
        assert answers.count(b"HTTP/1.1 200 OK") == 2


def test_a_stalled_body_is_cut_off_and_the_server_goes_on():
    with Server(settings(body_timeout_s=0.5)) as running:
        started = time.time()
        with connect(running) as connection:
            connection.sendall(b"POST /translate HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                               b"Content-Length: 100\r\n\r\n{\"text\": ")
            assert read_all(connection) == b""
        assert 0.4 < time.time() - started < 3
        still_serving(running)


def test_a_body_that_trickles_in_is_cut_off_and_one_that_keeps_the_rate_is_served():
    with Server(settings(body_timeout_s=1.0, min_body_bytes_per_s=100)) as running:
        body = json.dumps({"text": "Hello there. " * 20}).encode()                 # 277 bytes
        head = (b"POST /translate HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n" % len(body))
        started = time.time()
        with connect(running) as connection:
            connection.sendall(head)
            for byte in body:                       # 10 bytes a second: never idle for the 1 s timeout, never done
                try:
                    connection.sendall(bytes([byte]))
                except OSError:
                    break
                time.sleep(0.1)
                if time.time() - started > 8:
                    break
            assert read_all(connection) == b""                   # closed, as a stalled body is
        assert 1.0 < time.time() - started < 4                   # at 1 s + 1 s per 100 bytes come: about 1.2 s
        with connect(running) as connection:                     # 300 bytes a second: within the rate, served
            connection.sendall(head)
            for at in range(0, len(body), 30):
                connection.sendall(body[at:at + 30])
                time.sleep(0.1)
            status, _, _ = answer_of(connection.recv(65536))
        assert status == 200
        still_serving(running)


def test_one_client_address_cannot_take_every_connection():
    with Server(settings(max_client_connections=3)) as running:
        held = [connect(running) for _ in range(3)]
        try:
            time.sleep(0.2)
            with connect(running) as fourth:
                status, headers, body = answer_of(read_all(fourth))
            assert (status, headers["content-type"], headers["retry-after"]) == (503, "application/json", "1")
            assert json.loads(body)["error"].startswith("too many connections from one client address (at most 3)")
            held.pop().close()
            time.sleep(0.2)
            still_serving(running)                               # a place freed is a place taken
        finally:
            for connection in held:
                connection.close()


def test_connections_in_all_are_capped_too():
    with Server(settings(max_connections=2, max_client_connections=0)) as running:
        held = [connect(running) for _ in range(2)]
        try:
            time.sleep(0.2)
            status, _, body = running.exchange(get(b"/languages"))
            assert status == 503 and "too many connections in all (at most 2)" in json.loads(body)["error"]
        finally:
            for connection in held:
                connection.close()
        time.sleep(0.2)
        still_serving(running)


def test_a_websocket_upgrade_is_served_as_plain_http():
    with Server(settings()) as running:
        status, headers, body = running.exchange(
            b"GET /languages HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
    assert status == 200 and headers["content-type"] == "application/json" and b'"code":"en"' in body


def test_the_connection_cap_is_fitted_to_the_open_file_limit(monkeypatch, capsys):
    resource = pytest.importorskip("resource")
    from pipeline.service.connections import SPARE_DESCRIPTORS, fit_open_files

    limits = {"now": (512, 4096)}
    monkeypatch.setattr(resource, "getrlimit", lambda which: limits["now"])
    monkeypatch.setattr(resource, "setrlimit", lambda which, value: limits.update(now=value))
    assert fit_open_files(settings(max_connections=1000)).max_connections == 1000      # raised to fit
    assert limits["now"] == (1000 + SPARE_DESCRIPTORS, 4096) and capsys.readouterr().err == ""
    limits["now"] = (512, 512)                                                      # cannot be raised
    fitted = fit_open_files(settings(max_connections=1000, max_client_connections=500))
    assert (fitted.max_connections, fitted.max_client_connections) == (512 - SPARE_DESCRIPTORS,) * 2
    assert "--max-connections 1,000 lowered to 256" in capsys.readouterr().err


def test_x_forwarded_for_is_believed_only_from_the_proxies_named():
    body = b"q=Hi&source=en&target=it"

    def statuses(running: Server) -> list[int]:
        return [running.exchange(b"POST /translate HTTP/1.1\r\nHost: t\r\nX-Forwarded-For: 10.0.0.%d\r\n"
                                 b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n"
                                 b"Connection: close\r\n\r\n%s" % (index, len(body), body))[0] for index in range(3)]
    with Server(settings(req_limit=2)) as running:             # the header ignored: one client, limited
        assert statuses(running) == [200, 200, 429]
    with Server(settings(req_limit=2, forwarded_allow_ips=("127.0.0.1",))) as running:   # a proxy here: three
        assert statuses(running) == [200, 200, 200]


def test_the_access_log_shows_no_key_and_no_text_and_a_short_client():
    import logging

    from pipeline.service.server import AccessLogTrim, masked_query

    assert masked_query("/translate?api_key=sekrit&q=Hello%20there&source=en") == \
        "/translate?api_key=***&q=***&source=en"
    assert masked_query("/detect?api%5Fkey=sekrit&x=1") == "/detect?api%5Fkey=***&x=1"
    assert masked_query("/languages") == "/languages"
    record = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
                               ("1.2.3.4" * 1000 + ":5", "POST", "/translate?api_key=sekrit", "1.1", 200), None)
    AccessLogTrim().filter(record)
    line = record.getMessage()
    assert "sekrit" not in line and "api_key=***" in line and len(line) < 200, line


def test_a_trailing_slash_is_a_json_404_not_a_redirect_to_the_client_s_host():
    with Server(settings()) as running:
        status, headers, body = running.exchange(b"GET /health/ HTTP/1.1\r\nHost: evil.example\r\n"
                                                 b"Connection: close\r\n\r\n")
    assert (status, headers["content-type"], "location" in headers) == (404, "application/json", False)
    assert json.loads(body) == {"error": "Not Found"}


def test_a_body_framed_twice_is_a_json_400_and_what_follows_it_is_never_served():
    # chunked, the body ends at once and a second request follows; by Content-Length, those bytes are the body:
    # a proxy that reads one header and a server that reads the other see different requests (smuggling)
    smuggled = b"0\r\n\r\nGET /languages HTTP/1.1\r\nHost: t\r\n\r\n"
    with Server(settings()) as running:
        with connect(running) as connection:
            connection.sendall(b"POST /translate HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                               b"Content-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n" % len(smuggled) + smuggled)
            answers = read_all(connection)
        assert answers.count(b"HTTP/1.1 ") == 1
        status, headers, body = answer_of(answers)
        assert (status, headers["content-type"], headers["connection"]) == (400, "application/json", "close")
        assert json.loads(body) == {"error": "the request has both Content-Length and Transfer-Encoding: send one "
                                             "of them (RFC 9112 6.3)"}
        still_serving(running)


def test_a_target_in_absolute_form_is_served_as_its_path_and_names_the_host():
    with Server(settings()) as running:
        status, _, body = running.exchange(b"GET http://127.0.0.1:%d/languages HTTP/1.1\r\nHost: t\r\n"
                                           b"Connection: close\r\n\r\n" % running.port)
        assert status == 200 and b'"code":"en"' in body
        status, _, body = running.exchange(b"GET HTTP://t?x=1 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        assert status == 200 and b"<html" in body.lower()                  # no path: the page at /
    # the target's host is the request's host (RFC 9112 3.2.2): a bound-to-loopback service checks that one
    with Server(settings(allowed_hosts=("localhost", "127.0.0.1", "::1"))) as running:
        status, _, body = running.exchange(b"GET http://evil.example/languages HTTP/1.1\r\nHost: localhost\r\n"
                                           b"Connection: close\r\n\r\n")
        assert status == 421 and "not 'evil.example'" in json.loads(body)["error"]
        status, _, _ = running.exchange(b"GET http://localhost:%d/languages HTTP/1.1\r\nHost: evil.example\r\n"
                                        b"Connection: close\r\n\r\n" % running.port)
        assert status == 200


def test_a_target_in_absolute_form_with_user_information_is_a_400_that_repeats_none_of_it():
    with Server(settings()) as running:
        status, headers, body = running.exchange(b"GET http://user:sekrit@127.0.0.1:%d/languages HTTP/1.1\r\n"
                                                 b"Host: 127.0.0.1\r\n\r\n" % running.port)
        assert (status, headers["content-type"]) == (400, "application/json") and b"sekrit" not in body
        assert json.loads(body) == {"error": "a request target with user information (user@host) is refused "
                                             "(RFC 9110 4.2.4)"}
        still_serving(running)


def test_options_asterisk_asks_the_server_and_other_methods_may_not():
    """`OPTIONS *` (RFC 9110 9.3.7) is a 204 naming the methods served; `*` was read as a path, a 404."""
    with Server(settings()) as running:
        status, headers, body = running.exchange(b"OPTIONS * HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        assert (status, body) == (204, b"") and headers["allow"] == "GET, HEAD, POST, DELETE"
        status, headers, body = running.exchange(b"GET * HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        assert (status, headers["content-type"]) == (400, "application/json") and b"OPTIONS only" in body
        still_serving(running)
