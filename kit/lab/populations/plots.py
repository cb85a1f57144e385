"""Matplotlib figures for simulation results (used by :class:`kit.lab.populations.results.SimulationResult`).

Each function returns a :class:`Plot`: a ``matplotlib.figure.Figure`` built with the
object-oriented API (nothing registered with pyplot's global figure list) that knows how to show
itself:

- **in a notebook** it is displayed as a PNG when it is a cell's value
  (``result.plot_funnel()``) or passed to ``display()`` — no ``%matplotlib`` or pyplot needed;
- **in a REPL** its repr says what it is and how to see it; ``plot.show()`` opens a window
  when matplotlib has an interactive backend, else says where to save it;
- **in a regression run** (``KIT_REGRESS=1``) it shows as its text line only: latencies are
  wall-clock, and stored outputs must not change from run to run.

A figure drawn from wall-clock figures (the latency plot: ``wall_clock=True``) is a PNG only
where a person is watching (JupyterLab, :func:`kit.lab.display.person_watching`); a kernel
that stores outputs (papermill, nbval, a notebook re-executed) keeps its text line. The other
figures' PNGs are the same bytes on every run: a fixed size and dpi, and no metadata (no
matplotlib version, no date).

Example::

    >>> import pandas as pd
    >>> fig = funnel_figure({"run": pd.DataFrame({"stage": ["started", "done"],
    ...                                          "customers": [10, 7], "share": [1.0, 0.7]})})
    >>> len(fig.axes), fig.name
    (1, 'Funnel')
"""

from __future__ import annotations

import base64
import io
import sys
from collections.abc import Mapping
from typing import Any

import matplotlib
import pandas as pd
from matplotlib.figure import Figure

from kit.lab.display import person_watching, regression_run

__all__ = ["Plot", "errors_figure", "funnel_figure", "latency_figure"]


class Plot(Figure):
    """A figure that displays itself in a notebook and explains itself in a REPL (see above)."""

    #: Dots per inch of the PNG a notebook shows (with the figure's fixed size: its pixels).
    DPI = 100

    def __init__(self, name: str, *args: Any, wall_clock: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.name = name
        self.wall_clock = wall_clock

    def _text_only(self) -> bool:
        """Whether this figure shows as its text line: in a regression run, and for a
        wall-clock figure wherever no person is watching (the outputs are being stored)."""
        return regression_run() or (self.wall_clock and not person_watching())

    def __repr__(self) -> str:
        width, height = self.get_size_inches()
        shown = "shown inline in a notebook"
        if self.wall_clock:
            shown = "wall-clock figures: drawn in JupyterLab, a stored copy keeps this line"
        return (
            f"<Plot {self.name!r}: {width:g}×{height:g} in, {len(self.axes)} axes — {shown}; "
            ".show() opens a window, .savefig('plot.png') saves it>"
        )

    def _ipython_display_(self) -> None:
        """How IPython shows this figure: its PNG (:meth:`_repr_png_`) with its text line, or
        the text line alone (:meth:`_text_only`). Published here, not by a kernel's inline
        matplotlib backend, which renders every ``Figure`` to PNG by its type (a tight bounding
        box, matplotlib's metadata: bytes that change with its version), and in a regression
        run would draw images it must not keep (notebook 12's three plots: ~1 s)."""
        from IPython.display import publish_display_data

        data = {"text/plain": repr(self)}
        png = self._repr_png_()
        if png is not None:
            data["image/png"] = base64.b64encode(png).decode("ascii")
        publish_display_data(data)

    def _repr_png_(self) -> bytes | None:
        """The PNG a notebook shows, the same bytes for the same figure (none where the text
        line stays: :meth:`_text_only`)."""
        if self._text_only():
            return None
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", dpi=self.DPI, metadata={"Software": None})
        return buffer.getvalue()

    def show(self, warn: bool = True) -> None:
        """Show the figure: displayed in a notebook, a window on an interactive matplotlib
        backend, else a line saying how to save it."""
        if _in_kernel():
            from IPython.display import display

            display(self)
            return
        if not _interactive_backend():
            print(
                f"No window on matplotlib backend {matplotlib.get_backend()!r}: "
                f".savefig('{self.name.lower()}.png') saves the plot."
            )
            return
        import matplotlib.pyplot as plt

        manager = plt.figure().canvas.manager  # a window of pyplot's, showing this figure
        if manager is not None:
            manager.canvas.figure = self
            self.set_canvas(manager.canvas)
            plt.show(block=False)


def _in_kernel() -> bool:
    """Whether this runs in a Jupyter kernel (IPython's shell over ZMQ), not a terminal."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return type(shell).__name__ == "ZMQInteractiveShell"


def _interactive_backend() -> bool:
    from matplotlib.backends import BackendFilter, backend_registry

    return matplotlib.get_backend().lower() not in backend_registry.list_builtin(
        BackendFilter.NON_INTERACTIVE
    )


def _present(fig: Plot) -> Plot:
    """In an interactive Python prompt (not a notebook) with a window to open, open it."""
    if hasattr(sys, "ps1") and not _in_kernel() and _interactive_backend():
        fig.show()
    return fig


def funnel_figure(funnels: Mapping[str, pd.DataFrame]) -> Plot:
    """Horizontal bars of the share of customers reaching each stage, one colour per run.

    ``funnels`` maps a label to a funnel table (columns ``stage``, ``customers``, ``share``).
    """
    fig = Plot("Funnel", figsize=(7, 4), layout="constrained")
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
    ax.set_xticks(range(0, 101, 25))  # shares stop at 100 %: no tick in the labels' room
    ax.set_xlabel("% of customers who started (bar labels: customers)")
    ax.set_title("Funnel")
    if n > 1:
        ax.legend(loc="lower right")
    return _present(fig)


def latency_figure(steps: pd.DataFrame) -> Plot:
    """Box plots of ``latency_ms`` per step (log scale); skipped steps are left out."""
    fig = Plot("Latency", figsize=(8, 4), layout="constrained", wall_clock=True)
    ax = fig.add_subplot()
    done = steps[steps["outcome"] != "skipped"]
    groups = [(str(name), g["latency_ms"].to_numpy()) for name, g in done.groupby("step", observed=True)]
    if groups:
        ax.boxplot([g for _, g in groups], tick_labels=[n for n, _ in groups], showfliers=False)
        ax.set_yscale("log")
        ax.tick_params(axis="x", labelrotation=45)
    ax.set_ylabel("latency (ms, wall clock)")
    ax.set_title("Latency per step (whiskers 1.5 IQR, outliers hidden)")
    return _present(fig)


def errors_figure(errors: pd.DataFrame, retries: pd.DataFrame) -> Plot:
    """Two panels: steps that did not succeed, by step and code (``errors``: the error mix,
    columns ``step``, ``code``, ``count``); and retries per step (``retries``: ``step``,
    ``retries``)."""
    fig = Plot("Errors", figsize=(9, 4), layout="constrained")
    left, right = fig.subplots(1, 2)
    if errors.empty:
        left.text(0.5, 0.5, "no errors", ha="center", va="center")
        left.set_axis_off()
    else:
        table = errors.assign(
            step=errors["step"].astype(str), code=errors["code"].fillna("-").astype(str)
        ).pivot_table(index="step", columns="code", values="count", aggfunc="sum", fill_value=0, sort=False)
        table.plot.barh(stacked=True, ax=left)
        left.invert_yaxis()
        left.set_xlabel("steps")
        left.legend(fontsize=7, title="code")
    left.set_title("Steps not completed")
    if retries.empty:
        right.text(0.5, 0.5, "no retries", ha="center", va="center")
        right.set_axis_off()
    else:
        right.barh([str(s) for s in retries["step"]], retries["retries"].to_numpy())
        right.invert_yaxis()
        right.set_xlabel("retries")
    right.set_title("Retries (faults absorbed)")
    return _present(fig)
