"""The one bridge between the client core and the simulator: starting the embedded server.

The client never imports ``kit.sim`` anywhere else, and here only inside a function, so that
``import kit`` stays free of FastAPI and uvicorn and a sandbox run never loads the simulator.
Tests read the import graph to keep it that way (``tests/test_layout.py``,
``tests/client/test_public_api.py``).
"""

from __future__ import annotations

from kit._extras import require

__all__ = ["embedded_base_url"]


def embedded_base_url() -> str:
    """Start the process-wide embedded simulator (or reuse it) and return its base URL.

    Example::

        >>> embedded_base_url().startswith("http://127.0.0.1:")   # doctest: +SKIP
        True

    Raises:
        MissingExtra: the ``sim`` extra is not installed (the message says how to install it).
        RuntimeError: the simulator could not start (wrapped by ``kit.connect``).
    """
    require("sim", "kit.connect('sim')")
    from kit.sim.server import shared_server  # the only import of kit.sim in the client

    return shared_server().base_url
