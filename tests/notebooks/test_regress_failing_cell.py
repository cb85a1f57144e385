"""Which cell a failed notebook's row names (``kit.regress.results``), read off the executed
notebook papermill wrote: a cell it marked failed or left running, else the first with an error
output, else — a time-out whose interrupt output was not yet written, as happens on a loaded
machine — the last cell papermill started."""

from __future__ import annotations

from typing import Any

from kit.regress.results import _failing_cell


def _cell(status: str, started: bool, count: int | None, outputs: list[dict[str, Any]] | None = None) -> dict:
    papermill = {
        "status": status,
        "start_time": "2026-12-02T07:00:00" if started else None,
        "exception": False,
    }
    return {
        "cell_type": "code",
        "execution_count": count,
        "outputs": outputs or [],
        "metadata": {"papermill": papermill},
    }


def test_a_time_out_without_its_interrupt_output_names_the_last_cell_started() -> None:
    nb = {"cells": [_cell("completed", True, 1), _cell("completed", True, 2), _cell("completed", True, 3),
                    _cell("pending", False, None), _cell("pending", False, None)]}  # fmt: skip
    assert _failing_cell(nb) == ("cell 3 (In [3])", None)


def test_a_cell_with_an_error_output_is_named_before_the_last_started() -> None:
    error = {"output_type": "error", "ename": "KeyboardInterrupt", "evalue": "", "traceback": []}
    nb = {
        "cells": [
            _cell("completed", True, 1),
            _cell("completed", True, 2, [error]),
            _cell("completed", True, 3),
        ]
    }
    assert _failing_cell(nb) == ("cell 2 (In [2])", error)


def test_a_notebook_no_cell_of_which_started_names_none() -> None:
    assert _failing_cell({"cells": [_cell("pending", False, None)]}) == (None, None)
