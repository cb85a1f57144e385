"""The recorded wire shown and exported: ``api.wire()`` (:class:`WireView`) and
``api.export_har(path)`` (:func:`write_har`, HAR 1.2 through the ``harfile`` writer).

A :class:`WireView` is one exchange of :mod:`kit._wire` as it went over the wire — for each
attempt the request line, headers and body, then the response status, headers and body —
already redacted. It renders as HTML in Jupyter and as text elsewhere; long bodies are folded
so the whole view stays under :data:`VIEW_LIMIT` characters, its text under :data:`TEXT_LIMIT`
(stored notebook outputs). No
timing is shown (it differs from run to run); the HAR keeps them.

A call is titled with its number among the partner API's calls, the number of its row in every
table of calls a notebook shows (``kit.notebook.calls``, ``kit.widgets.history_table``): the
simulator's control calls (``/_sim``) are left out of both (:func:`label`).

Example::

    >>> api.wire()                                          # doctest: +SKIP
    call 4 · POST /accounts · 201
    POST http://127.0.0.1:<port>/accounts HTTP/1.1
    ...
    >>> api.export_har("out/quickstart.har")                # doctest: +SKIP
    12
"""

from __future__ import annotations

import contextlib
import html
import io
import json
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from urllib.parse import parse_qsl, quote, urlsplit

import harfile

from kit import _files as files
from kit._history import CONTROL_PREFIX
from kit._wire import Attempt, Exchange, Message

__all__ = ["VIEW_LIMIT", "WireView", "choose", "har_entries", "label", "write_har"]

#: A view's text stays under this many characters (long bodies are folded to fit).
VIEW_LIMIT = 4_000
#: The text form (what a stored notebook output keeps as ``text/plain``) stays under this.
TEXT_LIMIT = 2_000
_BODY_START = 1_200
_CREATOR = "partner-api-kit"


def choose(
    exchanges: Sequence[Exchange],
    which: int = -1,
    *,
    kind: str | None = "call",
    path: str | None = None,
    method: str | None = None,
    status: int | None = None,
    where: Callable[[Exchange], bool] | None = None,
) -> Exchange:
    """The ``which``-th (Python indexing: ``-1`` the last) exchange that passes the filters:
    ``kind`` (``"call"``, ``"delivery"`` or ``None`` for both), ``path`` (a part of the path, on
    the wire or in the kit's spelling when a dialect moved it),
    ``method``, ``status`` (of any attempt: ``503`` finds a retried call), ``where``.

    Raises:
        LookupError: no such exchange (the filters and the number kept are named).
    """
    chosen = [
        e
        for e in exchanges
        if (kind is None or e.kind == kind)
        and (path is None or path in e.path or path in (e.kit_path or ""))
        and (method is None or e.method == method.upper())
        and (status is None or any(a.status == status for a in e.attempts))
        and (where is None or where(e))
        and e.attempts
    ]
    try:
        return chosen[which]
    except IndexError:
        raise LookupError(
            f"no exchange {which} among {len(chosen)} matching (of {len(exchanges)} recorded)"
        ) from None


def _fold(body: str, limit: int) -> str:
    with contextlib.suppress(ValueError):
        body = json.dumps(json.loads(body), indent=1, ensure_ascii=False)
    if len(body) <= limit:
        return body
    return f"{body[:limit]}\n… ({len(body) - limit} more characters folded)"


def _side(first: str, message: Message | None, limit: int) -> str:
    if message is None:
        return first
    lines = [first, *(f"{name}: {value}" for name, value in message.headers)]
    if message.body is not None:
        lines += ["", _fold(message.body, limit) + (" …(cut when recorded)" if message.cut else "")]
    return "\n".join(lines)


def _request_line(attempt: Attempt) -> str:
    return f"{attempt.method} {attempt.url} HTTP/1.1"


def _status_line(attempt: Attempt) -> str:
    if attempt.status is None:
        return "(no answer: the connection failed)"
    return f"HTTP/1.1 {attempt.status} {attempt.reason}".rstrip()


def label(exchange: Exchange) -> str:
    """What an exchange is and its number: ``call 7`` (row 7 of the table of the partner API's
    calls), ``calls 5 and 7`` (a partner token refused inside the call is a row of its own),
    ``delivery 2`` (among the webhook deliveries received), ``control call`` (the simulator's,
    left out of the tables). A recorder used without a client's history numbers calls itself."""
    numbers = [str(n) for n in exchange.numbers]
    if exchange.kind == "delivery":
        return f"delivery {numbers[0] if numbers else exchange.index}"
    if len(numbers) > 1:
        return f"calls {', '.join(numbers[:-1])} and {numbers[-1]}"
    if numbers:
        return f"call {numbers[0]}"
    if exchange.path.startswith(CONTROL_PREFIX):
        return "control call"
    return f"call {exchange.index}"


def _title(exchange: Exchange) -> str:
    statuses = " → ".join(str(a.status) if a.status is not None else "no answer" for a in exchange.attempts)
    parts = [label(exchange), f"{exchange.method} {exchange.path}", statuses]
    if len(exchange.attempts) > 1 or exchange.dropped:
        parts.append(f"{len(exchange.attempts) + exchange.dropped} attempts")
    if exchange.step:  # not the notebook cell (HAR comments carry it): it depends on the runner
        parts.append(f"step: {exchange.step}")
    return " · ".join(parts)


class WireView:
    """One exchange as it went over the wire (see the module docstring)."""

    def __init__(self, exchange: Exchange) -> None:
        self.exchange = exchange

    def __repr__(self) -> str:
        return self.text()

    @property
    def request(self) -> Message:
        """The request of the last attempt (a delivery's only one), redacted as shown."""
        return self.exchange.attempts[-1].request

    @property
    def response(self) -> Message | None:
        """The answer to the last attempt (``None``: no answer came), redacted as shown."""
        return self.exchange.attempts[-1].response

    @property
    def status(self) -> int | None:
        """The last attempt's status (``None``: no answer came)."""
        return self.exchange.status

    def _parts(self, limit: int) -> list[tuple[str, str, str]]:
        """``(heading, request, response)`` per attempt."""
        attempts = self.exchange.attempts
        return [
            (
                f"attempt {i} of {len(attempts)}" if len(attempts) > 1 else "",
                _side(_request_line(a), a.request, limit),
                _side(_status_line(a), a.response, limit),
            )
            for i, a in enumerate(attempts, start=1)
        ]

    def _fitted(self, render: Callable[[int], str], most: int = VIEW_LIMIT) -> str:
        limit = _BODY_START
        shown = render(limit)
        while len(shown) > most - 100 and limit > 40:
            limit //= 2
            shown = render(limit)
        return shown

    def _text_fitted(self, render: Callable[[int], str]) -> str:
        shown = self._fitted(render, TEXT_LIMIT)
        if len(shown) <= TEXT_LIMIT - 100:
            return shown
        # many attempts: headers alone are too long; the exchange (``.exchange``) keeps them all
        return shown[: TEXT_LIMIT - 200] + "\n… (the rest of this call is folded: see .exchange)"

    def text(self) -> str:
        """The view as text (bodies folded to fit :data:`TEXT_LIMIT`)."""

        def render(limit: int) -> str:
            blocks = [_title(self.exchange)]
            for heading, request, response in self._parts(limit):
                blocks += [f"── {heading}"] if heading else []
                blocks += [request, "", response]
            return "\n".join(blocks)

        return self._text_fitted(render)

    def _repr_html_(self) -> str:
        def render(limit: int) -> str:
            pre = "margin:2px 0;padding:4px 6px;background:#f6f8fa;white-space:pre-wrap;font-size:12px"
            out = [f"<div><b>{html.escape(_title(self.exchange))}</b>"]
            for heading, request, response in self._parts(limit):
                if heading:
                    out.append(f"<div><i>{html.escape(heading)}</i></div>")
                out.append(f'<pre style="{pre}">{html.escape(request)}</pre>')
                out.append(f'<pre style="{pre};border-left:3px solid #8c959f">{html.escape(response)}</pre>')
            return "".join(out) + "</div>"

        page = self._fitted(render)
        if len(page) <= VIEW_LIMIT - 100:
            return page
        plain = self.text()  # many attempts: the folded text instead, cut to fit once escaped
        while len(html.escape(plain)) > VIEW_LIMIT - 150:
            plain = plain[: len(plain) * 9 // 10]
        return f"<pre>{html.escape(plain)}</pre>"


# -- HAR 1.2 -------------------------------------------------------------------------------------


def _records(headers: Iterable[tuple[str, str]]) -> list[harfile.Record]:
    return [harfile.Record(name=n, value=v) for n, v in headers]


def _entry_comment(exchange: Exchange, number: int) -> str:
    parts = ["webhook delivery received" if exchange.kind == "delivery" else label(exchange)]
    if len(exchange.attempts) > 1:
        parts.append(f"attempt {number} of {len(exchange.attempts)}")
    if exchange.note:
        parts.append(exchange.note)
    return "; ".join(parts)


def _har_url(url: str) -> str:
    """A recorded URL as a valid URI: the normalised port (``:<port>``) left out, any other
    marker percent-encoded."""
    return quote(url.replace(":<port>", ""), safe=":/?#[]@!$&'()*+,;=%")


def _version() -> str:
    """The kit's version (``kit.__version__``, which the package metadata is built from)."""
    from kit._version import __version__

    return __version__


def har_entries(exchanges: Iterable[Exchange]) -> list[tuple[Exchange, int, Attempt]]:
    """Every attempt of ``exchanges`` as ``(exchange, number, attempt)``, in the order sent."""
    rows = [(e, i, a) for e in exchanges for i, a in enumerate(e.attempts, start=1)]
    return sorted(rows, key=lambda row: row[2].started)


def write_har(
    path: str | os.PathLike[str], exchanges: Iterable[Exchange], *, comment: str | None = None
) -> int:
    """Write ``exchanges`` as a HAR 1.2 file at ``path`` (one entry per attempt: its start,
    time, redacted headers and bodies, status, timings; its comment the call, the attempt and
    the notebook cell or flow step where known). Returns the number of entries. URLs leave out
    a loopback port (it changes every run; the ``Host`` header shows ``<port>``). The file is
    new, mode 0600, whole; what was at ``path`` is replaced, a link never followed
    (:mod:`kit._files`).

    Raises:
        OSError: the file cannot be written.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    rows = har_entries(exchanges)
    creator = harfile.Creator(name=_CREATOR, version=_version())
    with (
        files.created(target) as raw,  # mode 0600, never through a link left at ``path``
        io.TextIOWrapper(raw, encoding="utf-8") as text,
        harfile.open(text, creator=creator, comment=comment) as har,
    ):
        for exchange, number, attempt in rows:
            sent = attempt.request
            post = harfile.PostData(mimeType=sent.mime, text=sent.body) if sent.body is not None else None
            query = [harfile.Record(name=k, value=v) for k, v in parse_qsl(urlsplit(attempt.url).query)]
            request = harfile.Request(
                method=attempt.method,
                url=_har_url(attempt.url),
                httpVersion="HTTP/1.1",
                headers=_records(sent.headers),
                queryString=query,
                postData=post,
                bodySize=sent.size,
            )
            got = attempt.response
            content = harfile.Content(
                size=got.size if got is not None else 0,
                mimeType=got.mime if got is not None else "",
                text=got.body if got is not None else None,
            )
            response = harfile.Response(
                status=attempt.status or 0,
                statusText=attempt.reason,
                httpVersion="HTTP/1.1" if got is not None else "",
                headers=_records(got.headers) if got is not None else [],
                content=content,
                bodySize=got.size if got is not None else -1,
            )
            har.add_entry(
                startedDateTime=attempt.started,
                time=attempt.ms,
                request=request,
                response=response,
                timings=harfile.Timings(send=0, wait=attempt.ms, receive=0),
                comment=_entry_comment(exchange, number),
            )
    return len(rows)
