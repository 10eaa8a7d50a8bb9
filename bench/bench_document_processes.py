"""Documents in processes of their own, against documents in the service's threads, side by side in each repeat:
how long one `/translate` of a sentence waits while a large document is read and written, and what a small
document costs. A stand-in engine (upper-casing, 2 ms a batch with the interpreter released, as a model's kernels
do), so the figures are the service's own: the interpreter a document's Python work holds in a thread, and the
fork, pipes and pickles of a process.

usage: python bench/bench_document_processes.py [--repeats 3] [--megabytes 4] [--small 40]

The large document is a Word file of `--megabytes` of XML in short paragraphs (about 4 s to read and write per MB
on the 2-core CI machine); while it is in flight, one client sends one-sentence `/translate`s back to back. The
small ones are 40 two-paragraph .txt files, one after the other. Medians over the repeats; the ratio is threads
over processes.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time

import httpx
from common import ROOT, emit, median
from serving import served_in_thread

sys.path.insert(0, str(ROOT / "tests"))
from stand_ins import new_docx, rezipped  # noqa: E402

from pipeline.config import Config  # noqa: E402
from pipeline.service import ServiceSettings, create_app  # noqa: E402


class StandIn:
    def __init__(self):
        self.config = Config()

    def translate(self, sentences, beam=None, batch_size=None, glossary=None):
        time.sleep(0.002)
        return [sentence.upper() for sentence in sentences]


def large_docx(megabytes: float) -> bytes:
    paragraph = b"<w:p><w:r><w:t>Where is the station? I love you.</w:t></w:r></w:p>"

    def padded(name: str, data: bytes) -> bytes:
        body = paragraph * int(megabytes * 1_000_000 / len(paragraph))
        return data.replace(b"<w:body>", b"<w:body>" + body, 1) if name == "word/document.xml" else data
    return rezipped(new_docx(), padded)


def one_mode(processes: bool, document: bytes, small: int) -> dict:
    settings = ServiceSettings(beam=1, max_wait_ms=0, document_processes=processes, max_document_xml_bytes=10**9)
    with served_in_thread(create_app(StandIn(), settings)) as url, httpx.Client(base_url=url, timeout=600) as client:
        client.post("/translate_document", files={"file": ("warm.txt", b"Hi.")}).raise_for_status()
        started = time.perf_counter()
        for _ in range(small):
            client.post("/translate_document", files={"file": ("a.txt", b"Good morning.\n\nWhere is it?\n")}
                        ).raise_for_status()
        per_small = (time.perf_counter() - started) / small
        answer: dict = {}

        def send() -> None:
            with httpx.Client(base_url=url, timeout=600) as own:
                answer["response"] = own.post("/translate_document", files={"file": ("big.docx", document)})
        sender = threading.Thread(target=send)
        began = time.perf_counter()
        sender.start()
        latencies = []
        while sender.is_alive():
            sent = time.perf_counter()
            assert client.post("/translate", json={"text": "Good morning."}).status_code == 200
            latencies.append(time.perf_counter() - sent)
        sender.join()
        answer["response"].raise_for_status()
        return {"small_ms": per_small * 1000, "large_s": time.perf_counter() - began,
                "p50_ms": statistics.median(latencies) * 1000,
                "p95_ms": statistics.quantiles(latencies, n=20)[-1] * 1000 if len(latencies) > 1 else latencies[0],
                "max_ms": max(latencies) * 1000, "requests": len(latencies)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--megabytes", type=float, default=4.0, help="the large document's XML (default: 4)")
    parser.add_argument("--small", type=int, default=40, help="small documents per repeat (default: 40)")
    args = parser.parse_args()
    document = large_docx(args.megabytes)
    runs: dict[str, list[dict]] = {"processes": [], "threads": []}
    for repeat in range(args.repeats):
        for mode in ("processes", "threads"):
            runs[mode].append(one_mode(mode == "processes", document, args.small))
            print(f"repeat {repeat + 1}/{args.repeats} {mode}: " + ", ".join(
                f"{key} {value:.1f}" for key, value in runs[mode][-1].items()), file=sys.stderr, flush=True)
    summary = {}
    for mode, results in runs.items():
        for key in ("small_ms", "large_s", "p50_ms", "p95_ms", "max_ms"):
            summary[(mode, key)] = median(result[key] for result in results)
            emit(f"documents_{mode}_{key}", round(summary[(mode, key)], 2), key.rsplit("_", 1)[1],
                 megabytes=args.megabytes, repeats=args.repeats)
    for key in ("p50_ms", "p95_ms", "max_ms", "small_ms", "large_s"):
        ratio = summary[("threads", key)] / summary[("processes", key)]
        emit(f"documents_threads_over_processes_{key}", round(ratio, 2), "x")
    print(f"documents in processes: /translate p50 {summary[('processes', 'p50_ms')]:.1f} ms, p95 "
          f"{summary[('processes', 'p95_ms')]:.1f} ms during a {args.megabytes:g} MB document (threads: "
          f"{summary[('threads', 'p50_ms')]:.1f} / {summary[('threads', 'p95_ms')]:.1f} ms); a small document "
          f"{summary[('processes', 'small_ms')]:.1f} ms (threads {summary[('threads', 'small_ms')]:.1f} ms)",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
