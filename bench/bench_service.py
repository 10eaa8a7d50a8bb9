"""Load test of the translation service: dynamic batching vs --max-batch 1, side by side in one run.

Each mode starts `scripts/serve.py` on 127.0.0.1 (a free port), warms it up, then `--clients` concurrent
clients each send one sentence per request, back to back, for `--seconds`. Figures per mode:
throughput (sentences/s), p50/p95/p99 latency (client side), errors, and the mean decoding batch the
service reported. The clients run in this process, on the same machine as the service.

`--startup N` measures start-up instead: N cold starts of `scripts/serve.py` (of this checkout, or of `--checkout
DIR` to compare another version on the same machine), each the seconds from launch to the first healthy
/health answer, the service's peak RSS then (VmHWM), and whether TensorFlow was loaded; medians.

usage: python bench/bench_service.py --run RUN [--clients 32] [--seconds 30] [--beam N] [--max-batch 64]
                                     [--engine keras|ctranslate2]
       python bench/bench_service.py --run RUN --engine ctranslate2 --startup 5 [--checkout DIR]
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

from common import ROOT, emit  # noqa: E402
from serving import free_port, start_logged, stop_process, wait_until_ready  # noqa: E402

import numpy as np  # noqa: E402
from pipeline.translate import ENGINES  # noqa: E402

FALLBACK = ["I love you.", "Where is the station?", "Tom is my friend.", "It's raining.", "We have to go now.",
            "I don't know what to do.", "Is this your book?", "She is reading a letter.", "Come here!"]


def english_sentences(run: Path, path: str | None, limit: int = 2000) -> list[str]:
    """English side of `path`, or of the run's prepared validation split (<workdir>/prepared/valid.tsv)."""
    from pipeline.rundir import prepared_beside, split_text_file

    source = Path(path) if path else prepared_beside(run.resolve()) / split_text_file("valid")
    if not source.is_file():
        print(f"{source} not found: using {len(FALLBACK)} built-in sentences", file=sys.stderr)
        return FALLBACK
    lines = source.read_text(encoding="utf-8").splitlines()[:limit]
    return [line.split("\t")[0] for line in lines if line.strip()]


@dataclass
class Service:
    """A running `scripts/serve.py`: its process, base URL and log file; `keep_log` keeps the log after it stops."""
    process: subprocess.Popen
    url: str
    log: Path
    keep_log: bool = False


@contextlib.contextmanager
def running_service(run: Path, max_batch: int, args, prefix: str, checkout: Path = ROOT, extra: Sequence[str] = (),
                    keep_log: bool = False) -> Iterator[Service]:
    """`scripts/serve.py` on a free loopback port, with `extra` flags, healthy, for the block; stopped after it
    (SIGTERM, then a kill). Its output goes to a temporary log file (`prefix`...): removed after a block that went
    well unless `keep_log` is set, before or during the block; named on stderr after one that failed."""
    port = free_port()
    command = [sys.executable, str(checkout / "scripts" / "serve.py"), "--run", str(run), "--port", str(port),
               "--max-batch", str(max_batch), "--max-wait-ms", str(args.max_wait_ms), "--timeout-s", "60",
               "--log-level", "warning", "--engine", args.engine] + (["--beam", str(args.beam)] if args.beam else [])
    with tempfile.NamedTemporaryFile(prefix=prefix, suffix=".log", delete=False) as file:
        log = Path(file.name)
    service = Service(start_logged(command + list(extra), log), f"http://127.0.0.1:{port}", log, keep_log)
    try:
        wait_until_ready(service.url + "/health", service.process, log)
        yield service
    except BaseException:
        service.keep_log = True
        print(f"the service's log: {log}", file=sys.stderr)
        raise
    finally:
        stop_process(service.process)
        if not service.keep_log:
            log.unlink()


async def load(url: str, sentences: list[str], clients: int, seconds: float) -> dict:
    """`clients` loops posting one sentence each until `seconds` have passed; latencies and errors."""
    import httpx

    latencies: list[float] = []
    errors: dict[str, int] = {}
    done = 0
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(limits=limits, timeout=120) as client:
        started = time.perf_counter()
        end = started + seconds

        async def one_client(index: int) -> None:
            nonlocal done
            position = index * 97
            while time.perf_counter() < end:
                sentence = sentences[position % len(sentences)]
                position += 1
                sent = time.perf_counter()
                try:
                    response = await client.post(url + "/translate", json={"text": sentence})
                    ok = response.status_code == 200 and len(response.json()["translations"]) == 1
                    reason = str(response.status_code)
                except httpx.HTTPError as exc:
                    ok, reason = False, type(exc).__name__
                if ok:
                    latencies.append(time.perf_counter() - sent)
                    done += 1
                else:
                    errors[reason] = errors.get(reason, 0) + 1

        await asyncio.gather(*(one_client(i) for i in range(clients)))
        elapsed = time.perf_counter() - started
        health = (await client.get(url + "/health")).json()
    ms = np.array(latencies) * 1000.0 if latencies else np.array([float("nan")])
    batching = health["batching"]
    return {"sentences_per_s": done / elapsed, "p50_ms": float(np.percentile(ms, 50)),
            "p95_ms": float(np.percentile(ms, 95)), "p99_ms": float(np.percentile(ms, 99)),
            "requests": done, "errors": sum(errors.values()), "error_kinds": errors, "seconds": elapsed,
            "mean_batch": batching["sentences"] / max(batching["model_calls"], 1),
            "largest_batch": batching["largest_batch"], "beam": health["default_beam"],
            "backend": health["backend"], "engine": health["model"].get("engine"), "config": health["config"]}


def measure(run: Path, sentences: list[str], max_batch: int, args) -> dict:
    with running_service(run, max_batch, args, "bench-service-") as service:
        asyncio.run(load(service.url, sentences, args.clients, args.warmup_s))        # warm-up, not counted
        result = asyncio.run(load(service.url, sentences, args.clients, args.seconds))
        if result["errors"]:
            service.keep_log = True
            print(f"{result['errors']} requests failed; the service's log: {service.log}", file=sys.stderr)
    return result


def tensorflow_loaded(pid: int) -> bool:
    """Whether the process has TensorFlow's shared libraries mapped (Keras on its default backend loads them)."""
    return "/tensorflow/" in Path(f"/proc/{pid}/maps").read_text()


def startup(run: Path, args) -> dict:
    """One cold start: seconds to a healthy /health, then the peak RSS and what is loaded."""
    started = time.perf_counter()
    with running_service(run, args.max_batch, args, "bench-startup-", Path(args.checkout).resolve()) as service:
        seconds = time.perf_counter() - started
        pid = service.process.pid
        status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
        return {"seconds": seconds, "peak_rss_mb": int(status["VmHWM"].split()[0]) / 1024,
                "tensorflow": tensorflow_loaded(pid)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", required=True, help="trained run directory")
    parser.add_argument("--clients", type=int, default=32, help="concurrent clients (default: %(default)s)")
    parser.add_argument("--seconds", type=float, default=30.0, help="measured duration per mode (default: %(default)s)")
    parser.add_argument("--warmup-s", type=float, default=5.0, help="unmeasured load first (default: %(default)s)")
    parser.add_argument("--beam", type=int, help="the service's --beam (default: the run's decode.beam_size)")
    parser.add_argument("--engine", choices=ENGINES, default="keras", help="the service's --engine")
    parser.add_argument("--max-batch", type=int, default=64, help="--max-batch with batching on (default: %(default)s)")
    parser.add_argument("--max-wait-ms", type=float, default=10.0, help="the service's --max-wait-ms")
    parser.add_argument("--sentences", help="file of English sentences (first column); default: the run's "
                                            "prepared valid.tsv")
    parser.add_argument("--startup", type=int, metavar="N", help="measure N cold starts instead of the load test")
    parser.add_argument("--checkout", default=str(ROOT), help="with --startup: the checkout whose scripts/serve.py "
                                                              "starts (default: this one)")
    args = parser.parse_args()
    if args.startup:
        from common import median

        starts = [startup(Path(args.run), args) for _ in range(args.startup)]
        emit("service_startup", round(median(s["seconds"] for s in starts), 2), "s", engine=args.engine,
             checkout=args.checkout, starts=args.startup, peak_rss_mb=round(median(s["peak_rss_mb"] for s in starts)),
             tensorflow_loaded=any(s["tensorflow"] for s in starts), run=str(args.run))
        return 0
    if not 1 <= args.clients <= 256 or not 0 < args.seconds <= 600:
        parser.error("--clients must be 1..256 and --seconds 0..600: the load is bounded")
    run = Path(args.run)
    sentences = english_sentences(run, args.sentences)
    results = {}
    for mode, max_batch in (("batching", args.max_batch), ("max_batch_1", 1)):
        results[mode] = result = measure(run, sentences, max_batch, args)
        emit(f"service_{mode}_throughput", round(result["sentences_per_s"], 1), "sentences/s", run=str(run),
             clients=args.clients, max_batch=max_batch, max_wait_ms=args.max_wait_ms,
             **{key: round(value, 1) if isinstance(value, float) else value
                for key, value in result.items() if key != "sentences_per_s"})
    speedup = results["batching"]["sentences_per_s"] / max(results["max_batch_1"]["sentences_per_s"], 1e-9)
    target = speedup >= 3 and results["batching"]["p95_ms"] < 1000 and not any(r["errors"] for r in results.values())
    emit("service_batching_speedup", round(speedup, 2), "x", clients=args.clients,
         target="batching >= 3x max-batch 1, p95 < 1 s, 0 errors", met=bool(target))
    return 0


if __name__ == "__main__":
    sys.exit(main())
