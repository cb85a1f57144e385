"""``kit.sim``: a stateful, deterministic simulator of the Partner API, served by uvicorn.

It needs the ``sim`` extra (``pip install 'partner-api-kit[sim]'``); without it, importing
``kit.sim`` says so. (The kit's entry points check first with ``kit._extras.require``; the
simulator's room may not import the client core, so it names the extra itself.)
"""

import importlib.util

#: What the sim extra installs that the simulator imports (top-level module names).
_EXTRA = frozenset({"fastapi", "starlette", "uvicorn", "pydantic", "Crypto", "multipart"})

try:
    if importlib.util.find_spec("fastapi") is None:  # imported only once an app needs it (kit.sim.app)
        raise ModuleNotFoundError("No module named 'fastapi'", name="fastapi")
    from kit.sim.app import create_app
    from kit.sim.settings import Settings
except ModuleNotFoundError as exc:
    if (exc.name or "").partition(".")[0] not in _EXTRA:
        raise
    raise ModuleNotFoundError(
        f"kit.sim needs the 'sim' extra: pip install 'partner-api-kit[sim]' (missing: {exc.name})",
        name=exc.name,
    ) from exc

__all__ = ["Settings", "create_app"]
