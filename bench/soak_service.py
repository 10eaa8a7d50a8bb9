"""Bounded soak of the translation service: valid, hostile and oversized requests on both APIs, for minutes.

Starts `scripts/serve.py` on 127.0.0.1 (a free port), warms it up, then `--clients` concurrent loopback clients
send a mix of requests back to back for `--minutes`: native and LibreTranslate translations (JSON, form, HTML,
alternatives), and hostile ones (lone surrogates, wrong types, nested arrays, non-JSON, binary and empty bodies,
bodies over the size limit, texts over the character limit, 3,000 tags, unclosed HTML, bad alternatives).
Reports requests served, answers by status code, p50/p95/p99 latency, and the service's RSS after warm-up and at
the end. Then it sends one more burst and SIGTERM while those requests are in flight: each must get its answer,
and the process must exit 0 within 10 s.

Acceptance: RSS growth < 10% after warm-up, 0 answers >= 500, no dropped connection or malformed error (a body
over the size limit may see its connection closed after the 413, counted apart), every in-flight request
answered, exit 0 within 10 s. The service's log goes to a temporary file, named in the summary.

With `--mixed`, the scenario is documents and strings together instead: `--document-clients` clients upload a
one-line `.txt` of `--document-kb` kilobytes (one paragraph of short sentences) to `/translate_document` back to
back, while `--clients` clients send one sentence per `POST /translate`. It reports the strings' p50/p95/p99 while
documents run, the documents completed, and the service's RSS after `--warmup-s` of the same mix, its peak (sampled
every 0.2 s) and at the end. Acceptance: string p95 <= 1 s, no 5xx, RSS at the end within 10% of the start.

usage: python bench/soak_service.py --run RUN [--minutes 5] [--clients 16] [--engine keras|ctranslate2]
       python bench/soak_service.py --run RUN --mixed [--minutes 2] [--clients 4] [--document-clients 2]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from bench_service import english_sentences, running_service
from common import emit

MAX_CHARS = 30_000            # the soaked service's --max-chars: room for the 3,000-tag HTML case

import numpy as np
from pipeline.translate import ENGINES  # noqa: E402


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def requests_mix(sentences: list[str]) -> list[tuple[str, str, dict]]:
    """(name, path, httpx keyword arguments) of every request kind; a client cycles through them."""
    sentence = sentences[0]
    json_headers = {"Content-Type": "application/json"}
    hostile_json = '{"text": "lone \\ud800 surrogate and \\udfff"}'
    return [
        ("native", "/translate", {"json": {"text": sentence}}),
        ("native_list", "/translate", {"json": {"text": sentences[1:4], "beam": 2}}),
        ("lt_json", "/translate", {"json": {"q": sentence, "source": "en", "target": "it"}}),
        ("lt_form", "/translate", {"data": {"q": sentence, "source": "auto", "target": "it"}}),
        ("lt_html", "/translate", {"json": {"q": f"<p>{sentence} <b>{sentences[2]}</b></p>", "source": "en",
                                            "target": "it", "format": "html"}}),
        ("lt_alternatives", "/translate", {"json": {"q": sentence, "source": "en", "target": "it",
                                                    "alternatives": 2}}),
        ("surrogate_native", "/translate", {"content": hostile_json, "headers": json_headers}),
        ("surrogate_lt", "/translate", {"content": '{"q": "lone \\udfff", "source": "en", "target": "it"}',
                                        "headers": json_headers}),
        ("surrogate_html", "/translate", {"content": '{"q": "<p title=\\"\\ud800\\">a \\ud800</p>", "source": "en", '
                                                     '"target": "it", "format": "html"}', "headers": json_headers}),
        ("wrong_type", "/translate", {"json": {"text": 42}}),
        ("nested", "/translate", {"json": {"text": [["a"], {"b": 1}]}}),
        ("not_json", "/translate", {"content": "{not json", "headers": json_headers}),
        ("binary", "/translate", {"content": bytes(range(256)) * 8,
                                  "headers": {"Content-Type": "application/octet-stream"}}),
        ("empty", "/translate", {"content": b"", "headers": json_headers}),
        ("too_big_body", "/translate", {"content": b'{"text": "' + b"a" * 1_100_000 + b'"}', "headers": json_headers}),
        ("too_many_chars", "/translate", {"json": {"text": "word " * (MAX_CHARS // 5 + 1)}}),
        ("many_tags", "/translate", {"json": {"q": "<b>x</b>" * 3000, "source": "en", "target": "it",
                                              "format": "html"}}),             # 24,000 characters: parsed
        ("deep_json", "/translate", {"content": "[" * 100_000 + "]" * 100_000, "headers": json_headers}),
        ("deep_json_lt", "/translate", {"content": '{"q": ' + "[" * 100_000 + "]" * 100_000 + "}",
                                        "headers": json_headers}),
        ("surrogate_fields", "/translate", {"content": '{"q": "a", "source": "\\ud800", "target": "\\udfff", '
                                                       '"format": "\\ud800"}', "headers": json_headers}),
        ("query_string", "/translate", {"params": {"q": sentence, "source": "en", "target": "it"}}),
        ("unclosed_html", "/translate", {"json": {"q": "<p><b>Where is <i>the station", "source": "en",
                                                  "target": "it", "format": "html"}}),
        ("bad_alternatives", "/translate", {"json": {"q": "Hi", "source": "en", "target": "it",
                                                     "alternatives": "many"}}),
        ("health", "/health", {}),
        ("languages", "/languages", {}),
    ]


async def soak(url: str, sentences: list[str], clients: int, seconds: float) -> dict:
    import httpx

    kinds = requests_mix(sentences)
    statuses: Counter = Counter()
    by_kind: dict[str, Counter] = {name: Counter() for name, _, _ in kinds}
    latencies: list[float] = []
    kind_latencies: dict[str, list[float]] = {name: [] for name, _, _ in kinds}
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(limits=limits, timeout=120) as client:
        end = time.perf_counter() + seconds

        async def one_client(index: int) -> None:
            position = index
            while time.perf_counter() < end:
                name, path, kwargs = kinds[position % len(kinds)]
                position += 1
                sent = time.perf_counter()
                try:
                    method = client.get if path in ("/health", "/languages") else client.post
                    response = await method(url + path, **kwargs)
                    status = str(response.status_code)
                    if response.status_code >= 400:
                        json.loads(response.text)["error"]        # every error is {"error": "..."}
                except (httpx.WriteError, httpx.ReadError, httpx.RemoteProtocolError) as exc:
                    # a body over the limit is answered 413 and the connection closed before it is all sent;
                    # a client may see the close first. Anywhere else a dropped connection is a failure.
                    status = "413_closed_early" if name == "too_big_body" else type(exc).__name__
                except Exception as exc:                           # noqa: BLE001  (counted as a failure)
                    status = type(exc).__name__
                latencies.append(time.perf_counter() - sent)
                kind_latencies[name].append(latencies[-1])
                statuses[status] += 1
                by_kind[name][status] += 1

        await asyncio.gather(*(one_client(i) for i in range(clients)))
    ms = np.array(latencies) * 1000.0
    return {"requests": len(latencies), "statuses": dict(statuses),
            "by_kind": {name: dict(counts) for name, counts in by_kind.items()},
            "p50_ms": float(np.percentile(ms, 50)), "p95_ms": float(np.percentile(ms, 95)),
            "p99_ms": float(np.percentile(ms, 99)),
            "p50_p95_ms_by_kind": {name: [round(float(np.percentile(values, q)) * 1000.0) for q in (50, 95)]
                                   for name, values in kind_latencies.items() if values}}


async def mixed(url: str, pid: int, sentences: list[str], clients: int, document_clients: int, seconds: float,
                document_kb: int) -> dict:
    """Documents and strings together: the strings' latency while documents run, and RSS start, peak, end."""
    import threading

    import httpx

    line = " ".join(sentences[i % len(sentences)] for i in range(100_000))[:document_kb * 1000].encode()
    strings: list[float] = []
    statuses: Counter = Counter()
    documents = Counter()
    rss = {"start": rss_mb(pid), "peak": 0.0}
    sampling = threading.Event()

    def sample() -> None:
        while not sampling.wait(0.2):
            rss["peak"] = max(rss["peak"], rss_mb(pid))
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    async with httpx.AsyncClient(timeout=900) as client:
        end = time.perf_counter() + seconds

        async def string_client(index: int) -> None:
            position = index
            while time.perf_counter() < end:
                sent = time.perf_counter()
                response = await client.post(url + "/translate", json={"text": sentences[position % len(sentences)]})
                strings.append(time.perf_counter() - sent)
                statuses[str(response.status_code)] += 1
                position += 1

        async def document_client(index: int) -> None:
            while time.perf_counter() < end:
                response = await client.post(url + "/translate_document", files={"file": (f"l{index}.txt", line)})
                documents[str(response.status_code)] += 1

        await asyncio.gather(*(string_client(i) for i in range(clients)),
                             *(document_client(i) for i in range(document_clients)))
    sampling.set()
    sampler.join()
    rss["end"] = rss_mb(pid)
    ms = np.array(strings) * 1000.0
    return {"string_requests": len(strings), "string_statuses": dict(statuses), "documents": dict(documents),
            "document_bytes": len(line), "string_p50_ms": round(float(np.percentile(ms, 50)), 1),
            "string_p95_ms": round(float(np.percentile(ms, 95)), 1),
            "string_p99_ms": round(float(np.percentile(ms, 99)), 1),
            "rss_start_mb": round(rss["start"]), "rss_peak_mb": round(max(rss["peak"], rss["end"])),
            "rss_end_mb": round(rss["end"])}


def run_mixed(args, run: Path, sentences: list[str]) -> int:
    with running_service(run, 64, args, "soak-mixed-", extra=["--file-timeout-s", "3600"], keep_log=True) as service:
        url, pid, log = service.url, service.process.pid, service.log
        asyncio.run(mixed(url, pid, sentences, args.clients, args.document_clients, args.warmup_s,
                          args.document_kb))              # warm-up: first-use allocations are not growth
        result = asyncio.run(mixed(url, pid, sentences, args.clients, args.document_clients,
                                   args.minutes * 60, args.document_kb))
    server_errors = sum(n for status, n in {**result["string_statuses"], **result["documents"]}.items()
                        if int(status) >= 500)
    met = (result["string_p95_ms"] <= 1000 and server_errors == 0
           and result["rss_end_mb"] <= 1.10 * result["rss_start_mb"])
    emit("soak_service_mixed", result["string_requests"], "string requests", engine=args.engine,
         clients=args.clients, document_clients=args.document_clients, minutes=args.minutes, **result,
         server_errors=server_errors, service_log=str(log),
         target="string p95 <= 1 s while documents run, 0 x 5xx, RSS end within 10% of start", met=met)
    print(f"mixed: {result['string_requests']:,} strings, p50/p95/p99 {result['string_p50_ms']:.0f}/"
          f"{result['string_p95_ms']:.0f}/{result['string_p99_ms']:.0f} ms while documents ran "
          f"({result['documents']}); RSS {result['rss_start_mb']} -> peak {result['rss_peak_mb']} -> "
          f"{result['rss_end_mb']} MB; {'met' if met else 'NOT met'}", file=sys.stderr)
    return 0 if met else 1


async def burst_then_sigterm(url: str, process, sentences: list[str], burst: int) -> dict:
    """`burst` translations in flight, SIGTERM, then every answer and the exit."""
    import httpx

    async with httpx.AsyncClient(timeout=60) as client:
        pending = [asyncio.create_task(client.post(url + "/translate", json={"text": sentences[i % len(sentences)]}))
                   for i in range(burst)]
        await asyncio.sleep(0.2)
        process.send_signal(signal.SIGTERM)
        signalled = time.perf_counter()
        answers = await asyncio.gather(*pending, return_exceptions=True)
    try:
        code = await asyncio.to_thread(process.wait, 30)
    except subprocess.TimeoutExpired:
        code = None                                                  # reported as not met, then killed
    return {"in_flight": burst, "answered_200": sum(getattr(a, "status_code", None) == 200 for a in answers),
            "answers": dict(Counter(str(getattr(a, "status_code", type(a).__name__)) for a in answers)),
            "exit_code": code, "exit_seconds": round(time.perf_counter() - signalled, 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", required=True, help="trained run directory (or a CTranslate2 export)")
    parser.add_argument("--minutes", type=float, default=5.0, help="soak duration (default: %(default)s)")
    parser.add_argument("--warmup-s", type=float, default=30.0, help="mixed load before the first RSS reading")
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients (default: %(default)s)")
    parser.add_argument("--engine", choices=ENGINES, default="keras")
    parser.add_argument("--burst", type=int, default=32, help="requests in flight at SIGTERM (default: %(default)s)")
    parser.add_argument("--mixed", action="store_true", help="documents and strings together (see above)")
    parser.add_argument("--document-clients", type=int, default=2, help="--mixed: clients uploading documents")
    parser.add_argument("--document-kb", type=int, default=260, help="--mixed: each document's size (one line)")
    args = parser.parse_args()
    args.max_wait_ms, args.beam = 10.0, None                      # what running_service passes on
    run = Path(args.run)
    sentences = english_sentences(run, None, 500)
    if args.mixed:
        return run_mixed(args, run, sentences)
    with running_service(run, 64, args, "soak-", extra=["--max-chars", str(MAX_CHARS)], keep_log=True) as service:
        url, process, log = service.url, service.process, service.log
        asyncio.run(soak(url, sentences, args.clients, args.warmup_s))
        rss_start = rss_mb(process.pid)
        result = asyncio.run(soak(url, sentences, args.clients, args.minutes * 60))
        rss_end = rss_mb(process.pid)
        shutdown = asyncio.run(burst_then_sigterm(url, process, sentences, args.burst))   # stops it
    growth = rss_end / rss_start - 1
    server_errors = sum(n for status, n in result["statuses"].items() if status.isdigit() and int(status) >= 500)
    failures = sum(n for status, n in result["statuses"].items()             # dropped connections, bad bodies
                   if not status.isdigit() and status != "413_closed_early")
    met = (growth < 0.10 and server_errors == 0 and failures == 0 and shutdown["answered_200"] == shutdown["in_flight"]
           and shutdown["exit_code"] == 0 and shutdown["exit_seconds"] <= 10)
    emit("soak_service", result["requests"], "requests", engine=args.engine, clients=args.clients,
         minutes=args.minutes, rss_start_mb=round(rss_start), rss_end_mb=round(rss_end),
         rss_growth_pct=round(100 * growth, 1), server_errors=server_errors, client_failures=failures,
         service_log=str(log),
         **{key: round(value, 1) if isinstance(value, float) else value for key, value in result.items()},
         shutdown=shutdown, target="RSS growth < 10%, 0 x 5xx, in-flight answered, exit 0 within 10 s", met=met)
    print(f"soak: {result['requests']:,} requests in {args.minutes:g} min, statuses {result['statuses']}, "
          f"p50/p95/p99 {result['p50_ms']:.0f}/{result['p95_ms']:.0f}/{result['p99_ms']:.0f} ms, RSS "
          f"{rss_start:.0f} -> {rss_end:.0f} MB ({100 * growth:+.1f}%), shutdown {shutdown}, service log {log}; "
          f"{'met' if met else 'NOT met'}", file=sys.stderr)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
