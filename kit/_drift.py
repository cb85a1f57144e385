"""Contract drift as the client sees it: ``api.drift``.

Every answer a client receives is checked against the contract (:mod:`kit._contract`) by its
transport; each :class:`Drift` lands in the client's :class:`DriftLog` (``api.drift``, a
DataFrame with the columns :data:`COLUMNS`) and goes to the client's ``drift`` hooks
(:mod:`kit._hooks`). Drift never raises unless the client was built with
``kit.connect(..., drift="raise")``; ``drift="off"`` skips the check. Showing a cell's drift
in a notebook is the notebook companion's business (:mod:`kit.notebook`).

Example::

    >>> api = kit.connect("sandbox")                # doctest: +SKIP
    >>> api.cards.get(card_id)                      # doctest: +SKIP
    >>> api.drift[["operation", "field", "expected", "got"]]   # doctest: +SKIP
                operation        field expected      got
    0  GET /cards/{card_id}  body.last4   string  integer
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COLUMNS", "MODES", "Drift", "DriftLog", "json_type", "schema_rows"]

#: The columns of ``api.drift`` and :func:`frame`.
COLUMNS = ["operation", "field", "expected", "got", "request_id", "kind", "basis"]
#: What ``kit.connect(..., drift=…)`` accepts: report (the default), raise, or off.
MODES = ("report", "raise", "off")
#: At most this many rows are kept per log (a drifting sandbox under a population run).
LIMIT = 10_000


@dataclass(frozen=True)
class Drift:
    """One way an answer differs from the contract; never a value from the answer.

    ``kind``: operation, status, content-type, body, header, version or code; ``operation``:
    ``"GET /cards/{card_id}"``; ``field``: ``status``, ``body.last4``, ``header svc-api-version``…;
    ``basis``: what the departed part rests on (:data:`kit._contract.OPERATIONS`) — a statement
    of the spec (``"endpoint.5"``, ``"version.1"``: the row is **drift**) or a register entry
    (``"A35"``: the row is a **difference** from the simulator's choice, :attr:`differs`).
    """

    kind: str
    operation: str
    field: str
    expected: str
    got: str
    request_id: str | None = None
    basis: str = ""

    @property
    def differs(self) -> bool:
        """True when the row departs from a choice (a register entry), not from the spec."""
        return self.basis[:1] == "A"

    def __str__(self) -> str:
        rid = f" (request {self.request_id})" if self.request_id else ""
        return f"{self.operation}: {self.field}: expected {self.expected}, got {self.got}{rid}"


def json_type(value: Any) -> str:
    """The JSON type name of a parsed value (``"integer"``, ``"string"``, ``"null"``…)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    return "object" if isinstance(value, Mapping) else type(value).__name__


def _field(path: Any) -> str:
    out = "body"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _types(schema: Any) -> str:
    if isinstance(schema, Mapping):
        if "type" in schema:
            kinds = schema["type"]
            return " or ".join(kinds) if isinstance(kinds, list) else str(kinds)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return " or ".join(_types(s) for s in schema[key])
        if "$ref" in schema:
            return str(schema["$ref"]).rsplit("/", 1)[-1]
    return "a valid value"


def schema_rows(error: Any) -> list[tuple[str, str, str, str]]:
    """``(kind, field, expected, got)`` for one jsonschema error, without the instance's value."""
    where, keyword, rule, instance = (
        _field(error.absolute_path),
        error.validator,
        error.validator_value,
        error.instance,
    )
    if keyword == "required":
        missing = [name for name in rule if isinstance(instance, Mapping) and name not in instance]
        return [("body", f"{where}.{name}", "present (required)", "missing") for name in missing]
    if keyword == "type":
        return [
            ("body", where, " or ".join(rule) if isinstance(rule, list) else str(rule), json_type(instance))
        ]
    if keyword in ("enum", "const"):
        allowed = ", ".join(map(json.dumps, rule if keyword == "enum" else [rule]))
        return [("body", where, f"one of {allowed}", f"another {json_type(instance)}")]
    if keyword in ("anyOf", "oneOf"):
        return [("body", where, _types(error.schema), json_type(instance))]
    if keyword == "additionalProperties" and isinstance(instance, Mapping):
        known = set(error.schema.get("properties", {}))
        return [("body", f"{where}.{k}", "no such property", "present") for k in instance if k not in known]
    return [("body", where, f"{keyword} {json.dumps(rule)[:80]}", f"a {json_type(instance)} that fails it")]


class DriftLog:
    """A thread-safe, bounded list of :class:`Drift` rows."""

    def __init__(self, limit: int = LIMIT) -> None:
        self._rows: list[Drift] = []
        self._lock = threading.Lock()
        self._limit = limit
        self.dropped = 0

    def __len__(self) -> int:
        return len(self._rows)

    def record(self, rows: Iterable[Drift]) -> None:
        """Keep ``rows`` (past the limit they are counted in :attr:`dropped`)."""
        rows = list(rows)
        if not rows:
            return
        with self._lock:
            room = max(0, self._limit - len(self._rows))
            self._rows.extend(rows[:room])
            self.dropped += len(rows) - min(room, len(rows))

    def rows(self, start: int = 0) -> list[Drift]:
        """The rows kept so far, from ``start``."""
        with self._lock:
            return self._rows[start:]

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()
            self.dropped = 0

    def frame(self) -> pd.DataFrame:
        """The rows as a DataFrame (columns :data:`COLUMNS`), oldest first."""
        import pandas as pd

        return pd.DataFrame([[getattr(d, c) for c in COLUMNS] for d in self.rows()], columns=COLUMNS)
