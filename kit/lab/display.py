"""Who is looking: a person (a terminal, JupyterLab) or a regression run whose stored outputs
must not change. The lab's tools ask before they draw a progress bar or a widget.

Example::

    >>> import os
    >>> os.environ["KIT_REGRESS"] = "1"
    >>> regression_run(), person_watching()
    (True, False)
    >>> del os.environ["KIT_REGRESS"]
"""

from __future__ import annotations

import os
import sys

from kit import _env as env

__all__ = ["person_watching", "regression_run"]


def regression_run() -> bool:
    """``KIT_REGRESS=1`` (set by ``kit regress`` in its kernels): outputs are the regression
    contract, so nothing that varies from run to run (progress, wall-clock figures, widgets)."""
    return os.environ.get(env.REGRESS) == "1"


def person_watching() -> bool:
    """Not a regression run, and a person can see the output: a terminal on stderr, or a kernel
    started by a Jupyter server (JupyterLab sets ``JPY_SESSION_NAME`` for its kernels; papermill
    and nbval do not)."""
    if regression_run():
        return False
    return "JPY_SESSION_NAME" in os.environ or sys.stderr.isatty()
