"""What an analyst sees: a readable ``Summary`` (text and HTML), plots that display themselves in
a notebook and explain themselves in a REPL, and progress only when a person watches — nothing
that varies from run to run in a regression run (``KIT_REGRESS=1``). No simulator needed."""

from __future__ import annotations

import base64

import pandas as pd
import pytest
from matplotlib.figure import Figure

from kit import _env as env
from kit.lab import display
from kit.lab.populations.aggregate import Partial, steps_frame
from kit.lab.populations.plots import Plot
from kit.lab.populations.results import SimulationResult

ROWS = [
    (0, 0, "anonymous_session", "ok", 201, None, 3.5, 0),
    (0, 1, "create_account", "ok", 201, None, 1.25, 1),
    (1, 0, "anonymous_session", "error", 503, "injected-fault", 2.0, 4),
    (2, 0, "anonymous_session", "ok", 201, None, 4.0, 0),
    (2, 1, "create_account", "ok", 201, None, 1.5, 0),
    (2, 2, "p2p_transfer", "skipped", None, "no-eligible-recipient", 0.0, 0),
]


@pytest.fixture
def result() -> SimulationResult:
    steps = steps_frame(ROWS)
    settings = {"customers": 3, "seed": 7, "shards": 1, "journeys": ("onboarding",)}
    shards = pd.DataFrame(
        {"shard": [0], "first": [0], "customers": [3], "seconds": [0.1], "peak_rss_mb": [1.0]}
    )
    return SimulationResult(Partial.of(steps, customers=3, p2p_planned=1), settings, 0.1, shards, steps=steps)


def test_a_summary_reads_as_text_in_a_repl(result: SimulationResult, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = result.summary()
    text = repr(summary)
    assert text.startswith("Funnel\n") and "Summary(" not in text and "DataFrame" not in text
    assert len(text.splitlines()) < 30
    errors = text.split("Errors\n")[1].split("\n\n")[0].splitlines()
    assert errors[1].split() == ["anonymous_session", "error", "503", "injected-fault", "1"]
    assert errors[2].split() == ["p2p_transfer", "skipped", "-", "no-eligible-recipient", "1"]
    assert "<NA>" not in text and "NaN" not in text  # a missing status shows as "-"
    assert "p50_ms" not in text and "summary.text(latency=True)" in text  # wall clock: only on request
    assert "p50_ms" in summary.text(latency=True) and str(summary) == summary.text()
    assert "money_conserved=True" in text and "p2p_planned=1" in text


def test_a_summary_shows_tables_in_a_notebook(
    result: SimulationResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(env.REGRESS, raising=False)
    page = result.summary()._repr_html_()
    for part in ("<h4>Funnel</h4>", "<h4>Errors</h4>", "<h4>Retries</h4>", "<h4>P2P and ledger</h4>"):
        assert part in page
    assert "<h4>Latency per step (ms, wall clock)</h4>" in page and "p90_ms" in page
    assert "injected-fault" in page and "<table" in page
    monkeypatch.setenv(env.REGRESS, "1")  # stored outputs: the same every run
    stored = result.summary()._repr_html_()
    assert "p90_ms" not in stored and "<h4>Funnel</h4>" in stored
    assert result._repr_html_().startswith("<p>3 customers, 1 shards</p>")
    assert ".summary()" in repr(result)


def test_plots_display_in_a_notebook_and_explain_themselves_in_a_repl(
    result: SimulationResult, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(env.REGRESS, raising=False)
    monkeypatch.setenv("JPY_SESSION_NAME", "notebook.ipynb")  # a kernel JupyterLab started
    figures = [result.plot_funnel(), result.plot_latency(), result.plot_errors()]
    for fig in figures:
        assert isinstance(fig, Figure) and isinstance(fig, Plot) and fig.axes
        png = fig._repr_png_()
        assert png is not None and png.startswith(b"\x89PNG")  # what a notebook cell shows
        assert fig.name in repr(fig) and ".savefig(" in repr(fig) and ".show()" in repr(fig)
    assert [f.name for f in figures] == ["Funnel", "Latency", "Errors"]
    figures[0].show()  # the Agg backend of a test run: no window, a line saying how to save it
    assert "savefig('funnel.png')" in capsys.readouterr().out
    monkeypatch.setenv(env.REGRESS, "1")
    assert figures[0]._repr_png_() is None  # a regression run keeps the text line only
    # A kernel's inline matplotlib backend registers a PNG printer for every Figure, by type:
    # a regression run still shows the text line alone (and draws nothing).
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.core.pylabtools import select_figure_formats
    from IPython.display import display

    shell = InteractiveShell.instance()
    try:
        select_figure_formats(shell, {"png"})
        published: list[dict[str, object]] = []
        monkeypatch.setattr(shell.display_pub, "publish", lambda data, **_: published.append(data))
        display(figures[0])
        assert published == [{"text/plain": repr(figures[0])}]
        monkeypatch.delenv(env.REGRESS)
        # a person's notebook, a cell's value or display(): the figure's own PNG (fixed size,
        # no metadata), not the inline backend's; no pyplot import, no %matplotlib needed
        display(figures[0])
        shell.displayhook.compute_format_data(figures[0])
        own = base64.b64encode(figures[0]._repr_png_() or b"").decode("ascii")
        assert published[-2:] == [{"text/plain": repr(figures[0]), "image/png": own}] * 2
    finally:
        InteractiveShell.clear_instance()


def test_stored_plots_are_the_same_bytes_every_run_and_wall_clock_ones_stay_text(
    result: SimulationResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kernel that stores outputs (papermill, nbval, a re-execution; no person watching):
    the funnel and errors are PNGs of a fixed size, without metadata, byte for byte the same
    when drawn again; the latency plot, wall-clock, shows as its text line only."""
    monkeypatch.delenv(env.REGRESS, raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.setattr(display, "person_watching", lambda: False)
    monkeypatch.setattr("kit.lab.populations.plots.person_watching", lambda: False)
    for draw in (result.plot_funnel, result.plot_errors):
        first, again = draw()._repr_png_(), draw()._repr_png_()
        assert first is not None and first == again
        assert b"tEXt" not in first and b"Matplotlib" not in first  # no software name, no date
        width, height = int.from_bytes(first[16:20], "big"), int.from_bytes(first[20:24], "big")
        figure = draw()
        assert (width, height) == tuple(round(v * Plot.DPI) for v in figure.get_size_inches())
    latency = result.plot_latency()
    assert latency.wall_clock and latency._repr_png_() is None
    assert "a stored copy keeps this line" in repr(latency)
    monkeypatch.setattr("kit.lab.populations.plots.person_watching", lambda: True)
    assert (latency._repr_png_() or b"").startswith(b"\x89PNG")  # in JupyterLab: drawn


def test_plots_without_errors_or_retries_say_so() -> None:
    steps = steps_frame([(0, 0, "anonymous_session", "ok", 201, None, 1.0, 0)])
    part = Partial.of(steps, customers=1)
    from kit.lab.populations.plots import errors_figure

    fig = errors_figure(part.error_table(), part.retry_table())
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert texts == ["no errors", "no retries"]


@pytest.mark.parametrize(
    ("environ", "tty", "watching"),
    [
        ({}, False, False),  # papermill, nbval, a pipe
        ({}, True, True),  # a terminal
        ({"JPY_SESSION_NAME": "/nb/11.ipynb"}, False, True),  # a kernel of JupyterLab
        ({"JPY_SESSION_NAME": "/nb/11.ipynb", env.REGRESS: "1"}, True, False),  # kit regress
    ],
)
def test_progress_shows_only_when_a_person_watches(
    environ: dict[str, str], tty: bool, watching: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("JPY_SESSION_NAME", env.REGRESS):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)

    class Stderr:
        def isatty(self) -> bool:
            return tty

    monkeypatch.setattr("sys.stderr", Stderr())
    assert display.person_watching() is watching
    assert display.regression_run() is (environ.get(env.REGRESS) == "1")
