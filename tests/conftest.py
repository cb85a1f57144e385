"""Generic test set-up: the simulator fixtures every suite may ask for (``http``, ``token``,
``sim_server``…), declared once in :mod:`tests.sim.fixtures`.

``tests`` is a package, so pytest puts the repository root on ``sys.path`` and the
``tests.…`` helpers and ``kit`` import as they do from the root.
"""

from __future__ import annotations

import pytest

pytest_plugins = ["tests.sim.fixtures"]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "papermill: starts Jupyter kernels (about 2 s each)")
