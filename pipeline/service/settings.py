"""Service settings: limits and batching (plain data; no web framework imported)."""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from pipeline.options import OPTIONS

MAX_BEAM = 8
DEFAULT_PORTS = {"http": 80, "https": 443}


def normalized_origin(value: str) -> str:
    """`value` (an origin, or `*`) as a browser writes it: `scheme://host[:port]`, lower case, no default port, no
    trailing slash; http, https or a browser extension's (`chrome-extension://<id>`, `moz-extension://<id>`, as a
    translation extension calls from). ValueError (one line) for anything else (a path, a query, another scheme)."""
    if value == "*":
        return value
    parts = urlsplit(value.strip())
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = -1
    if not (scheme in DEFAULT_PORTS or scheme.endswith("-extension")) or not parts.hostname or \
            parts.path not in ("", "/") or parts.query or parts.fragment or parts.username or port == -1:
        raise ValueError(f"cors origin {value!r}: expected scheme://host[:port], like https://app.example.org")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    shown = "" if port in (None, DEFAULT_PORTS.get(scheme)) else f":{port}"
    return f"{scheme}://{host}{shown}"


@dataclass(frozen=True)
class ServiceSettings:
    """Service limits and batching; the names match scripts/serve.py's flags."""
    max_batch: int = 64               # most sentences in one decoding batch
    max_wait_ms: float = 10.0         # how long the worker waits for more requests to fill a batch
    max_sentences: int = 64           # most sentences in one request (413 past it)
    max_chars: int = 1000             # most characters in one sentence (413 past it)
    timeout_s: float = 30.0           # a request waiting longer gets a 503
    beam: int | None = None           # default beam; None: the run's decode.beam_size
    api_key: str | None = None        # when set, requests need `Authorization: Bearer <api_key>`
    max_body_bytes: int = 1_000_000   # 1 MB
    req_limit: int = 0                # most translation requests a minute from one client address (0: no limit)
    cors_origins: tuple[str, ...] = ()  # origins browsers may call from ("*": any; empty: no CORS headers)
    allowed_hosts: tuple[str, ...] = ()  # host names a request must name (empty: any; serve sets them on loopback)
    max_alternatives: int = 3         # most LibreTranslate `alternatives` (LibreTranslate's default limit)
    glossary_db: str | None = None    # the SQLite file of stored glossaries (None: in memory, lost at exit)
    max_file_bytes: int = 10_000_000  # most bytes in one uploaded document (POST /translate_file, /translate_document)
    file_timeout_s: float = 600.0     # a document not translated by then gets a 503
    file_ttl_s: float = 1800.0        # translated files can be downloaded for this long (GET /download_file/...)
    files_dir: str | None = None      # where translated files wait (None: a private temporary directory)
    max_url_bytes: int = 32_768       # most bytes in a request's path and query string (414 past it)
    max_header_bytes: int = 32_768    # most bytes in a request's headers, `name: value\r\n` each (431 past it)
    max_document_xml_bytes: int = 12_000_000  # an office file whose XML parts unpack to more: 400 before parsing
    max_document_unpacked_bytes: int = 100_000_000  # an office file whose parts, pictures too, unpack to more: 400
    max_document_memory_bytes: int = 2_000_000_000  # a document's process may map this much more (0: no cap)
    document_processes: bool = True   # each document read and written in a process of its own (False: a thread)
    max_files_bytes: int = 500_000_000  # translated files waiting for download, in all; past it the oldest go
    max_documents: int = 2            # documents read, translated and written at once; more wait for a turn
    max_waiting_documents: int = 16   # documents waiting for a turn; past it, a 503
    head_timeout_s: float = 20.0      # a request head (line and headers) must arrive whole within this; else a 408
    body_timeout_s: float = 60.0      # a request body with no new byte for this long: the connection is closed
    min_body_bytes_per_s: int = 500   # a body must come whole within body_timeout_s + 1 s per this many bytes (0: any)
    max_connections: int = 1000       # open connections at once; past it a new one gets a 503
    max_client_connections: int = 64  # open connections from one client address (0: no limit, behind a proxy)
    forwarded_allow_ips: tuple[str, ...] = ()  # proxies whose X-Forwarded-For names the client (empty: none)
    public_url: str | None = None     # the address clients reach the service at, for download links (None: the
    #                                   request's Host header, as LibreTranslate does, which the client chooses)

    def __post_init__(self) -> None:
        for name in ("max_batch", "max_sentences", "max_chars", "max_body_bytes", "max_file_bytes",
                     "max_url_bytes", "max_header_bytes", "max_document_xml_bytes", "max_document_unpacked_bytes",
                     "max_documents", "max_files_bytes", "max_connections"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.max_wait_ms < 0:
            raise ValueError(f"max_wait_ms must be >= 0, got {self.max_wait_ms}")
        for name in ("timeout_s", "file_timeout_s", "file_ttl_s", "head_timeout_s", "body_timeout_s"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)}")
        OPTIONS["beam"].check(self.beam, MAX_BEAM)
        for name in ("max_waiting_documents", "max_client_connections", "max_document_memory_bytes",
                     "min_body_bytes_per_s"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.req_limit < 0:
            raise ValueError(f"req_limit must be >= 0 (0: no limit), got {self.req_limit}")
        if not 0 <= self.max_alternatives < MAX_BEAM:
            raise ValueError(f"max_alternatives must be from 0 to {MAX_BEAM - 1}, got {self.max_alternatives}")
        if self.public_url is not None:
            parts = urlsplit(self.public_url)
            if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
                raise ValueError(f"public_url must be an http(s) address with no query, like https://mt.example.org, "
                                 f"got {self.public_url!r}")
        object.__setattr__(self, "cors_origins", tuple(normalized_origin(origin) for origin in self.cors_origins))
        if self.api_key is not None and not self.api_key:
            raise ValueError("api_key must not be empty")
