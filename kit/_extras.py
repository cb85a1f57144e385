"""The parts of the kit that are extras, and the check each part makes where it starts.

``pip install partner-api-kit`` installs the client alone (httpx, joserfc, pandas,
openapi-core): enough for a partner back end to ``kit.connect("sandbox")`` and
``kit.webhooks.verify``. The simulator, the lab and the regression runner are extras
(pyproject.toml). Each part calls :func:`require` before it imports its dependencies, so a
missing extra is a :class:`~kit.errors.MissingExtra` naming the command that installs it, never
a bare ``ModuleNotFoundError`` from deep inside.

Example::

    >>> require("sim", "kit.connect('sim')")   # nothing: the extra is installed  # doctest: +SKIP
"""

from __future__ import annotations

import importlib.util

from kit.errors import MissingExtra

__all__ = ["EXTRAS", "missing", "require"]

#: Each extra → the top-level modules the kit imports from it (the lab's include the simulator's:
#: populations start simulators).
_SIM = ("fastapi", "uvicorn", "pydantic", "Crypto")
EXTRAS: dict[str, tuple[str, ...]] = {
    "sim": _SIM,
    "lab": (*_SIM, "ipywidgets", "IPython", "matplotlib", "tqdm", "pyarrow"),
    "regress": ("papermill", "ipykernel", "jupyter_client", "tqdm"),
    "dask": ("dask", "distributed"),
}


def missing(extra: str) -> tuple[str, ...]:
    """The modules of ``extra`` that cannot be imported here (none when it is installed).

    Example::

        >>> missing("sim")                     # doctest: +SKIP
        ()

    Raises:
        KeyError: ``extra`` is not one of :data:`EXTRAS`.
    """
    return tuple(name for name in EXTRAS[extra] if importlib.util.find_spec(name) is None)


def require(extra: str, what: str) -> None:
    """Raise :class:`~kit.errors.MissingExtra` when ``what`` (a part, as users name it) cannot
    run because ``extra`` is not installed.

    Example::

        >>> require("regress", "kit regress")   # doctest: +SKIP

    Raises:
        MissingExtra: a module of the extra is missing; the message names the extra.
    """
    absent = missing(extra)
    if absent:
        raise MissingExtra(extra, what, absent)
