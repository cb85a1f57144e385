"""Matplotlib figures for simulation results (used by :class:`kit.lab.results.SimulationResult`).

Figures are built with the object-oriented API (``matplotlib.figure.Figure``), not pyplot:
nothing is registered with pyplot's global figure list, so a notebook shows a figure only when
a cell returns or displays it, and a headless run (nbval) stores no image unless asked to.

Example::

    >>> import pandas as pd
    >>> fig = funnel_figure({"run": pd.DataFrame({"stage": ["started", "done"],
    ...                                          "customers": [10, 7], "share": [1.0, 0.7]})})
    >>> len(fig.axes)
    1
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
from matplotlib.figure import Figure

__all__ = ["errors_figure", "funnel_figure", "latency_figure"]


def funnel_figure(funnels: Mapping[str, pd.DataFrame]) -> Figure:
    """Horizontal bars of the share of customers reaching each stage, one colour per run.

    ``funnels`` maps a label to a funnel table (columns ``stage``, ``customers``, ``share``).
    """
    fig = Figure(figsize=(7, 4), layout="constrained")
    ax = fig.add_subplot()
    n = max(1, len(funnels))
    height = 0.8 / n
    for k, (label, funnel) in enumerate(funnels.items()):
        stages = [str(s) for s in funnel["stage"]]
        y = [i + k * height for i in range(len(stages))]
        bars = ax.barh(y, funnel["share"] * 100, height=height, label=label)
        ax.bar_label(bars, labels=[str(c) for c in funnel["customers"]], padding=2, fontsize=8)
        if k == 0:
            ax.set_yticks([i + (n - 1) * height / 2 for i in range(len(stages))], labels=stages)
    ax.invert_yaxis()
    ax.set_xlim(0, 130)  # room for the bar labels and the legend
    ax.set_xlabel("% of customers who started (bar labels: customers)")
    ax.set_title("Funnel")
    if n > 1:
        ax.legend(loc="lower right")
    return fig


def latency_figure(steps: pd.DataFrame) -> Figure:
    """Box plots of ``latency_ms`` per step (log scale); skipped steps are left out."""
    fig = Figure(figsize=(8, 4), layout="constrained")
    ax = fig.add_subplot()
    done = steps[steps["outcome"] != "skipped"]
    groups = [(str(name), g["latency_ms"].to_numpy()) for name, g in done.groupby("step", observed=True)]
    if groups:
        ax.boxplot([g for _, g in groups], tick_labels=[n for n, _ in groups], showfliers=False)
        ax.set_yscale("log")
        ax.tick_params(axis="x", labelrotation=45)
    ax.set_ylabel("latency (ms, wall clock)")
    ax.set_title("Latency per step (whiskers 1.5 IQR, outliers hidden)")
    return fig


def errors_figure(steps: pd.DataFrame) -> Figure:
    """Two panels: steps that did not succeed, by step and code; and retries per step."""
    fig = Figure(figsize=(9, 4), layout="constrained")
    left, right = fig.subplots(1, 2)
    bad = steps[steps["outcome"] != "ok"]
    if bad.empty:
        left.text(0.5, 0.5, "no errors", ha="center", va="center")
        left.set_axis_off()
    else:
        table = bad.groupby(["step", "code"], observed=True).size().unstack(fill_value=0)
        table.index = table.index.astype(str)
        table.plot.barh(stacked=True, ax=left)
        left.invert_yaxis()
        left.set_xlabel("steps")
        left.legend(fontsize=7, title="code")
    left.set_title("Steps not completed")
    retries = steps.groupby("step", observed=True)["retries"].sum()
    retries = retries[retries > 0]
    if retries.empty:
        right.text(0.5, 0.5, "no retries", ha="center", va="center")
        right.set_axis_off()
    else:
        right.barh([str(s) for s in retries.index], retries.to_numpy())
        right.invert_yaxis()
        right.set_xlabel("retries")
    right.set_title("Retries (faults absorbed)")
    return fig
