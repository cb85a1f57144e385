"""The assumptions register as a notebook shows it: compact, details on demand.

:func:`register_table` is one line per entry (its id and topic); in Jupyter each line opens
(an HTML ``<details>``) to what the spec says, the simulator's choice in one sentence (the
entry's ``summary``) and a link to the entry in the contract (``docs/contract.md``), where the
whole choice is. Its text form (``text/plain``, what ``kit regress`` and nbval keep) is the same
id-and-topic lines, never the entries' text: a notebook shows the register, it does not dump it.

The link is written as the notebooks' own Markdown links are, relative to ``notebooks/``
(``../docs/contract.md#a15``): JupyterLab opens a relative link of an HTML output as it does a
Markdown cell's, and the site's hook (``docs/hooks/site.py``) rewrites every link of a
notebook's page, outputs included, to the site's address.

Example::

    >>> from kit.notebook import register_table
    >>> repr(register_table(["A01", "A02"])).startswith("the assumptions register: 2 of ")
    True
    >>> print(repr(register_table(["A01", "A02"])).splitlines()[1])
      A01  Partner token request
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from kit import register

__all__ = ["CONTRACT", "RegisterTable", "register_table"]

#: The contract document, from the notebooks' folder: each register entry has its anchor there.
CONTRACT = "../docs/contract.md"

_CODE = re.compile(r"`([^`]+)`")
_TOPIC_WIDTH = 70


def _inline(text: str) -> str:
    """Escaped text, with ``code`` spans as ``<code>``."""
    return _CODE.sub(r"<code>\1</code>", html.escape(text))


@dataclass(frozen=True)
class RegisterTable:
    """Register entries, shown compact: ``repr`` one line each, ``_repr_html_`` collapsible."""

    entries: tuple[dict[str, Any], ...]
    total: int
    open: bool = True
    #: A topic longer than this is cut in the text form.
    topic_width: ClassVar[int] = _TOPIC_WIDTH

    @property
    def ids(self) -> list[str]:
        """The entries' ids, in register order."""
        return [e["id"] for e in self.entries]

    def _title(self) -> str:
        shown = len(self.entries)
        return "the assumptions register: " + (
            "every entry" if shown == self.total else f"{shown} of {self.total} entries"
        )

    def _line(self, entry: dict[str, Any]) -> str:
        """One entry in the text form: its id and topic (cut at :attr:`topic_width`)."""
        topic = entry["topic"]
        if len(topic) > self.topic_width:
            topic = topic[: self.topic_width - 1] + "…"
        return f"  {entry['id']}  {topic}"

    def _body_lines(self) -> list[str]:
        return [self._line(entry) for entry in self.entries]

    def __repr__(self) -> str:
        head = f"{self._title()} (open each in Jupyter for the spec's words and the simulator's choice)"
        return "\n".join([head, *self._body_lines()])

    def _row_html(self, entry: dict[str, Any]) -> str:
        """One entry: its id, and its topic opening to the spec's words, the choice in one
        sentence and a link to the whole entry in the contract."""
        entry_id = html.escape(entry["id"])
        link = f'<a href="{CONTRACT}#{entry_id.lower()}">the contract, entry {entry_id}</a>'
        return (
            "<tr>"
            f"<td style='vertical-align:top'><b>{entry_id}</b></td>"
            "<td style='text-align:left'><details>"
            f"<summary>{_inline(entry['topic'])}</summary>"
            f"<p><b>the spec:</b> {_inline(entry['spec'])}</p>"
            f"<p><b>the simulator:</b> {_inline(entry['summary'])}</p>"
            f"<p>The whole choice: {link}.</p>"
            "</details></td></tr>"
        )

    def _table_html(self, entries: Iterable[dict[str, Any]], heading: str = "topic") -> str:
        """``entries`` as one HTML table, one row each (:meth:`_row_html`); ``heading`` heads
        the topics' column."""
        rows = "".join(self._row_html(e) for e in entries)
        return (
            f"<table><thead><tr><th>entry</th><th style='text-align:left'>{html.escape(heading)}</th>"
            f"</tr></thead><tbody>{rows}</tbody></table>"
        )

    def _body_html(self) -> str:
        return self._table_html(self.entries)

    def _repr_html_(self) -> str:
        return (
            f"<details class='kit-register'{' open' if self.open else ''}>"
            f"<summary>{html.escape(self._title())}: click a topic for the spec's words and the "
            f"simulator's choice</summary>{self._body_html()}</details>"
        )


def register_table(ids: Iterable[str] | None = None, *, open: bool = True) -> RegisterTable:
    """The register entries ``ids`` (every entry when ``None``), in register order, as a compact
    table: one line per entry, the spec's words and the choice in one sentence on demand, with a
    link to the whole entry (see the module docstring).
    ``open``: whether the table itself starts unfolded in Jupyter (the entries never do).

    Example::

        >>> register_table(["A15"]).ids
        ['A15']

    Raises:
        ValueError: an id that is not a register entry.
    """
    every = register.assumptions()
    if ids is None:
        return RegisterTable(tuple(every), len(every), open)
    wanted = set(ids)
    unknown = sorted(wanted - {e["id"] for e in every})
    if unknown:
        raise ValueError(f"not register entries: {', '.join(unknown)}")
    return RegisterTable(tuple(e for e in every if e["id"] in wanted), len(every), open)
