"""Optional SQLite persistence (``--state FILE``) so objects survive an
API-server restart.  Every committed change is written at once; the
resourceVersion counter is kept too, so clients' resourceVersions stay
meaningful (watches from before the restart get 410 and re-list).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from typing import Any

Key = tuple[str, str, str, str]


class SQLiteState:
    def __init__(self, path: str) -> None:
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS objects (grp TEXT, plural TEXT, ns TEXT,"
                         " name TEXT, body TEXT, PRIMARY KEY (grp, plural, ns, name))")
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)")

    def load(self) -> tuple[int, list[tuple[Key, dict[str, Any]]]]:
        with self._lock:
            row = self._db.execute("SELECT v FROM meta WHERE k='rv'").fetchone()
            rv = int(row[0]) if row else 0
            rows = self._db.execute("SELECT grp, plural, ns, name, body FROM objects").fetchall()
        return rv, [((g, p, n, m), json.loads(b)) for g, p, n, m, b in rows]

    def save(self, rv: int, key: Key, obj: dict[str, Any] | None) -> None:
        with self._lock:
            self._db.execute("BEGIN")
            if obj is None:
                self._db.execute("DELETE FROM objects WHERE grp=? AND plural=? AND ns=? AND"
                                 " name=?", key)
            else:
                self._db.execute("INSERT OR REPLACE INTO objects VALUES (?,?,?,?,?)",
                                 (*key, json.dumps(obj, separators=(",", ":"))))
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('rv', ?)", (str(rv),))
            self._db.execute("COMMIT")

    def get_meta(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT v FROM meta WHERE k=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def close(self) -> None:
        with self._lock:
            self._db.close()
