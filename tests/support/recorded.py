"""A call as the kit's recorder keeps it (method, path template, status, code, headers, the
fields of its answer), for the tests of what reads recorded calls: the migration report and the
code-path walk."""

from __future__ import annotations

from typing import Any


def recorded_call(
    method: str, path: str, status: int, code: str | None = None, **extra: Any
) -> dict[str, Any]:
    """One recorded call; ``extra`` adds or replaces members (``headers=``, ``fields=``, ``step=``…)."""
    return {
        "method": method,
        "path": path,
        "status": status,
        "code": code,
        "headers": {},
        "fields": [],
        **extra,
    }
