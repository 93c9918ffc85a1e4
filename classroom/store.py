"""Class mode's shared state: classes, their students and answers, kept in SQLite or in Redis.

Every Streamlit worker of a deployment reads and writes one store, so that a teacher's slide change made in one
worker reaches the students another worker serves. SQLite (WAL, a busy timeout) in the user data folder is the
default: several workers on one machine need no extra service. Redis (redis-py, the optional ``class`` extra) is
used when ``LESSON_CLASS_STORE=redis://host:port/db`` is set, for a deployment across machines (SQLite does not span
pods).

The store keeps records and does the steps that must be atomic: a class created only under a free code, an answer
stored once per (class, question, student) and refused once its question is revealed or its class closed, a counter
per time window, and a class's named documents (a mock interview's current card, rubric and notes: short texts,
some of them JSON, that classroom/interviews.py reads and writes; a write bumps the version when its caller asks).
What a class means (codes, keys, who may do what) is classroom/classes.py's. Times are seconds since the epoch given
by the caller (a fake clock in tests); the store never reads the clock.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

ENV_VAR = "LESSON_CLASS_STORE"
DB_NAME = "classes.sqlite3"
BUSY_TIMEOUT_MS = 5000
# Redis keeps a class's keys this long after the class expires, in case no worker purges it (purge() deletes them
# at once): a bound on what a store left alone holds, not the class's lifetime
REDIS_GRACE_S = 3600

Outcome = Literal["ok", "duplicate", "locked", "closed", "gone"]


class StoreUnavailable(RuntimeError):
    """The store cannot be reached or used (Redis down, the database folder not writable): class mode is off."""


@dataclass(frozen=True)
class ClassRecord:
    """One class as stored. ``version`` grows with every change a student's screen follows (slide, reveal, close, and
    a document written with ``bump=True``)."""

    class_id: str  # unguessable, never drawn by the app (a student's link and the teacher's teach= carry it)
    code: str  # the join code
    teacher_hash: str  # sha256 of the teacher key, never the key itself
    deck: str
    slide: int
    closed: bool
    created_at: float
    expires_at: float
    version: int = 0
    revealed: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Student:
    token: str
    name: str
    joined_at: float


@dataclass(frozen=True)
class Answer:
    question: str
    token: str
    value: str
    at: float


class ClassStore(Protocol):
    """What class mode needs from a store; both backends pass the same tests (tests/class_mode/test_store.py)."""

    def ping(self) -> None: ...
    def create(self, record: ClassRecord, now: float) -> bool: ...
    def get(self, class_id: str) -> ClassRecord | None: ...
    def find(self, code: str) -> str | None: ...
    def set_slide(self, class_id: str, slide: int) -> bool: ...
    def reveal(self, class_id: str, question: str) -> bool: ...
    def close(self, class_id: str) -> bool: ...
    def join(self, class_id: str, token: str, name: str, now: float) -> bool: ...
    def student(self, class_id: str, token: str) -> Student | None: ...
    def students(self, class_id: str) -> list[Student]: ...
    def answer(self, class_id: str, question: str, token: str, value: str, now: float) -> Outcome: ...
    def answers(self, class_id: str, question: str) -> dict[str, str]: ...
    def answer_count(self, class_id: str, question: str) -> int: ...
    def all_answers(self, class_id: str) -> list[Answer]: ...
    def delete(self, class_id: str) -> None: ...
    def purge(self, now: float) -> list[str]: ...
    def hit(self, key: str, window: int) -> int: ...
    def hits(self, key: str, window: int) -> int: ...
    def put(self, class_id: str, name: str, value: str, bump: bool = False) -> bool: ...
    def docs(self, class_id: str) -> dict[str, str]: ...


# ----------------------------------------------------------------------------------------------------------------
# SQLite

_SCHEMA = """
CREATE TABLE IF NOT EXISTS classes (
    class_id TEXT PRIMARY KEY,
    code TEXT NOT NULL UNIQUE,
    teacher_hash TEXT NOT NULL,
    deck TEXT NOT NULL,
    slide INTEGER NOT NULL,
    closed INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    version INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS classes_expiry ON classes (expires_at);
CREATE TABLE IF NOT EXISTS reveals (
    class_id TEXT NOT NULL,
    question TEXT NOT NULL,
    PRIMARY KEY (class_id, question)
);
CREATE TABLE IF NOT EXISTS students (
    class_id TEXT NOT NULL,
    token TEXT NOT NULL,
    name TEXT NOT NULL,
    joined_at REAL NOT NULL,
    PRIMARY KEY (class_id, token)
);
CREATE TABLE IF NOT EXISTS answers (
    class_id TEXT NOT NULL,
    question TEXT NOT NULL,
    token TEXT NOT NULL,
    value TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (class_id, question, token)   -- one answer per (class, question, student)
);
CREATE TABLE IF NOT EXISTS docs (
    class_id TEXT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (class_id, name)
);
CREATE TABLE IF NOT EXISTS hits (
    key TEXT NOT NULL,
    window INTEGER NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (key, window)
);
"""


_CLASS_TABLES = ("answers", "students", "reveals", "docs", "classes")  # what a class's deletion deletes


class SqliteStore:
    """The default store: one SQLite file shared by the workers of one machine (WAL: readers never wait for the
    writer; a busy timeout: writers queue rather than fail). One connection per thread."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._local = threading.local()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db().executescript(_SCHEMA)  # (executescript commits by itself)
        except (OSError, sqlite3.Error) as exc:
            raise StoreUnavailable(f"the class database {self.path} cannot be used: {exc}") from exc

    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            self._local.db = db
        return db

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """A write transaction that takes the write lock at its start (BEGIN IMMEDIATE), so that a check and the
        write after it see the same state."""
        try:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"the class database {self.path} cannot be used: {exc}") from exc
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        else:
            db.execute("COMMIT")

    def _read(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._db().execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"the class database {self.path} cannot be read: {exc}") from exc

    def ping(self) -> None:
        self._read("SELECT 1")

    def create(self, record: ClassRecord, now: float) -> bool:
        with self._tx() as db:
            taken = db.execute(
                "SELECT 1 FROM classes WHERE code = ? OR class_id = ?", (record.code, record.class_id)
            ).fetchone()
            if taken:
                return False
            db.execute(
                "INSERT INTO classes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (record.class_id, record.code, record.teacher_hash, record.deck, record.slide, int(record.closed),
                 record.created_at, record.expires_at, record.version),
            )  # fmt: skip
            return True

    def get(self, class_id: str) -> ClassRecord | None:
        rows = self._read(
            "SELECT class_id, code, teacher_hash, deck, slide, closed, created_at, expires_at, version "
            "FROM classes WHERE class_id = ?",
            (class_id,),
        )
        if not rows:
            return None
        r = rows[0]
        revealed = frozenset(q for (q,) in self._read("SELECT question FROM reveals WHERE class_id = ?", (class_id,)))
        return ClassRecord(r[0], r[1], r[2], r[3], int(r[4]), bool(r[5]), float(r[6]), float(r[7]), int(r[8]),
                           revealed)  # fmt: skip

    def find(self, code: str) -> str | None:
        rows = self._read("SELECT class_id FROM classes WHERE code = ?", (code,))
        return rows[0][0] if rows else None

    def _bump(self, db: sqlite3.Connection, class_id: str, sets: str = "", args: tuple[Any, ...] = ()) -> bool:
        cur = db.execute(f"UPDATE classes SET {sets}version = version + 1 WHERE class_id = ?", (*args, class_id))
        return cur.rowcount == 1

    def set_slide(self, class_id: str, slide: int) -> bool:
        with self._tx() as db:
            return self._bump(db, class_id, "slide = ?, ", (int(slide),))

    def reveal(self, class_id: str, question: str) -> bool:
        with self._tx() as db:
            if not db.execute("SELECT 1 FROM classes WHERE class_id = ?", (class_id,)).fetchone():
                return False
            cur = db.execute("INSERT OR IGNORE INTO reveals VALUES (?, ?)", (class_id, question))
            if cur.rowcount != 1:
                return False
            return self._bump(db, class_id)

    def close(self, class_id: str) -> bool:
        with self._tx() as db:
            return self._bump(db, class_id, "closed = 1, ")

    def join(self, class_id: str, token: str, name: str, now: float) -> bool:
        with self._tx() as db:
            if not db.execute("SELECT 1 FROM classes WHERE class_id = ?", (class_id,)).fetchone():
                return False
            cur = db.execute("INSERT OR IGNORE INTO students VALUES (?, ?, ?, ?)", (class_id, token, name, now))
            return cur.rowcount == 1

    def student(self, class_id: str, token: str) -> Student | None:
        rows = self._read("SELECT token, name, joined_at FROM students WHERE class_id = ? AND token = ?",
                          (class_id, token))  # fmt: skip
        return Student(rows[0][0], rows[0][1], float(rows[0][2])) if rows else None

    def students(self, class_id: str) -> list[Student]:
        rows = self._read("SELECT token, name, joined_at FROM students WHERE class_id = ? ORDER BY joined_at, token",
                          (class_id,))  # fmt: skip
        return [Student(t, n, float(j)) for t, n, j in rows]

    def answer(self, class_id: str, question: str, token: str, value: str, now: float) -> Outcome:
        with self._tx() as db:
            row = db.execute("SELECT closed FROM classes WHERE class_id = ?", (class_id,)).fetchone()
            if row is None:
                return "gone"
            if row[0]:
                return "closed"
            if db.execute("SELECT 1 FROM reveals WHERE class_id = ? AND question = ?", (class_id, question)).fetchone():
                return "locked"
            cur = db.execute("INSERT OR IGNORE INTO answers VALUES (?, ?, ?, ?, ?)",
                             (class_id, question, token, value, now))  # fmt: skip
            return "ok" if cur.rowcount == 1 else "duplicate"

    def answers(self, class_id: str, question: str) -> dict[str, str]:
        rows = self._read("SELECT token, value FROM answers WHERE class_id = ? AND question = ?", (class_id, question))
        return dict(rows)

    def answer_count(self, class_id: str, question: str) -> int:
        rows = self._read("SELECT COUNT(*) FROM answers WHERE class_id = ? AND question = ?", (class_id, question))
        return int(rows[0][0])

    def all_answers(self, class_id: str) -> list[Answer]:
        rows = self._read("SELECT question, token, value, at FROM answers WHERE class_id = ? ORDER BY at, question, "
                          "token", (class_id,))  # fmt: skip
        return [Answer(q, t, v, float(a)) for q, t, v, a in rows]

    def delete(self, class_id: str) -> None:
        with self._tx() as db:
            for table in _CLASS_TABLES:
                db.execute(f"DELETE FROM {table} WHERE class_id = ?", (class_id,))

    def purge(self, now: float) -> list[str]:
        with self._tx() as db:
            gone = [c for (c,) in db.execute("SELECT class_id FROM classes WHERE expires_at <= ?", (now,))]
            for class_id in gone:
                for table in _CLASS_TABLES:
                    db.execute(f"DELETE FROM {table} WHERE class_id = ?", (class_id,))
            db.execute("DELETE FROM hits WHERE window < ?", (int(now) - 86_400,))  # windows are in seconds
            return gone

    def hit(self, key: str, window: int) -> int:
        with self._tx() as db:
            row = db.execute(
                "INSERT INTO hits VALUES (?, ?, 1) ON CONFLICT (key, window) DO UPDATE SET count = count + 1 "
                "RETURNING count",
                (key, int(window)),
            ).fetchone()
            return int(row[0])

    def hits(self, key: str, window: int) -> int:
        rows = self._read("SELECT count FROM hits WHERE key = ? AND window = ?", (key, int(window)))
        return int(rows[0][0]) if rows else 0

    def put(self, class_id: str, name: str, value: str, bump: bool = False) -> bool:
        """Set the class's document ``name`` (and bump its version when ``bump``); False when there is no class."""
        with self._tx() as db:
            if not db.execute("SELECT 1 FROM classes WHERE class_id = ?", (class_id,)).fetchone():
                return False
            db.execute("INSERT INTO docs VALUES (?, ?, ?) ON CONFLICT (class_id, name) DO UPDATE SET value = "
                       "excluded.value", (class_id, name, value))  # fmt: skip
            return self._bump(db, class_id) if bump else True

    def docs(self, class_id: str) -> dict[str, str]:
        return dict(self._read("SELECT name, value FROM docs WHERE class_id = ?", (class_id,)))


# ----------------------------------------------------------------------------------------------------------------
# Redis

# KEYS: class hash, reveals set, answers hash, questions set. ARGV: question, token, value (JSON). New keys take the
# class hash's time to live, so that a class's keys go together.
_ANSWER_LUA = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 'gone' end
if redis.call('HGET', KEYS[1], 'closed') == '1' then return 'closed' end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return 'locked' end
if redis.call('HSETNX', KEYS[3], ARGV[2], ARGV[3]) == 0 then return 'duplicate' end
redis.call('SADD', KEYS[4], ARGV[1])
local ttl = redis.call('TTL', KEYS[1])
if ttl > 0 then redis.call('EXPIRE', KEYS[3], ttl); redis.call('EXPIRE', KEYS[4], ttl) end
return 'ok'
"""
# KEYS: class hash. ARGV: field, value ('' for none): set the field if given, bump the version; 0 if no class.
_BUMP_LUA = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[1] ~= '' then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
redis.call('HINCRBY', KEYS[1], 'version', 1)
return 1
"""
# KEYS: class hash, reveals set. ARGV: question. 1 if newly revealed.
_REVEAL_LUA = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('SADD', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[1], 'version', 1)
local ttl = redis.call('TTL', KEYS[1])
if ttl > 0 then redis.call('EXPIRE', KEYS[2], ttl) end
return 1
"""
# KEYS: class hash, documents hash. ARGV: name, value, bump ('1' or '0'). 1 if the class exists.
_PUT_LUA = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
if ARGV[3] == '1' then redis.call('HINCRBY', KEYS[1], 'version', 1) end
local ttl = redis.call('TTL', KEYS[1])
if ttl > 0 then redis.call('EXPIRE', KEYS[2], ttl) end
return 1
"""
# KEYS: class hash, students hash. ARGV: token, student (JSON). 1 if newly joined.
_JOIN_LUA = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local added = redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2])
local ttl = redis.call('TTL', KEYS[1])
if ttl > 0 then redis.call('EXPIRE', KEYS[2], ttl) end
return added
"""


class RedisStore:
    """The store across machines: one Redis database, keys under ``prefix``; the atomic steps are Lua scripts."""

    def __init__(self, url: str, prefix: str = "lesson:class:") -> None:
        try:
            import redis
        except ImportError as exc:  # the optional extra is not installed
            raise StoreUnavailable(
                f"{ENV_VAR} names Redis but redis-py is not installed: pip install -e '.[class]'"
            ) from exc
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        self.url = url
        self.prefix = prefix
        self.r = redis.Redis.from_url(url, decode_responses=True, socket_timeout=5, socket_connect_timeout=2)
        self._answer = self.r.register_script(_ANSWER_LUA)
        self._bump = self.r.register_script(_BUMP_LUA)
        self._reveal = self.r.register_script(_REVEAL_LUA)
        self._join = self.r.register_script(_JOIN_LUA)
        self._put = self.r.register_script(_PUT_LUA)

    def _k(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)

    @contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except self._errors as exc:
            raise StoreUnavailable(f"the class store at {_redacted(self.url)} cannot be reached: {exc}") from exc

    def ping(self) -> None:
        with self._guard():
            self.r.ping()

    def create(self, record: ClassRecord, now: float) -> bool:
        ttl = max(1, int(record.expires_at - now) + REDIS_GRACE_S)
        with self._guard():
            if not self.r.set(self._k("code", record.code), record.class_id, nx=True, ex=ttl):
                return False
            fields = {"code": record.code, "teacher_hash": record.teacher_hash, "deck": record.deck,
                      "slide": record.slide, "closed": int(record.closed), "created_at": repr(record.created_at),
                      "expires_at": repr(record.expires_at), "version": record.version}  # fmt: skip
            if not self.r.hsetnx(self._k("c", record.class_id), "code", record.code):
                self.r.delete(self._k("code", record.code))
                return False
            pipe = self.r.pipeline()
            pipe.hset(self._k("c", record.class_id), mapping=fields)
            pipe.expire(self._k("c", record.class_id), ttl)
            pipe.zadd(self._k("expiry"), {record.class_id: record.expires_at})
            pipe.execute()
            return True

    def get(self, class_id: str) -> ClassRecord | None:
        with self._guard():
            pipe = self.r.pipeline()
            pipe.hgetall(self._k("c", class_id))
            pipe.smembers(self._k("c", class_id, "rev"))
            h, rev = pipe.execute()
        if not h:
            return None
        return ClassRecord(class_id, h["code"], h["teacher_hash"], h["deck"], int(h["slide"]), h["closed"] == "1",
                           float(h["created_at"]), float(h["expires_at"]), int(h["version"]),
                           frozenset(rev))  # fmt: skip

    def find(self, code: str) -> str | None:
        with self._guard():
            return self.r.get(self._k("code", code))

    def set_slide(self, class_id: str, slide: int) -> bool:
        with self._guard():
            return bool(self._bump(keys=[self._k("c", class_id)], args=["slide", int(slide)]))

    def reveal(self, class_id: str, question: str) -> bool:
        with self._guard():
            return bool(self._reveal(keys=[self._k("c", class_id), self._k("c", class_id, "rev")], args=[question]))

    def close(self, class_id: str) -> bool:
        with self._guard():
            return bool(self._bump(keys=[self._k("c", class_id)], args=["closed", 1]))

    def join(self, class_id: str, token: str, name: str, now: float) -> bool:
        student = json.dumps({"name": name, "joined_at": now})
        with self._guard():
            keys = [self._k("c", class_id), self._k("c", class_id, "students")]
            return bool(self._join(keys=keys, args=[token, student]))

    def student(self, class_id: str, token: str) -> Student | None:
        with self._guard():
            raw = self.r.hget(self._k("c", class_id, "students"), token)
        if raw is None:
            return None
        d = json.loads(raw)
        return Student(token, d["name"], float(d["joined_at"]))

    def students(self, class_id: str) -> list[Student]:
        with self._guard():
            raw = self.r.hgetall(self._k("c", class_id, "students"))
        out = [Student(t, (d := json.loads(v))["name"], float(d["joined_at"])) for t, v in raw.items()]
        return sorted(out, key=lambda s: (s.joined_at, s.token))

    def answer(self, class_id: str, question: str, token: str, value: str, now: float) -> Outcome:
        keys = [self._k("c", class_id), self._k("c", class_id, "rev"), self._k("c", class_id, "a", question),
                self._k("c", class_id, "questions")]  # fmt: skip
        with self._guard():
            return self._answer(keys=keys, args=[question, token, json.dumps({"v": value, "at": now})])

    def answers(self, class_id: str, question: str) -> dict[str, str]:
        with self._guard():
            raw = self.r.hgetall(self._k("c", class_id, "a", question))
        return {t: json.loads(v)["v"] for t, v in raw.items()}

    def answer_count(self, class_id: str, question: str) -> int:
        with self._guard():
            return int(self.r.hlen(self._k("c", class_id, "a", question)))

    def all_answers(self, class_id: str) -> list[Answer]:
        with self._guard():
            questions = sorted(self.r.smembers(self._k("c", class_id, "questions")))
            pipe = self.r.pipeline()
            for q in questions:
                pipe.hgetall(self._k("c", class_id, "a", q))
            tables = pipe.execute()
        out = [Answer(q, t, (d := json.loads(v))["v"], float(d["at"]))
               for q, table in zip(questions, tables, strict=True) for t, v in table.items()]  # fmt: skip
        return sorted(out, key=lambda a: (a.at, a.question, a.token))

    def _class_keys(self, class_id: str) -> list[str]:
        questions = self.r.smembers(self._k("c", class_id, "questions"))
        keys = [self._k("c", class_id), self._k("c", class_id, "rev"), self._k("c", class_id, "students"),
                self._k("c", class_id, "questions"), self._k("c", class_id, "docs"),
                *(self._k("c", class_id, "a", q) for q in questions)]  # fmt: skip
        code = self.r.hget(self._k("c", class_id), "code")
        if code is not None and self.r.get(self._k("code", code)) == class_id:
            keys.append(self._k("code", code))
        return keys

    def delete(self, class_id: str) -> None:
        with self._guard():
            self.r.delete(*self._class_keys(class_id))
            self.r.zrem(self._k("expiry"), class_id)

    def purge(self, now: float) -> list[str]:
        with self._guard():
            gone = list(self.r.zrangebyscore(self._k("expiry"), "-inf", now))
        for class_id in gone:
            self.delete(class_id)
        return gone

    def hit(self, key: str, window: int) -> int:
        name = self._k("hit", key, str(int(window)))
        with self._guard():
            pipe = self.r.pipeline()
            pipe.incr(name)
            pipe.expire(name, 86_400)
            count, _ = pipe.execute()
        return int(count)

    def hits(self, key: str, window: int) -> int:
        with self._guard():
            return int(self.r.get(self._k("hit", key, str(int(window)))) or 0)

    def put(self, class_id: str, name: str, value: str, bump: bool = False) -> bool:
        keys = [self._k("c", class_id), self._k("c", class_id, "docs")]
        with self._guard():
            return bool(self._put(keys=keys, args=[name, value, "1" if bump else "0"]))

    def docs(self, class_id: str) -> dict[str, str]:
        with self._guard():
            return dict(self.r.hgetall(self._k("c", class_id, "docs")))


def _redacted(url: str) -> str:
    """The URL without a password (redis://user:secret@host -> redis://user:***@host)."""
    head, sep, tail = url.partition("@")
    if not sep or ":" not in head.split("//", 1)[-1]:
        return url
    scheme, _, cred = head.partition("//")
    user = cred.split(":", 1)[0]
    return f"{scheme}//{user}:***@{tail}"


def open_store(url: str | None = None, data_dir: str | Path | None = None) -> ClassStore:
    """The store that ``url`` (else $LESSON_CLASS_STORE) names: ``redis://...`` or ``rediss://...`` is Redis;
    ``sqlite:///path`` or nothing is SQLite (in ``data_dir``, else the progress database's folder).
    Raises StoreUnavailable (with what to do) when it cannot be opened."""
    url = (url if url is not None else os.environ.get(ENV_VAR, "")).strip()
    if url.startswith(("redis://", "rediss://", "unix://")):
        store = RedisStore(url)
        store.ping()
        return store
    if url.startswith("sqlite:///"):
        return SqliteStore(Path(url.removeprefix("sqlite:///")))
    if url:
        raise StoreUnavailable(f"{ENV_VAR}={_redacted(url)!r}: use redis://host:port/db or sqlite:///path")
    from study.progress import data_dir as folder

    return SqliteStore(folder(data_dir) / DB_NAME)
