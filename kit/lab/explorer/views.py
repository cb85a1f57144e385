"""The explorer's tables and messages: ``api.history`` and the webhooks received, reduced to
what does not vary between runs, as DataFrames, HTML and text; one readable line per error.

Example::

    >>> from kit.errors import CardAlreadyClosed
    >>> error_message(CardAlreadyClosed(409, "card-already-closed", "Closed."))
    'CardAlreadyClosed (409 card-already-closed): Closed. — the card is closed already; nothing to do'
"""

from __future__ import annotations

import html
import re

import pandas as pd

import kit
from kit._history import partner_calls
from kit.errors import ApiError, KitError

__all__ = [
    "HISTORY_COLUMNS",
    "WEBHOOK_COLUMNS",
    "error_message",
    "frame_text",
    "history_table",
    "table_html",
    "webhooks_table",
]

#: History columns that do not vary between runs (no wall-clock time, no ms).
HISTORY_COLUMNS = ["method", "path", "status", "session_type", "code", "retries"]
#: Webhook columns shown (simulator times, seeded ids).
WEBHOOK_COLUMNS = ["type", "id", "resource_id", "created_at", "verified"]


def history_table(api: kit.Client, last: int | None = None) -> pd.DataFrame:
    """``api.history`` reduced to :data:`HISTORY_COLUMNS`, typed for display.

    ``status`` and ``retries`` are nullable integers, ``method``, ``session_type`` and
    ``code`` categories; the rows are the last ``last`` calls to the partner API (all when
    ``None``), indexed by their number as the wire view shows it (``api.wire()``'s ``call 7``
    is row 7): the simulator's own control calls (``/_sim``) are left out, as every table of
    calls a notebook shows does (``api.history`` keeps them).

    Example::

        >>> history_table(api, last=5).dtypes["status"]          # doctest: +SKIP
        Int64Dtype()
    """
    frame = partner_calls(api.history)
    frame = frame if last is None else frame.tail(last)
    table = frame.reindex(columns=HISTORY_COLUMNS)
    return table.astype(
        {
            "method": "category",
            "path": "string",
            "status": "Int64",
            "session_type": "category",
            "code": "category",
            "retries": "Int64",
        }
    )


def webhooks_table(api: kit.Client) -> pd.DataFrame:
    """Webhooks received by the client's loopback receiver (:data:`WEBHOOK_COLUMNS`); empty
    when it is not listening (a remote sandbox cannot reach it)."""
    if not api.webhooks.listening:
        return pd.DataFrame(columns=WEBHOOK_COLUMNS)
    frame = api.webhooks.events.reindex(columns=WEBHOOK_COLUMNS).reset_index(drop=True)
    return frame.astype({"type": "category"})


def error_message(exc: BaseException) -> str:
    """One readable line for an error: class, status and code, what was wrong, what to do.

    Example::

        >>> from kit.errors import CardAlreadyClosed
        >>> error_message(CardAlreadyClosed(409, "card-already-closed", "Closed."))
        'CardAlreadyClosed (409 card-already-closed): Closed. — the card is closed already; nothing to do'
    """
    if isinstance(exc, ApiError):
        return f"{type(exc).__name__} ({exc.status} {exc.code}): {exc.message} — {exc.hint}"
    if isinstance(exc, KitError):
        return f"{type(exc).__name__}: {exc}"
    if isinstance(exc, (ValueError, TypeError)):
        return f"Invalid input ({type(exc).__name__}): {exc}"
    return f"Unexpected {type(exc).__name__}: {exc}"


def table_html(frame: pd.DataFrame, empty: str) -> str:
    if frame.empty:
        return f"<p><i>{html.escape(empty)}</i></p>"
    page = str(frame.to_html(index=False, na_rep="–", border=0))
    # every header over its column: JupyterLab right-aligns cells, so both sides are set here
    return re.sub(r"<(t[dh])([ >])", r'<\1 style="text-align:left"\2', page)


def frame_text(frame: pd.DataFrame, empty: str) -> str:
    return f"  ({empty})" if frame.empty else frame.to_string(index=False, na_rep="-")
