"""The one bridge between the client core and the simulator: starting the embedded server.

The client never imports ``kit.sim`` anywhere else, and here only inside a function, so that
``import kit`` stays free of FastAPI and uvicorn and a sandbox run never loads the simulator.
Tests read the import graph to keep it that way (``tests/test_layout.py``,
``tests/client/test_public_api.py``).
"""

from __future__ import annotations

from kit._choices import ChoicesError, Overlay
from kit._extras import require
from kit.errors import ConfigError

__all__ = ["embedded_base_url"]


def embedded_base_url(choices: Overlay | None = None) -> str:
    """Start the process-wide embedded simulator (or reuse it) and return its base URL; with a
    choice overlay, the one this process runs with that overlay (a second one if another runs).

    Example::

        >>> embedded_base_url().startswith("http://127.0.0.1:")   # doctest: +SKIP
        True

    Raises:
        MissingExtra: the ``sim`` extra is not installed (the message says how to install it).
        RuntimeError: the simulator could not start (wrapped by ``kit.connect``).
        ConfigError: the simulator refuses the overlay (entry and key named).
    """
    require("sim", "kit.connect('sim')")
    from kit.sim.server import shared_server  # the only import of kit.sim in the client

    try:
        return shared_server(choices).base_url
    except ChoicesError as exc:
        raise ConfigError(f"dialect file refused: {exc}") from None
