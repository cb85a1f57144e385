"""``result.summary()``: a population's funnel, error mix, retries, P2P and ledger figures, and
latency percentiles — readable as text in a REPL or ``print``, as tables in a notebook.

``print(summary)`` and ``repr(summary)`` are the deterministic part (no wall-clock figure: a
seed gives the same text every run); ``summary.text(latency=True)`` adds the percentiles. The
notebook view (``_repr_html_``) shows the latency table too, except in a regression run
(``KIT_REGRESS=1``), whose stored outputs must not change from run to run.

Example::

    >>> import pandas as pd
    >>> s = Summary(pd.DataFrame({"stage": ["started"], "customers": [3]}), pd.DataFrame(),
    ...             pd.DataFrame(), pd.DataFrame(), {"money_conserved": True})
    >>> print(s)
    Funnel
      stage  customers
    started          3
    <BLANKLINE>
    Errors
    (none)
    <BLANKLINE>
    Retries
    (none)
    <BLANKLINE>
    P2P and ledger
    money_conserved=True
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Mapping
from typing import Any

import pandas as pd

from kit.lab.display import regression_run

__all__ = ["Summary"]

_HINT = "(latency percentiles: summary.text(latency=True) or summary.latency — wall clock, they vary)"


def _dashed(frame: pd.DataFrame) -> pd.DataFrame:
    """Missing values as ``-`` (``na_rep`` does not reach nullable columns, which print ``<NA>``)."""
    shown = frame.copy()
    for column in shown.columns:
        if shown[column].isna().any():
            shown[column] = shown[column].astype(object).where(shown[column].notna(), "-")
    return shown


def _three(value: float) -> str:
    """Floats (shares, conversions, milliseconds) with three decimals, the same in every run."""
    return f"{value:.3f}"


def _text(frame: pd.DataFrame) -> str:
    return _dashed(frame).to_string(index=False, float_format=_three) if len(frame) else "(none)"


def _html(frame: pd.DataFrame, empty: str) -> str:
    if not len(frame):
        return f"<p><i>{html.escape(empty)}</i></p>"
    return str(_dashed(frame).to_html(index=False, border=0, float_format=_three))


@dataclasses.dataclass(frozen=True, repr=False)
class Summary:
    """Funnel, error mix, retries, latency percentiles per step, and the P2P/ledger figures.

    ``str(summary)`` / ``repr(summary)`` are the deterministic part; ``summary.text(latency=True)``
    adds the percentiles (wall-clock, they vary). Each part is also a DataFrame attribute.
    """

    funnel: pd.DataFrame
    errors: pd.DataFrame
    retries: pd.DataFrame
    latency: pd.DataFrame
    p2p: Mapping[str, Any]

    def text(self, *, latency: bool = False) -> str:
        """A plain-text report; ``latency=False`` keeps it deterministic for a seed."""
        parts = [
            "Funnel",
            _text(self.funnel),
            "",
            "Errors",
            _text(self.errors),
            "",
            "Retries",
            _text(self.retries),
            "",
            "P2P and ledger",
            ", ".join(f"{k}={v}" for k, v in self.p2p.items()),
        ]
        if latency:
            parts += ["", "Latency per step (ms, wall clock)", _text(self.latency)]
        return "\n".join(parts)

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return f"{self.text()}\n{_HINT}"

    def _repr_html_(self) -> str:
        p2p = ", ".join(f"{html.escape(k)}={html.escape(str(v))}" for k, v in self.p2p.items())
        parts = [
            "<h4>Funnel</h4>",
            _html(self.funnel, "no customers"),
            "<h4>Errors</h4>",
            _html(self.errors, "no errors"),
            "<h4>Retries</h4>",
            _html(self.retries, "no retries"),
            f"<h4>P2P and ledger</h4><p>{p2p}</p>",
        ]
        if regression_run():  # stored outputs stay the same from run to run
            parts.append(f"<p><i>{html.escape(_HINT)}</i></p>")
        else:
            parts += ["<h4>Latency per step (ms, wall clock)</h4>", _html(self.latency, "no calls")]
        return "".join(parts)
