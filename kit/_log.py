"""The ``kit`` logger: what the client did that a back end's logs should show.

Token fetches (``kit.auth``, INFO), retries (``kit.transport``, INFO), contract drift and
differences from a register entry (``kit.transport``, WARNING and INFO) and an API version the
client did not pin (``kit.transport``, WARNING). Silent until the application configures
logging: the ``kit`` logger has a :class:`logging.NullHandler`, as httpx's has
(``logging.basicConfig(level="INFO")``, or ``kit regress --log-level INFO``, shows them).

A message holds a method, a path, a status, a problem code, a request id, a count, a delay, an
operation and a field — never a token, a secret, a body or a value a person typed. Callers
guard each call with ``LOG.isEnabledFor(level)``, so nothing is built when logging is off.

The simulator's own logger ``kit.sim`` is a child of ``kit``: its warnings still reach stderr
(as Python's last-resort handler would print them) while the application has configured no
logging of its own (:class:`_UnlessConfigured`).

Example::

    >>> import logging
    >>> logging.basicConfig(level="INFO")                  # doctest: +SKIP
    >>> kit.connect("sandbox").accounts.create()           # doctest: +SKIP
    INFO:kit.auth:partner token fetched for client sim-partner (expires in 3600 s)
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

__all__ = ["AUTH", "LOG", "drift", "retry", "token_fetched", "version_mismatch"]

LOG = logging.getLogger("kit.transport")
AUTH = logging.getLogger("kit.auth")


class _UnlessConfigured(logging.Handler):
    """``kit.sim``'s warnings on stderr, as Python's last-resort handler prints them, while the
    application has configured no handler (on the root logger or on ``kit``)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        kit = logging.getLogger("kit")
        configured = logging.getLogger().handlers or any(
            not isinstance(h, logging.NullHandler) for h in kit.handlers
        )
        if not configured and logging.lastResort is not None and record.levelno >= logging.lastResort.level:
            logging.lastResort.handle(record)


logging.getLogger("kit").addHandler(logging.NullHandler())
if not any(isinstance(h, _UnlessConfigured) for h in logging.getLogger("kit.sim").handlers):
    logging.getLogger("kit.sim").addHandler(_UnlessConfigured())


def retry(method: str, path: str, attempt: int, delay: float, status: int | None, error: str | None) -> None:
    """INFO: a call sent again after ``delay`` seconds (its ``status`` or connection ``error``)."""
    why = f"status {status}" if status is not None else f"connection error {error}"
    LOG.info("%s %s: %s, retry %d in %.2f s", method, path, why, attempt, delay)


def token_fetched(client_id: str, expires_in: int | None, again: bool) -> None:
    """INFO: a partner token fetched (``again``: after a 401 ``invalid-partner-token``)."""
    reason = " again after a 401 invalid-partner-token" if again else ""
    lifetime = f" (expires in {expires_in} s)" if expires_in is not None else ""
    AUTH.info("partner token fetched%s for client %s%s", reason, client_id, lifetime)


def drift(method: str, path: str, status: int, request_id: str | None, rows: Sequence[Any]) -> None:
    """WARNING per departure from the spec, INFO per difference from a register entry: the
    operation, the field or header, and the spec statement or entry it rests on (never the
    values)."""
    for row in rows:
        level = logging.INFO if row.differs else logging.WARNING
        what = f"differs from {row.basis}" if row.differs else f"contract drift ({row.basis})"
        LOG.log(level, "%s %s %d: %s in %s (request %s)", method, path, status, what, row.field, request_id)


def version_mismatch(method: str, path: str, pinned: str, served: str, request_id: str | None) -> None:
    """WARNING: the server answered under another API version than the client pinned."""
    LOG.warning(
        "%s %s: pinned svc-api-version %s, served %s (request %s)", method, path, pinned, served, request_id
    )
