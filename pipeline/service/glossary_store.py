"""The glossaries the service keeps: an embedded SQLite database (the standard library's `sqlite3`), created on first
use, that survives restarts; `POST/GET/DELETE /glossaries` manage it and `glossary_id` picks one per request.

A stored glossary is its name, its case flag, its direction and its (source, target) entries in upload order; it is
checked by `Glossary` when uploaded (so a bad one is refused then, with the reason) and rebuilt from the database when
first used, then kept in a small cache. Ids are random (128 bits, hex); names are free text within limits.

Directions: a glossary belongs to one direction (`source`/`target`, given at upload, by default the service's only
run's), because its entries are source -> target terms and a file is read for its direction (a TBX entry's `it` and
`en` terms, or a TSV header naming the languages, depend on which is the source). It is used only by requests in
that direction: naming it in a request for another pair is a 400 (`resolve`). Glossaries stored before directions
were recorded are English -> Italian.
"""
from __future__ import annotations

import json
import re
import secrets
import sqlite3
import tempfile
import threading
import time
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

from starlette.concurrency import run_in_threadpool

from pipeline.service.errors import ServiceError
from pipeline.extras import MissingExtra
from pipeline.glossary import Glossary, GlossaryError
from pipeline.language import Direction

ID = re.compile(r"[0-9a-f]{32}")
NAME = re.compile(r"[^\x00-\x1f\x7f-\x9f\ud800-\udfff]{1,100}")     # no C0/C1 controls, no surrogates
MAX_ENTRIES = 20_000            # per glossary
MAX_GLOSSARIES = 1_000          # per service
CACHED = 16                     # glossaries kept built in memory
UPLOAD_SUFFIXES = (".tsv", ".csv", ".tbx", ".txt")
SCHEMA = """CREATE TABLE IF NOT EXISTS glossaries (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, case_sensitive INTEGER NOT NULL, entries INTEGER NOT NULL,
    created TEXT NOT NULL, terms TEXT NOT NULL, source TEXT NOT NULL DEFAULT 'en', target TEXT NOT NULL DEFAULT 'it')"""
COLUMNS = "id, name, case_sensitive, entries, created, terms, source, target"
ADDED_COLUMNS = {"source": "ALTER TABLE glossaries ADD COLUMN source TEXT NOT NULL DEFAULT 'en'",   # databases made
                 "target": "ALTER TABLE glossaries ADD COLUMN target TEXT NOT NULL DEFAULT 'it'"}   # before directions


def check_name(name: Any) -> str:
    if not isinstance(name, str) or len(name) > 100 or not NAME.fullmatch(name.strip() or ""):   # as the schema says
        raise ServiceError(422, "'name' must be 1 to 100 characters without control characters or surrogates")
    return name.strip()


def check_id(glossary_id: Any) -> str:
    if not isinstance(glossary_id, str) or not ID.fullmatch(glossary_id):
        raise ServiceError(422, "'glossary_id' must be a glossary id: 32 lower-case hexadecimal digits")
    return glossary_id


def entries_from_json(entries: Any) -> list[tuple[str, str]]:
    """`{"source term": "target term", ...}` or `[["source term", "target term"], ...]` as pairs; anything else is a
    422."""
    if isinstance(entries, dict):
        pairs = list(entries.items())
    elif isinstance(entries, list) and all(isinstance(e, list) and len(e) == 2 for e in entries):
        pairs = [tuple(e) for e in entries]
    else:
        raise ServiceError(422, "'entries' must be an object {source term: target term} or a list of [source term, "
                                "target term] pairs")
    if not all(isinstance(side, str) for pair in pairs for side in pair):
        raise ServiceError(422, "'entries': every term must be a string")
    return pairs


def check_size(entries: int) -> None:
    """413 for a glossary over `MAX_ENTRIES` entries."""
    if entries > MAX_ENTRIES:
        raise ServiceError(413, f"{entries:,} entries; a glossary holds at most {MAX_ENTRIES:,}")


def checked_glossary(pairs: list[tuple[str, str]], case_sensitive: bool, name: str = "glossary",
                     direction: Direction = Direction()) -> Glossary:
    """`Glossary` of the (source, target) pairs for `direction`, or a 422 with the reason (an empty side,
    conflicting targets, too many entries)."""
    if not pairs:
        raise ServiceError(422, "a glossary needs at least one entry")
    check_size(len(pairs))
    try:
        return Glossary(pairs, case_sensitive=case_sensitive, name=name, direction=direction)
    except GlossaryError as exc:
        raise ServiceError(422, str(exc)) from None


def glossary_from_file(filename: str, data: bytes, case_sensitive: bool,
                       direction: Direction = Direction()) -> Glossary:
    """A glossary from an uploaded .tsv/.csv/.tbx file, read by `Glossary.load` for `direction` (a TBX entry's
    source-language terms to its target-language term; a TSV/CSV header naming the languages the other way round
    swaps the columns); errors name the upload."""
    suffix = Path(filename or "").suffix.lower()
    if suffix not in UPLOAD_SUFFIXES:
        raise ServiceError(415, f"glossary file {filename!r}: expected a .tsv, .csv or .tbx file")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"upload{suffix}"
        path.write_bytes(data)
        try:
            glossary = Glossary.load(path, case_sensitive, direction=direction)
        except GlossaryError as exc:
            raise ServiceError(422, str(exc).replace(str(path), repr(filename))) from None
        except MissingExtra as exc:                  # TBX without translate-toolkit: say what the server lacks
            raise ServiceError(415, f"glossary file {filename!r}: this service cannot read {suffix} files ({exc}); "
                                    "send a .tsv or .csv") from None
    check_size(len(glossary))
    return glossary


class GlossaryStore:
    """The service's glossaries in SQLite at `path` (":memory:": kept only while the process runs)."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._cache: OrderedDict[str, Glossary] = OrderedDict()

    def check(self) -> None:
        """Refuse to start with a database that cannot be created or opened (one line naming the file)."""
        try:
            with self._lock:
                self._open()
        except (sqlite3.Error, OSError) as exc:
            raise ValueError(f"glossary database {self.path}: cannot be opened ({exc}); give --glossary-db a writable "
                             "path") from None

    @contextmanager
    def _database(self) -> Iterator[sqlite3.Connection]:
        """The connection (opened on first use), under the lock; a storage failure is a 503: the server's, not the
        client's."""
        with self._lock:
            try:
                yield self._open()
            except (sqlite3.Error, OSError) as exc:
                raise ServiceError(503, f"the glossary store is unavailable ({type(exc).__name__})") from None

    def _open(self) -> sqlite3.Connection:
        if self._connection is None:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            connection.execute("PRAGMA journal_mode=WAL" if self.path != ":memory:" else "PRAGMA journal_mode=MEMORY")
            connection.execute(SCHEMA)
            present = {row[1] for row in connection.execute("PRAGMA table_info(glossaries)")}
            for column, statement in ADDED_COLUMNS.items():
                if column not in present:
                    connection.execute(statement)
            self._connection = connection
        return self._connection

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def add(self, name: str, glossary: Glossary) -> dict[str, Any]:
        """Store a checked glossary, with its direction, under a new id; returns its summary."""
        terms = [(term.source, term.target) for term in glossary.terms.values()]
        row = (secrets.token_hex(16), check_name(name), int(glossary.case_sensitive), len(terms),
               time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), json.dumps(terms, ensure_ascii=False),
               glossary.direction.source, glossary.direction.target)
        with self._database() as db:
            (count,) = db.execute("SELECT COUNT(*) FROM glossaries").fetchone()
            if count >= MAX_GLOSSARIES:
                raise ServiceError(409, f"the service holds {MAX_GLOSSARIES:,} glossaries; delete one first")
            db.execute(f"INSERT INTO glossaries ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)
            self._remember(row[0], glossary)
        return summary(row)

    def list(self) -> list[dict[str, Any]]:
        with self._database() as db:
            rows = db.execute(f"SELECT {COLUMNS} FROM glossaries ORDER BY rowid").fetchall()
        return [summary(row) for row in rows]

    def get(self, glossary_id: str) -> dict[str, Any]:
        """A glossary's summary and its `terms` ([source, target] pairs); 404 when there is none with this id."""
        row = self._row(glossary_id)
        return {**summary(row), "terms": json.loads(row[5])}

    def glossary(self, glossary_id: str) -> Glossary:
        """The `Glossary` of an id, built once and cached; 404 when there is none."""
        with self._lock:
            cached = self._cache.get(glossary_id)
            if cached is not None:
                self._cache.move_to_end(glossary_id)
                return cached
        row = self._row(glossary_id)
        built = Glossary([tuple(pair) for pair in json.loads(row[5])], case_sensitive=bool(row[2]), name=row[1],
                         direction=Direction(row[6], row[7]))
        with self._lock:
            self._remember(glossary_id, built)
        return built

    def delete(self, glossary_id: str) -> None:
        check_id(glossary_id)
        with self._database() as db:
            deleted = db.execute("DELETE FROM glossaries WHERE id = ?", (glossary_id,)).rowcount
            self._cache.pop(glossary_id, None)
        if not deleted:
            raise ServiceError(404, f"no glossary with id {glossary_id}")

    def _row(self, glossary_id: str) -> tuple:
        check_id(glossary_id)
        with self._database() as db:
            row = db.execute(f"SELECT {COLUMNS} FROM glossaries WHERE id = ?", (glossary_id,)).fetchone()
        if row is None:
            raise ServiceError(404, f"no glossary with id {glossary_id}")
        return row

    def _remember(self, glossary_id: str, glossary: Glossary) -> None:
        self._cache[glossary_id] = glossary
        while len(self._cache) > CACHED:
            self._cache.popitem(last=False)


def summary(row: Iterable[Any]) -> dict[str, Any]:
    glossary_id, name, case_sensitive, entries, created, _, source, target = row
    return {"id": glossary_id, "name": name, "case_sensitive": bool(case_sensitive), "entries": entries,
            "created": created, "source": source, "target": target}


async def resolved(store: GlossaryStore, glossary_id: Any = None, inline: Any = None,
                   direction: Direction = Direction()) -> Glossary | None:
    """`resolve`, in a worker thread where a glossary is named: building one (a stored one's first use, or inline
    terms, up to 20,000) is work the event loop must not wait on."""
    if glossary_id is None and inline is None:
        return None
    return await run_in_threadpool(resolve, store, glossary_id, inline, direction)


def resolve(store: GlossaryStore, glossary_id: Any = None, inline: Any = None,
            direction: Direction = Direction()) -> Glossary | None:
    """The glossary a translation request in `direction` names: `glossary_id` (stored) or `glossary` (inline
    entries, {source term: target term} of `direction`), not both. A stored glossary of another direction is a 400
    naming both."""
    if glossary_id is not None and inline is not None:
        raise ServiceError(422, "give 'glossary_id' or 'glossary', not both")
    if inline is not None:
        return checked_glossary(entries_from_json(inline), False, "request glossary", direction)
    if glossary_id is not None:
        glossary = store.glossary(check_id(glossary_id))
        if glossary.direction != direction:
            raise ServiceError(400, f"glossary {glossary_id} is {glossary.direction.source} -> "
                                    f"{glossary.direction.target}, and this request translates {direction.source} -> "
                                    f"{direction.target}")
        return glossary
    return None
