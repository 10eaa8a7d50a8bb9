"""LibreTranslate itself as the peer: the same model, the same clients and the same loopback load, one server at a time.

Not part of the test suite. Make LibreTranslate's virtual environment once, outside the repository (no torch:
LibreTranslate 1.9 splits sentences with MiniSBD or spaCy):

    python3 -m venv /tmp/lt-venv && /tmp/lt-venv/bin/pip install libretranslate spacy

then, from the repository root with the project's environment:

    python bench/bench_libretranslate.py --run runs/terms-broad60/run --lt-python /tmp/lt-venv/bin/python

It exports the run as an Argos package (`pipeline.export.argos`) and installs it into a throw-away Argos home, so
that LibreTranslate serves exactly our model (CTranslate2, beam 4, its default), and serves the same run with
`scripts/serve.py --engine ctranslate2 --beam 4`. Offline: LibreTranslate starts with `--load-only en,it` and
finds the package installed, so it downloads nothing; its default sentence splitter, MiniSBD, would download its
English model from GitHub on first use, so it splits with spaCy's rule-based sentencizer instead
(`ARGOS_CHUNK_TYPE=SPACY`, a blank English pipeline saved in the package, as bench/argos_check.py does).

Each server in turn gets: `libretranslatepy` (translate, languages), `deep-translator`'s `LibreTranslator`, a curl
upload of a `.docx` to `/translate_file` and the download of its URL, the same upload for `.srt`, `.po` and `.md`,
and a bounded load: N clients (1, 8, 32), each sending one validation sentence per `POST /translate` (JSON, as
LibreTranslate's clients do) back to back for `--seconds`. Prints JSON lines, then a Markdown table on stderr.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from common import ROOT, emit
from serving import free_port, log_tail, start_logged, stop_process, wait_until_ready

INSTALL = r"""
import json, sys, zipfile
from pathlib import Path
import argostranslate.package as package
package.install_from_path(sys.argv[1])
with zipfile.ZipFile(sys.argv[1]) as archive:
    folder = Path(package.settings.package_data_dir) / archive.namelist()[0].split("/")[0]
import spacy
spacy.blank("en").to_disk(folder / "spacy")
print(json.dumps({"installed": str(folder)}))
"""


def sample_docx() -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Printing a document", level=1)
    paragraph = document.add_paragraph("Choose ")
    paragraph.add_run("File - Print").bold = True
    paragraph.add_run(" to open the print dialog. The printer settings are saved with the document.")
    document.add_paragraph("You can print several pages on one sheet of paper.", style="List Bullet")
    document.add_paragraph("Select the pages you want to print and the number of copies.", style="List Bullet")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Option", "Meaning"
    table.cell(1, 0).text, table.cell(1, 1).text = "Copies", "How many copies are printed."
    document.sections[0].header.paragraphs[0].text = "User guide"
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def docx_summary(data: bytes) -> dict:
    import docx

    document = docx.Document(io.BytesIO(data))
    return {"paragraphs": [p.text for p in document.paragraphs],
            "bold_runs": [r.text for p in document.paragraphs for r in p.runs if r.bold],
            "styles": [p.style.name for p in document.paragraphs],
            "table": [[c.text for c in row.cells] for row in document.tables[0].rows] if document.tables else [],
            "header": document.sections[0].header.paragraphs[0].text}


def curl_file(base: str, path: Path, out: Path) -> dict:
    """LibreTranslate's documented file flow with curl: upload, then GET the URL it answers."""
    curl = shutil.which("curl")
    started = time.perf_counter()
    answer = subprocess.run([curl, "-sS", "--max-time", "300", "-F", f"file=@{path}", "-F", "source=en", "-F",
                             "target=it", base + "/translate_file"], capture_output=True, text=True)
    try:
        body = json.loads(answer.stdout)
    except ValueError:
        return {"ok": False, "answer": answer.stdout[:200] or answer.stderr[:200]}
    if "translatedFileUrl" not in body:
        return {"ok": False, "answer": body}
    fetched = subprocess.run([curl, "-sS", "--fail", "--max-time", "60", "-o", str(out), body["translatedFileUrl"]],
                             capture_output=True, text=True)
    return {"ok": fetched.returncode == 0 and out.exists(), "seconds": round(time.perf_counter() - started, 2),
            "url": body["translatedFileUrl"]}


def client_checks(base: str, sentence: str) -> dict:
    from deep_translator import LibreTranslator
    from libretranslatepy import LibreTranslateAPI

    results = {}
    try:
        api = LibreTranslateAPI(base + "/")
        text = api.translate(sentence, "en", "it")
        results["libretranslatepy"] = bool(text) and text != sentence and any(
            language["code"] == "en" for language in api.languages())
    except Exception as exc:                      # noqa: BLE001 - a client failing is the measurement
        results["libretranslatepy"] = f"failed: {exc}"[:200]
    try:
        # deep-translator insists on a key even for a server without keys; both servers ignore it then
        text = LibreTranslator(source="en", target="it", custom_url=base + "/", api_key="unused").translate(sentence)
        results["deep_translator"] = bool(text) and text != sentence
    except Exception as exc:                      # noqa: BLE001
        results["deep_translator"] = f"failed: {exc}"[:200]
    return results


def load(base: str, sentences: list[str], clients: int, seconds: float) -> dict:
    import httpx

    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client(offset: int) -> None:
        with httpx.Client(timeout=120) as http:
            index = offset
            while time.monotonic() < stop:
                sentence = sentences[index % len(sentences)]
                index += clients
                started = time.perf_counter()
                try:
                    response = http.post(base + "/translate", json={"q": sentence, "source": "en", "target": "it"})
                    ok = response.status_code == 200 and "translatedText" in response.json()
                except httpx.HTTPError:
                    ok = False
                elapsed = time.perf_counter() - started
                with lock:
                    if ok:
                        latencies.append(elapsed)
                    else:
                        errors[0] += 1

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(offset,)) for offset in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - started
    ordered = sorted(latencies)
    return {"requests_per_s": round(len(latencies) / wall, 1), "requests": len(latencies), "errors": errors[0],
            "p50_ms": round(1000 * statistics.median(ordered), 1) if ordered else None,
            "p95_ms": round(1000 * ordered[int(0.95 * (len(ordered) - 1))], 1) if ordered else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", required=True, help="a training run with one joint SentencePiece vocabulary")
    parser.add_argument("--lt-python", required=True, help="python of a virtual environment with libretranslate")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--out", default="bench/out/libretranslate", help="where the translated files go")
    parser.add_argument("--only", choices=("LibreTranslate", "ours"), help="measure only these servers")
    parser.add_argument("--our-flags", default="", help="more scripts/serve.py flags, e.g. '--max-wait-ms 0'")
    args = parser.parse_args()

    from pipeline.evaluation import load_split_set, prepared_split_file
    from pipeline.export.argos import export_argos

    sentences = list(dict.fromkeys(load_split_set(prepared_split_file(Path(args.run), "valid")).sources))[:500]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    documents = {"guide.docx": sample_docx()}
    for name in ("talk.srt", "app.po", "guide.md"):
        documents[name] = (ROOT / "tests" / "data" / "documents" / name).read_bytes()
    for name, data in documents.items():
        (out / f"source-{name}").write_bytes(data)
    rows = {}
    with tempfile.TemporaryDirectory(prefix="lt-peer-") as scratch:
        home = Path(scratch) / "home"
        package = export_argos(args.run, Path(scratch) / "package")
        env = {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(home / "data"),
               "XDG_CACHE_HOME": str(home / "cache"), "XDG_CONFIG_HOME": str(home / "config"),
               "ARGOS_PACKAGES_DIR": str(home / "packages"), "ARGOS_CHUNK_TYPE": "SPACY", "PYTHONPATH": ""}
        installed = subprocess.run([args.lt_python, "-c", INSTALL, str(package)], env=env, capture_output=True,
                                   text=True, timeout=600)
        if installed.returncode:
            sys.exit(f"installing the package into LibreTranslate's Argos failed:\n{installed.stderr[-3000:]}")
        lt_port, our_port = free_port(), free_port()
        servers = {
            "LibreTranslate": ([str(Path(args.lt_python).parent / "libretranslate"), "--host", "127.0.0.1",
                                "--port", str(lt_port), "--load-only", "en,it"], env, lt_port, "/languages"),
            # Argos's CTranslate2 default is one worker on every core (intra_threads 0), which a second busy
            # process (here the load generator) slows down badly on 2 cores; ours is one single-threaded worker per
            # core. The same LibreTranslate with ours:
            "LibreTranslate, 2 workers x 1 thread": (
                [str(Path(args.lt_python).parent / "libretranslate"), "--host", "127.0.0.1", "--port", str(lt_port),
                 "--load-only", "en,it"], {**env, "ARGOS_INTER_THREADS": str(os.cpu_count() or 2),
                                           "ARGOS_INTRA_THREADS": "1"}, lt_port, "/languages"),
            "ours": ([sys.executable, str(ROOT / "scripts" / "serve.py"), "--run", args.run, "--engine", "ctranslate2",
                      "--beam", "4", "--port", str(our_port), "--log-level", "warning", "--max-sentences", "128",
                      *args.our_flags.split()],
                     {**os.environ, "XDG_DATA_HOME": str(Path(scratch) / "ours")}, our_port, "/health"),
        }
        for name, (command, server_env, port, ready) in servers.items():
            if args.only and not name.startswith(args.only):
                continue
            base = f"http://127.0.0.1:{port}"
            log = Path(scratch) / f"{name}.log"
            process = start_logged(command, log, env=server_env, cwd=ROOT)
            startup = None
            try:
                startup = wait_until_ready(base + ready, process, log, 600)    # its error ends with the log
                row = {"startup_s": round(startup, 1), "clients": client_checks(base, sentences[0]), "files": {}}
                for document, data in documents.items():
                    saved = out / f"{name.split(',')[0].replace(' ', '-')}-{document}"
                    saved.unlink(missing_ok=True)
                    row["files"][document] = curl_file(base, out / f"source-{document}", saved)
                if row["files"]["guide.docx"].get("ok"):
                    row["docx"] = docx_summary((out / f"{name.split(',')[0].replace(' ', '-')}-guide.docx").read_bytes())
                load(base, sentences, 4, 3)                                      # warm up
                row["load"] = {clients: load(base, sentences, clients, args.seconds) for clients in args.clients}
                rows[name] = row
                emit(f"peer_{name}", row["load"][args.clients[-1]]["requests_per_s"], "requests/s",
                     **{key: value for key, value in row.items()})
            finally:
                stop_process(process, 30)
                if startup is not None and name not in rows:
                    print(log_tail(log), file=sys.stderr)
    print("\n| | " + " | ".join(rows) + " |\n| --- | " + " | ".join("---" for _ in rows) + " |", file=sys.stderr)
    for clients in args.clients:
        print(f"| {clients} client{'s' if clients > 1 else ''}: requests/s, p95 | " + " | ".join(
            f"{row['load'][clients]['requests_per_s']}, {row['load'][clients]['p95_ms']:.0f} ms" for row in rows.values())
            + " |", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
