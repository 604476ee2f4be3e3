"""The on-disk index cache: build the catalog index once, open it in a second.

A built index is one SQLite file (the BM25 tables, the products as columns,
the clue index's postings) plus a small JSON manifest beside it.  Its name is
a key made of the catalog file's content hash, `INDEX_FORMAT`, a fingerprint
of the code that shapes the index (with the meaning model's release) and the
tunables that do; so a catalog edited in place, a new release of the card
rules or of the meaning model, or another `max_field_chars` simply looks for
another file.  A file whose manifest does
not match (wrong key, wrong size: truncated, half written) is never opened;
one whose SHA-256 does not match (corrupt) is read while the checksum is
computed, and what was read is dropped: either way the index is rebuilt and
the entry replaced.  No pickle: SQLite tables and JSON only.

Hashing the catalog is the one step of a warm start that needs the whole file
(1.7 s of a million rows), so it need not come first: a manifest records the
catalog file's size, modification time and inode, and when they still match
(`IndexCache.guess`) the index is loaded while the catalog is hashed beside it;
the load is kept only if the hash then agrees (a catalog rewritten with its old
size and time is caught there, and rebuilt).

Location: `AGENT_INDEX_CACHE` (a directory; `off` disables the cache), else
`$XDG_CACHE_HOME/techjam-shopper/index`, else `~/.cache/techjam-shopper/index`.
"""
from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
import logging
import mmap
import os
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from contest.paths import INDEX_CACHE_ENV

log = logging.getLogger(__name__)

# Bump when the layout of the cache file changes.
# 2: the clue index's postings stored, no clue_words table; 3: products as id arrays; 4: the card values' words,
# each product's store; 5: the products' meaning vectors.
INDEX_FORMAT = 5
# Tunables read while building (the others are applied at query or load time).
INDEX_TUNABLES = ("max_field_chars",)
OFF_VALUES = frozenset({"off", "0", "no", "false", "none"})


def default_cache_dir(env: Mapping[str, str] | None = None) -> Path | None:
    """Where built indexes live, or None when `AGENT_INDEX_CACHE=off`."""
    env = os.environ if env is None else env
    raw = env.get(INDEX_CACHE_ENV, "").strip()
    if raw.lower() in OFF_VALUES:
        return None
    if raw:
        return Path(raw).expanduser()
    base = env.get("XDG_CACHE_HOME", "").strip()
    return (Path(base) if base else Path.home() / ".cache") / "techjam-shopper" / "index"


HASH_CHUNK_BYTES = 16 << 20


def file_sha256(path: Path, chunk: int = HASH_CHUNK_BYTES) -> str:
    """SHA-256 of a file, read in large chunks.  File reads and hashlib release the GIL while they
    work, but a thread hashing beside a busy one waits for the GIL after each of them (up to the
    switch interval): with 256 KiB chunks a 1 GB file would wait 8,000 times."""
    h = hashlib.sha256()
    # An anonymous map, not a bytearray: closing it gives its pages back to the system (a freed
    # 16 MB bytearray stayed in the process's RSS, in a thread's malloc arena).
    with mmap.mmap(-1, max(1, chunk)) as buf, memoryview(buf) as view, open(path, "rb", buffering=0) as f:
        while n := f.readinto(view):
            h.update(view[:n])
    return h.hexdigest()


def file_stat(path: Path) -> list[int]:
    """What changes when a file is rewritten, short of its content: size, modification time, inode."""
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def index_code() -> tuple[str, ...]:
    """The modules whose code decides what the index holds: every module of this package and, by
    their imports, the contest rules and grounding modules they read (found by reading the source, so
    a module that starts shaping the index joins the key without a list to keep).  The settings
    module is left out: the tunables that shape the index are keyed by value (`INDEX_TUNABLES`)."""
    package = Path(__file__).resolve().parent
    todo = [f"{__package__}.{p.stem}" for p in sorted(package.glob("*.py")) if p.stem != "__init__"]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += sorted(_imported(name) - seen)
    return tuple(sorted(seen))


def _imported(name: str) -> set[str]:
    """The index, contest and grounding modules a module imports."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.origin:
        return set()
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    keep = (f"{__package__}.", "contest.", "grounding.")
    return {m for m in found if m.startswith(keep) and _is_module(m)}


def _is_module(name: str) -> bool:
    """A module of its own (not a package, not a name imported from a module)."""
    try:
        spec = importlib.util.find_spec(name)
    except ModuleNotFoundError:
        return False
    origin = str(spec.origin) if spec is not None and spec.origin else ""
    return origin.endswith(".py") and not origin.endswith("__init__.py")


def code_fingerprint() -> str:
    """SHA-256 over the source of the modules that shape the index (`index_code()`) and the meaning model's
    release (`meanings.model_identity`)."""
    from starter.index.meanings import model_identity
    h = hashlib.sha256(model_identity().encode())
    for name in index_code():
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
        h.update(name.encode())
        h.update(Path(origin).read_bytes() if origin and Path(origin).is_file() else b"?")
    return h.hexdigest()


@dataclass(frozen=True)
class CacheKey:
    """What a cached index was built from."""

    catalog_sha256: str
    catalog_bytes: int
    code: str
    tunables: tuple[tuple[str, object], ...]
    format: int = INDEX_FORMAT

    @property
    def digest(self) -> str:
        blob = json.dumps([self.format, self.catalog_sha256, self.catalog_bytes, self.code,
                           [list(t) for t in self.tunables]], sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()

    def as_dict(self) -> dict:
        return {"format": self.format, "catalog_sha256": self.catalog_sha256, "catalog_bytes": self.catalog_bytes,
                "code": self.code, "tunables": [list(t) for t in self.tunables], "digest": self.digest}


@dataclass
class OpenedIndex:
    """A cached index whose size and manifest match, opened read-only while its checksum is verified
    in a second thread: the caller loads from it meanwhile, and uses what it loaded only if
    `verified()` (a million-row index is a 1.1 GB file, about a second of hashing)."""

    db: sqlite3.Connection
    manifest: dict
    path: Path
    _digest: list[str | BaseException] = field(default_factory=list)
    _thread: threading.Thread | None = None

    def start(self) -> "OpenedIndex":
        def work() -> None:
            try:
                self._digest.append(file_sha256(self.path))
            except BaseException as exc:   # reported by verified()
                self._digest.append(exc)
        self._thread = threading.Thread(target=work, name="index-cache-checksum", daemon=True)
        self._thread.start()
        return self

    def verified(self) -> bool:
        """Whether the file's SHA-256 is the manifest's; when not, the connection is closed and why is
        logged (the caller then rebuilds)."""
        if self._thread is not None:
            self._thread.join()
        got = self._digest[0] if self._digest else None
        if isinstance(got, str) and got == self.manifest.get("db_sha256"):
            return True
        why = "its file's checksum does not match (corrupt?)" if isinstance(got, str) else \
            f"it cannot be read ({got.__class__.__name__}: {got})"
        log.warning("index cache %s not used: %s; rebuilding", self.path, why)
        self.db.close()
        return False


class IndexCache:
    """One directory of built indexes."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "IndexCache | None":
        """The cache `env` (default: the process environment) names, or None when it is off."""
        d = default_cache_dir(env)
        return cls(d) if d is not None else None

    def key(self, catalog: Path, cfg: object, catalog_sha256: str | None = None) -> CacheKey:
        """The key of `catalog`'s index (`catalog_sha256`: its hash when already computed)."""
        return CacheKey(catalog_sha256=catalog_sha256 or file_sha256(catalog), catalog_bytes=catalog.stat().st_size,
                        code=code_fingerprint(), tunables=tuple((n, getattr(cfg, n)) for n in INDEX_TUNABLES))

    def guess(self, catalog: Path, cfg: object) -> CacheKey | None:
        """The key of a stored index built from this catalog path whose recorded size, modification
        time and inode the file still has, for this code and these tunables: probably the key, to be
        confirmed by the catalog's hash (None when there is no such index)."""
        try:
            target, stat = str(catalog.resolve()), file_stat(catalog)
            manifests = sorted(self.directory.glob("index-*.json"))
        except OSError:
            return None
        for path in manifests:
            try:
                manifest = json.loads(path.read_text(encoding="utf-8"))
                if manifest.get("catalog") != target or manifest.get("catalog_stat") != stat:
                    continue
                # This code's key for the catalog, were its hash the recorded one: the same key or none.
                key = self.key(catalog, cfg, str(manifest["key"]["catalog_sha256"]))
                if key.as_dict() == manifest["key"]:
                    return key
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                continue
        return None

    def paths(self, key: CacheKey) -> tuple[Path, Path]:
        stem = self.directory / f"index-{key.digest[:32]}"
        return stem.with_suffix(".sqlite"), stem.with_suffix(".json")

    def open(self, key: CacheKey) -> OpenedIndex | None:
        """The cached index for `key`, its checksum being verified (`OpenedIndex.verified`), or None."""
        db_path, manifest_path = self.paths(key)
        if not manifest_path.is_file() and not db_path.is_file():
            return None
        why = None
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            if not isinstance(manifest, dict) or manifest.get("key") != key.as_dict():
                why = "its manifest is for another catalog, code or format"
            elif db_path.stat().st_size != manifest.get("db_bytes"):
                why = "its file has the wrong size (truncated?)"
        except (OSError, ValueError) as exc:
            why = f"it cannot be read ({exc.__class__.__name__}: {exc})"
        if why is None:
            try:
                db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, check_same_thread=False)
                # No memory map: SQLite reads pages through the OS page cache, which is shared and
                # reclaimable; mapped pages would count as this process's memory (250k rows, 200
                # sessions: peak RSS 1,110 MB unmapped against 1,331 MB mapped, same latency).
                db.execute("SELECT COUNT(*) FROM product_arrays").fetchone()   # the schema is there (cheap)
                return OpenedIndex(db, manifest, db_path).start()
            except sqlite3.Error as exc:
                why = f"SQLite refused it ({exc})"
        log.warning("index cache %s not used: %s; rebuilding", db_path, why)
        return None

    def writable_path(self, key: CacheKey) -> Path | None:
        """A fresh temporary file to build into, or None when the directory is not writable."""
        db_path, _ = self.paths(key)
        tmp = db_path.with_name(f"{db_path.stem}.{os.getpid()}.tmp")
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            tmp.unlink(missing_ok=True)
            return tmp
        except OSError as exc:
            log.warning("index cache %s is not writable (%s); the index is built in memory", self.directory, exc)
            return None

    def publish(self, tmp: Path, key: CacheKey, catalog: Path, extra: dict) -> Path | None:
        """Move a finished build into place (file, then manifest: a reader never sees a half),
        remove entries built from older versions of the same catalog path; the final path."""
        db_path, manifest_path = self.paths(key)
        try:
            manifest = {"key": key.as_dict(), "catalog": str(catalog.resolve()), "catalog_stat": file_stat(catalog),
                        "db_bytes": tmp.stat().st_size, "db_sha256": file_sha256(tmp), **extra}
            os.replace(tmp, db_path)
            self._write_manifest(manifest_path, manifest)
        except OSError as exc:
            log.warning("index cache %s: could not store the index (%s)", self.directory, exc)
            tmp.unlink(missing_ok=True)
            return None
        self._prune(catalog, keep=manifest_path)
        return db_path

    def restamp(self, key: CacheKey, catalog: Path) -> None:
        """Record the catalog file's current size, time and inode in the manifest of `key`'s index,
        which its hash has just matched (a copied or touched catalog), so the next start can `guess`."""
        _, manifest_path = self.paths(key)
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            if manifest.get("catalog") != str(catalog.resolve()) or manifest.get("catalog_stat") == file_stat(catalog):
                return
            manifest["catalog_stat"] = file_stat(catalog)
            self._write_manifest(manifest_path, manifest)
        except (OSError, ValueError, AttributeError) as exc:
            log.debug("index cache %s: manifest not restamped (%s)", manifest_path, exc)

    @staticmethod
    def _write_manifest(path: Path, manifest: dict) -> None:
        """Write a manifest whole or not at all (a reader never sees a half)."""
        part = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        part.write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(part, path)

    def _prune(self, catalog: Path, keep: Path) -> None:
        """Drop stale entries: other builds of this catalog path (the catalog changed, or the code
        did) and builds of catalog files that no longer exist."""
        target = str(catalog.resolve())
        for other in sorted(self.directory.glob("index-*.json")):
            if other == keep:
                continue
            try:
                built_from = json.loads(other.read_text(encoding="utf-8")).get("catalog")
                if built_from != target and isinstance(built_from, str) and Path(built_from).is_file():
                    continue
                other.with_suffix(".sqlite").unlink(missing_ok=True)
                other.unlink(missing_ok=True)
            except (OSError, ValueError):
                continue
