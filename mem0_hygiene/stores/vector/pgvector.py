"""mem0's pgvector table read with SQL: ``SELECT id, payload[, vector]`` in pages (keyset on ``id``), ``COUNT(*)``,
``payload->>field`` lookups. A snapshot is the table read in one ``REPEATABLE READ`` transaction into
``rows.jsonl`` (:mod:`.rows`); a restore loads it back in one transaction (the table emptied, the rows inserted),
committed only when the table's count and checksum then match the snapshot's.

The connection comes from mem0's own config keys (``connection_string``, or user/password/host/port/dbname);
:attr:`VectorStore.where` shows it without the password.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from ...errors import BackupError, ConfigError
from ..locations import redact_url
from ..vectors import PAGE_SIZE
from .base import Point, Snapshot, VectorStore, new_snapshot_folder, payload_checksum, payload_fields
from .rows import read_rows, write_rows


def connection_string(conf: dict[str, Any]) -> str:
    """The libpq URL of mem0's pgvector config (its ``connection_string``, else built from its parts)."""
    if conf.get("connection_string"):
        return str(conf["connection_string"])
    if conf.get("connection_pool") is not None:
        raise ConfigError(
            "vector_store.config.connection_pool is a live pool object mem0-hygiene cannot read from outside the "
            "app; give connection_string (or user/password/host/port/dbname) in the config"
        )
    user, password = conf.get("user") or "", conf.get("password") or ""
    host, port, db = conf.get("host") or "localhost", conf.get("port") or 5432, conf.get("dbname") or "postgres"
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    url = f"postgresql://{auth}{host}:{port}/{db}"
    return url + (f"?sslmode={conf['sslmode']}" if conf.get("sslmode") else "")


def commit_point() -> None:
    """Called right before a restore's transaction on the table commits (a crash test's kill point); does nothing."""


class PgvectorStore(VectorStore):
    """The table ``collection`` of mem0's pgvector store at ``url``."""

    provider = "pgvector"

    def __init__(self, url: str, collection: str) -> None:
        super().__init__(collection, redact_url(url))
        self.url = url
        self._conn: Any = None

    def _connect(self) -> Any:
        if self._conn is None:
            import psycopg

            try:
                self._conn = psycopg.connect(self.url, autocommit=True)
            except psycopg.Error as exc:
                raise BackupError(f"cannot connect to the pgvector database {self.where}: {exc}") from exc
        return self._conn

    def _table(self) -> Any:
        from psycopg import sql

        return sql.Identifier(self.collection)

    def exists(self) -> bool:
        row = self._connect().execute("SELECT to_regclass(%s) IS NOT NULL", (f'"{self.collection}"',)).fetchone()
        return bool(row and row[0])

    def pages(self, page_size: int = PAGE_SIZE, *, with_vectors: bool = False) -> Iterator[list[Point]]:
        if not self.exists():
            return
        yield from self._pages(self._connect(), page_size, with_vectors)

    def _pages(self, conn: Any, page_size: int, with_vectors: bool) -> Iterator[list[Point]]:
        from psycopg import sql

        columns = sql.SQL("id, payload, vector::text" if with_vectors else "id, payload")
        query = sql.SQL("SELECT {} FROM {} WHERE %s::uuid IS NULL OR id > %s::uuid ORDER BY id LIMIT %s").format(
            columns, self._table()
        )
        last = None
        while True:
            rows = conn.execute(query, (last, last, page_size)).fetchall()
            if not rows:
                return
            yield [_point(r, with_vectors) for r in rows]
            last = rows[-1][0]
            if len(rows) < page_size:
                return

    def field_pages(self, keys: tuple[str, ...], page_size: int = PAGE_SIZE) -> Iterator[list[tuple[Any, ...]]]:
        """The keys read in SQL (``payload->>key``), in one query through a server-side cursor (one snapshot of the
        table, no sort): nothing else of the payloads is sent or decoded. A row whose payload is not an object or
        holds one of the keys as something other than a string (a number, a list ...) comes with its whole payload,
        decoded as :meth:`pages` decodes it, so every value is what ``payload.get(key)`` gives."""
        from psycopg import sql

        if not self.exists():
            return
        texts = sql.SQL(", ").join(sql.SQL("payload->>{}").format(sql.Literal(k)) for k in keys)
        odd = sql.SQL(" OR ").join(
            sql.SQL("jsonb_typeof(payload->{}) NOT IN ('string', 'null')").format(sql.Literal(k)) for k in keys
        )
        query = sql.SQL(
            "SELECT id::text, {}, CASE WHEN jsonb_typeof(payload) <> 'object' OR {} THEN payload END FROM {}"
        ).format(texts, odd, self._table())
        conn = self._connect()
        with conn.transaction(), conn.cursor(name="mem0_hygiene_field_pages") as cur:
            cur.execute(query)
            while rows := cur.fetchmany(page_size):
                yield [
                    row[:-1]
                    if row[-1] is None
                    else payload_fields(row[0], _point((row[0], row[-1]), False)["payload"], keys)
                    for row in rows
                ]

    def count(self) -> int:
        from psycopg import sql

        if not self.exists():
            return 0
        return int(self._connect().execute(sql.SQL("SELECT COUNT(*) FROM {}").format(self._table())).fetchone()[0])

    def get(self, ids: Iterable[str], *, with_vectors: bool = False) -> dict[str, Point]:
        from psycopg import sql

        wanted = [str(i) for i in ids]
        if not wanted or not self.exists():
            return {}
        columns = sql.SQL("id, payload, vector::text" if with_vectors else "id, payload")
        query = sql.SQL("SELECT {} FROM {} WHERE id::text = ANY(%s)").format(columns, self._table())
        return {str(r[0]): _point(r, with_vectors) for r in self._connect().execute(query, (wanted,)).fetchall()}

    def find(self, **fields: Any) -> list[Point]:
        from psycopg import sql

        if not self.exists():
            return []
        where = sql.SQL(" AND ").join(sql.SQL("payload->>%s = %s") for _ in fields) if fields else sql.SQL("TRUE")
        args: list[Any] = [x for k, v in fields.items() for x in (k, str(v))]
        query = sql.SQL("SELECT id, payload FROM {} WHERE {}").format(self._table(), where)
        return [_point(r, False) for r in self._connect().execute(query, args).fetchall()]

    def holds_text(self, text: str) -> list[str]:
        from psycopg import sql

        if not self.exists():
            return []
        query = sql.SQL("SELECT COUNT(*) FROM {} WHERE strpos(payload::text, %s) > 0").format(self._table())
        held = int(self._connect().execute(query, (json.dumps(text)[1:-1],)).fetchone()[0])
        return [f"table {self.collection} on {self.where} ({held} rows)"] if held else []

    def snapshot(self, dest: str) -> Snapshot:
        import psycopg

        new_snapshot_folder(dest)
        if not self.exists():  # no table yet (mem0 creates it on its first add): an empty snapshot
            return write_rows(dest, self.provider, self.collection, [])
        with psycopg.connect(self.url) as conn:
            conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            with conn.transaction():
                snap = write_rows(dest, self.provider, self.collection, self._pages(conn, PAGE_SIZE, True))
        return snap

    def restore(self, snapshot: Snapshot) -> Snapshot:
        import psycopg
        from psycopg import sql

        pages = list(read_rows(snapshot))
        dims = next((len(_vector(p["vector"])) for page in pages for p in page if p.get("vector")), None)
        if dims is None and snapshot.count == 0 and not self.exists():
            return Snapshot(self.provider, self.collection, 0, snapshot.checksum, snapshot.path)  # no table: empty
        with psycopg.connect(self.url) as conn, conn.transaction():
            if dims is not None:
                conn.execute(
                    sql.SQL(
                        "CREATE TABLE IF NOT EXISTS {} (id UUID PRIMARY KEY, vector vector({}), payload JSONB)"
                    ).format(self._table(), sql.Literal(dims))
                )
            conn.execute(sql.SQL("DELETE FROM {}").format(self._table()))
            insert = sql.SQL("INSERT INTO {} (id, vector, payload) VALUES (%s, %s::vector, %s::jsonb)").format(
                self._table()
            )
            with conn.cursor() as cur:
                for page in pages:
                    cur.executemany(
                        insert, [(p["id"], _text(p.get("vector")), json.dumps(p.get("payload"))) for p in page]
                    )
            now = payload_checksum(p for page in self._pages(conn, PAGE_SIZE, False) for p in page)
            if now != (snapshot.count, snapshot.checksum):
                raise BackupError(  # leaving the block rolls the transaction back: the table is as it was
                    f"the pgvector table {self.collection} on {self.where} would hold {now[0]} points after the "
                    f"restore, the snapshot {snapshot.count}; nothing was changed"
                )
            commit_point()
        return Snapshot(self.provider, self.collection, now[0], now[1], snapshot.path)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _point(row: Any, with_vectors: bool) -> Point:
    payload = row[1] if isinstance(row[1], dict) else json.loads(row[1] or "{}")
    point: Point = {"id": str(row[0]), "payload": payload}
    if with_vectors:
        raw = json.loads(row[2]) if isinstance(row[2], str) else row[2]  # pgvector's text: "[1,2]"
        point["vector"] = [float(x) for x in raw] if raw is not None else None  # "0" reads as an int
    return point


def _vector(value: Any) -> list[float]:
    return list(json.loads(value) if isinstance(value, str) else value)


def _text(value: Any) -> str | None:
    """A vector as pgvector's text input (``[1.0,2.0]``)."""
    return None if value is None else json.dumps(_vector(value))
