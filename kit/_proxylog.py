"""What ``kit proxy`` keeps of the traffic it forwards, and what it writes on stop.

Each exchange is recorded redacted as it completes (:class:`kit._redaction.Redactor` under the
dialect's names of secrets: the partner token learned from the token answer, Basic credentials
from the header, secret-named members and form fields) and checked against the contract as the
client checks an answer (:meth:`kit._contract.Contract.check`, through the dialect's spelling,
:class:`kit._spoken.Spelling`): the wire path is put back at the kit's own path first (A67,
:meth:`~kit._spoken.Spelling.kit_path`).
An exchange whose path the contract cannot place is kept in :attr:`Traffic.unplaced`, listed
in the drift rows and in the conformance report, never dropped.

On stop, :meth:`Traffic.write` writes the HAR (``--har``), ``drift.json`` and the conformance
report (``conformance.md``/``.json``, :mod:`kit.regress.conformance`) in ``--out``, and the
choice overlay of ``--write-choices``, every file through :mod:`kit._files`.

Example::

    >>> traffic = Traffic(DEFAULT, upstream="http://127.0.0.1:8000")   # doctest: +SKIP
    >>> traffic.write(har=Path("run.har"), out=Path("out"))             # doctest: +SKIP
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from kit import _files as files
from kit._dialect import DEFAULT, Dialect
from kit._drift import COLUMNS, Drift, DriftLog
from kit._redaction import Redactor
from kit._spoken import Spelling
from kit._wire import MAX_BODY, MAX_CALLS, Attempt, Exchange, Message

__all__ = ["DRIFT_FILE", "Seen", "Traffic", "kit_path"]

#: The drift rows' file in ``--out``.
DRIFT_FILE = "drift.json"


@dataclass(frozen=True)
class Seen:
    """One exchange as it crossed the proxy: the request's method, path (no query), raw
    headers and the body's first bytes; the answer's status, raw headers and first bytes."""

    started: datetime
    method: str
    url: str
    path: str
    request_headers: list[tuple[bytes, bytes]]
    request_body: bytes
    request_size: int
    status: int | None
    response_headers: list[tuple[bytes, bytes]]
    response_body: bytes
    response_size: int
    ms: float


def kit_path(dialect: Dialect, method: str, path: str) -> str:
    """``path`` (the wire's) at the kit's own path when ``dialect`` moved its operation (A67),
    its parameters carried in order; else ``path`` (:meth:`kit._spoken.Spelling.kit_path`)."""
    return Spelling.of(dialect).kit_path(method, path)


def _json(body: bytes, headers: dict[str, str]) -> Any:
    if not body or "json" not in headers.get("content-type", "") or headers.get("content-encoding"):
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


class Traffic:
    """The exchanges a proxy forwarded (the last :data:`kit._wire.MAX_CALLS`, redacted), the
    drift rows of every one, and those the contract could not place; thread-safe."""

    def __init__(self, dialect: Dialect = DEFAULT, *, upstream: str = "") -> None:
        self.dialect = dialect
        self.upstream = upstream
        self.spelling = Spelling.of(dialect)
        self.redactor = Redactor(dialect=dialect)
        self.drift = DriftLog()
        self.exchanges: deque[Exchange] = deque(maxlen=MAX_CALLS)
        self.unplaced: list[dict[str, Any]] = []
        self.count = 0
        self._lock = threading.Lock()

    def _message(self, raw: list[tuple[bytes, bytes]], body: bytes, size: int) -> Message:
        headers = [(n.decode("latin-1").lower(), v.decode("latin-1")) for n, v in raw]
        shown = tuple((n, self.redactor.header(n, v)) for n, v in headers)
        mime = dict(headers).get("content-type", "")
        text = self.redactor.body(body, mime) if body else None
        cut = text is not None and (len(text) > MAX_BODY or size > len(body))
        return Message(
            shown, text[:MAX_BODY] if text is not None else None, mime.split(";")[0].strip(), size, cut
        )

    def record(self, seen: Seen) -> None:
        """Keep one exchange, redacted, and its drift rows."""
        with self._lock:
            self.count += 1
            sent = self._message(seen.request_headers, seen.request_body, seen.request_size)
            got = (
                self._message(seen.response_headers, seen.response_body, seen.response_size)
                if seen.status is not None
                else None
            )
            url = self.redactor.url(seen.url)
            ours = self.spelling.kit_path(seen.method, seen.path)
            attempt = Attempt(seen.started, seen.method, url, sent, seen.status, "", got, seen.ms)
            exchange = Exchange(
                self.count,
                "call",
                seen.method,
                self.redactor.url(seen.path),
                [attempt],
                comment="kit proxy",
                kit_path=ours if ours != seen.path else None,
            )
            self.exchanges.append(exchange)
        if seen.status is not None and seen.response_size == len(seen.response_body):
            self._check(seen, ours, exchange)  # an answer past what is kept is not judged by its start

    def _check(self, seen: Seen, ours: str, exchange: Exchange) -> None:
        raw = [(n.lower(), v) for n, v in seen.response_headers]
        plain = {n.decode("latin-1"): v.decode("latin-1") for n, v in raw}
        wire_body = _json(seen.response_body, plain)
        assert seen.status is not None
        rows, contract = self.spelling.checked(
            seen.method, ours, seen.status, raw, wire_body, has_content=bool(seen.response_body)
        )
        self.drift.record(rows)
        if contract.operation(seen.method, ours) is None:
            with self._lock:
                self.unplaced.append(
                    {
                        "exchange": exchange.index,
                        "method": seen.method,
                        "path": exchange.path,
                        "status": seen.status,
                    }
                )

    def table(self, expected: str | None = None) -> Any:
        """The conformance table of the drift rows seen (``expected``: the ``--choices`` file)."""
        from kit.notebook.conformity import build, of_drift

        where = f"kit proxy to {self.upstream}" if self.upstream else "kit proxy"
        seen = [of_drift(d, where) for d in self.drift.rows()]
        overlay = None
        if expected:
            from kit import _choices as choices

            overlay = choices.load(expected)
        return build((s for s in seen if s is not None), expected=overlay)

    def write(
        self,
        *,
        har: Path | None = None,
        out: Path | None = None,
        write_choices: Path | None = None,
        expected: str | None = None,
    ) -> list[Path]:
        """Write what was asked (see the module docstring); the paths written."""
        from kit.regress import conformance, exercised

        written: list[Path] = []
        if har is not None:
            from kit._wire_view import write_har

            write_har(har, list(self.exchanges), comment=f"kit proxy to {self.upstream}")
            written.append(har)
        if out is None and write_choices is None:
            return written
        table = self.table(expected)
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            rows = [
                dict(zip(COLUMNS, (getattr(d, c) for c in COLUMNS), strict=True)) for d in self.drift.rows()
            ]
            rows += [_unplaced_row(u) for u in self.unplaced]
            files.write(out / DRIFT_FILE, json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
            with self._lock:
                kept = list(self.exchanges)  # the HAR's exchanges: the verdicts name its entries
            calls = exercised.calls(kept, "kit proxy")
            written += [out / DRIFT_FILE]
            written += conformance.write(
                table, out, calls=calls, dialect=self.dialect, unplaced=self.unplaced
            )
        if write_choices is not None:
            conformance.write_choices(table, write_choices, source=self.upstream, expected=expected)
            written.append(write_choices)
        return written


def _unplaced_row(item: dict[str, Any]) -> dict[str, Any]:
    operation = f"{item['method']} {item['path']}"
    row = Drift("operation", operation, "operation", "an operation of the contract", str(item["status"]))
    return {**asdict(row), "kind": "unplaced", "exchange": item["exchange"]}
