#!/usr/bin/env python
"""Serve trained runs over HTTP: POST /translate (ours and LibreTranslate's), GET /health, a page at /,
OpenAPI docs at /docs. One run per direction: --run A --run B serves both (say en -> it and it -> en), each with its
own engine and batcher; requests pick theirs by source and target language."""
import _bootstrap  # noqa: F401

import argparse
import os
from pathlib import Path

from pipeline.cli import add_run_arguments, run_main


def default_glossary_db() -> str:
    """$XDG_DATA_HOME (else ~/.local/share)/nmt-pipeline/glossaries.sqlite3."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return str(Path(base) / "nmt-pipeline" / "glossaries.sqlite3")


def service_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__)
    add_run_arguments(parser, engine=True, several_runs=True)
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default: %(default)s, this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="port (default: %(default)s)")
    parser.add_argument("--beam", type=int, help="default beam size, 1-8 (default: the run's decode.beam_size)")
    parser.add_argument("--warm-up", choices=("default", "all"), default="default",
                        help="what the Keras engine compiles before it listens: greedy and the default beam "
                             "(default), or every beam 1-8 and every LibreTranslate alternatives count up to "
                             "--alternatives-limit (all: no request waits for a compile; longer to start)")
    parser.add_argument("--max-batch", type=int, default=64,
                        help="most sentences decoded together (default: %(default)s)")
    parser.add_argument("--max-wait-ms", type=float, default=10.0,
                        help="how long a batch waits for more requests (default: %(default)s)")
    parser.add_argument("--max-sentences", type=int, default=64,
                        help="most sentences per request (default: %(default)s)")
    parser.add_argument("--max-chars", type=int, default=1000,
                        help="most characters per text, a sentence or a paragraph (default: %(default)s)")
    add_limit_flags(parser)
    add_connection_flags(parser)
    add_file_flags(parser)
    parser.add_argument("--log-level", default="info", choices=("critical", "error", "warning", "info", "debug"))
    return parser


def add_limit_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timeout-s", type=float, default=30.0,
                        help="a request waiting longer gets a 503 (default: %(default)s)")
    parser.add_argument("--api-key-env", metavar="VAR",
                        help="require 'Authorization: Bearer <key>', the key being the value of environment "
                             "variable VAR")
    parser.add_argument("--req-limit", type=int, default=0, metavar="N",
                        help="at most N translation requests a minute from one client address; past it a 429 "
                             "(default: 0, no limit)")
    parser.add_argument("--cors-origins", default="", metavar="ORIGINS",
                        help="comma-separated origins whose web pages may call the API, or '*' for any "
                             "(default: none, no CORS headers)")
    parser.add_argument("--alternatives-limit", type=int, default=3,
                        help="most LibreTranslate 'alternatives' per text, 0-7 (default: %(default)s)")
    parser.add_argument("--glossary-db", metavar="FILE",
                        help="SQLite file of the glossaries clients upload (POST /glossaries), created at the first start "
                             "(default: $XDG_DATA_HOME or ~/.local/share, then nmt-pipeline/glossaries.sqlite3)")


def add_connection_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-url-bytes", type=int, default=32_768,
                        help="most bytes in a request's path and query string; past it a 414 (default: %(default)s)")
    parser.add_argument("--max-header-bytes", type=int, default=32_768,
                        help="most bytes in a request's headers; past them a 431 (default: %(default)s)")
    parser.add_argument("--head-timeout-s", type=float, default=20.0,
                        help="a request's line and headers must arrive whole within this, however slowly; past it "
                             "a 408 and the connection closed (default: %(default)s)")
    parser.add_argument("--body-timeout-s", type=float, default=60.0,
                        help="a request body with no new byte for this long has its connection closed "
                             "(default: %(default)s)")
    parser.add_argument("--min-body-bytes-per-s", type=int, default=500,
                        help="a request body must arrive whole within --body-timeout-s plus a second for each this "
                             "many bytes it has sent, or its connection is closed (0: any rate; default: "
                             "%(default)s)")
    parser.add_argument("--max-connections", type=int, default=1000,
                        help="open connections at once; past it a new one gets a 503 (default: %(default)s)")
    parser.add_argument("--max-client-connections", type=int, default=64, metavar="N",
                        help="open connections from one client address; past it a 503 (default: %(default)s; "
                             "0: no limit, for a service behind a proxy)")
    parser.add_argument("--forwarded-allow-ips", default="", metavar="IPS",
                        help="comma-separated addresses of reverse proxies whose X-Forwarded-For header names the "
                             "client (for --req-limit and the log), or '*' (default: none, the header is ignored)")
    parser.add_argument("--public-url", metavar="URL",
                        help="the address clients reach the service at (https://mt.example.org), where "
                             "/translate_file's download links point (default: the Host the request names)")


def add_file_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-file-bytes", type=int, default=10_000_000,
                        help="most bytes in one uploaded document (POST /translate_file, /translate_document; "
                             "default: %(default)s)")
    parser.add_argument("--max-document-xml-bytes", type=int, default=12_000_000,
                        help="an office file whose XML parts unpack to more is refused before parsing (about 20 "
                             "bytes of memory per byte of XML of empty paragraphs, up to 80 of short paragraphs of "
                             "text; default: %(default)s, 250 MB to 1 GB)")
    parser.add_argument("--max-document-unpacked-bytes", type=int, default=100_000_000,
                        help="an office file whose parts, pictures included, unpack to more is refused before "
                             "parsing (each is held in memory, about twice; default: %(default)s)")
    parser.add_argument("--max-document-memory-bytes", type=int, default=2_000_000_000,
                        help="the address space a document's process may take, past what it starts with, to read "
                             "and write it; a document that needs more is refused (400). A 12 MB XML part takes "
                             "about 1 GB. 0: no cap (default: %(default)s)")
    parser.add_argument("--documents-in-threads", action="store_true",
                        help="read and write documents in the service's own threads, as before; by default, where "
                             "the platform has a forkserver, each is read in a process of its own, killed at "
                             "--file-timeout-s, when its client disconnects or when the server stops")
    parser.add_argument("--max-documents", type=int, default=2,
                        help="documents read, translated and written at once; more wait for a turn, in order "
                             "(default: %(default)s)")
    parser.add_argument("--max-waiting-documents", type=int, default=16,
                        help="documents that may wait for a turn; more get a 503 (default: %(default)s)")
    parser.add_argument("--file-timeout-s", type=float, default=600.0,
                        help="a document not translated by then gets a 503 (default: %(default)s)")
    parser.add_argument("--file-ttl-s", type=float, default=1800.0,
                        help="how long a translated file can be downloaded (GET /download_file/...; default: %(default)s)")
    parser.add_argument("--max-files-bytes", type=int, default=500_000_000,
                        help="translated files waiting for download, in all; a new one past it deletes the oldest "
                             "(default: %(default)s)")
    parser.add_argument("--files-dir", metavar="DIR",
                        help="where translated files wait for download (default: a private temporary directory, "
                             "deleted at exit)")


def main() -> int:
    args = service_parser().parse_args()
    from pipeline.service import serve
    from pipeline.service.settings import ServiceSettings

    settings = ServiceSettings(max_batch=args.max_batch, max_wait_ms=args.max_wait_ms,
                               max_sentences=args.max_sentences, max_chars=args.max_chars,
                               timeout_s=args.timeout_s, beam=args.beam, req_limit=args.req_limit,
                               cors_origins=tuple(o.strip() for o in args.cors_origins.split(",") if o.strip()),
                               max_alternatives=args.alternatives_limit, glossary_db=args.glossary_db or default_glossary_db(),
                               max_file_bytes=args.max_file_bytes, file_timeout_s=args.file_timeout_s,
                               file_ttl_s=args.file_ttl_s, files_dir=args.files_dir,
                               max_url_bytes=args.max_url_bytes, max_header_bytes=args.max_header_bytes,
                               max_document_xml_bytes=args.max_document_xml_bytes,
                               max_document_unpacked_bytes=args.max_document_unpacked_bytes,
                               max_document_memory_bytes=args.max_document_memory_bytes,
                               document_processes=not args.documents_in_threads,
                               max_files_bytes=args.max_files_bytes, max_documents=args.max_documents,
                               max_waiting_documents=args.max_waiting_documents,
                               head_timeout_s=args.head_timeout_s, body_timeout_s=args.body_timeout_s,
                               min_body_bytes_per_s=args.min_body_bytes_per_s,
                               max_connections=args.max_connections,
                               max_client_connections=args.max_client_connections,
                               forwarded_allow_ips=tuple(ip.strip() for ip in args.forwarded_allow_ips.split(",")
                                                         if ip.strip()), public_url=args.public_url)
    serve(args.run, settings, which=args.model, engine=args.engine, host=args.host, port=args.port,
          api_key_env=args.api_key_env, log_level=args.log_level, warm=args.warm_up)
    return 0


if __name__ == "__main__":
    run_main(main)
