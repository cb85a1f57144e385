"""``-p`` / ``-r`` parameters: read them as papermill would, refuse any that looks like a secret.

papermill writes every parameter into the executed notebook (a cell and
``metadata.papermill.parameters``), so a secret is never a parameter: it reaches the kernels
through the environment.

Example::

    >>> params = parse_parameters(["seed=7", "reason=lost"])
    >>> check_parameters(params)
    >>> params
    {'seed': 7, 'reason': 'lost'}
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from kit import _env as env
from kit.regress import leaks
from kit.regress.model import RegressError

__all__ = ["check_parameters", "parse_parameters", "parse_value"]

_SECRET_WORDS = ("secret", "token", "password", "key")
_INT = re.compile(r"[-+]?\d+")
_FLOAT = re.compile(r"[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?|[-+]?(inf|nan)", re.IGNORECASE)


def parse_value(text: str) -> Any:
    """A ``-p`` value as papermill reads one: int, float, bool, None, JSON list/object, else str.

    Example::

        >>> [parse_value(v) for v in ("7", "0.5", "true", "None", '["a", 1]', "sim")]
        [7, 0.5, True, None, ['a', 1], 'sim']

    Raises:
        Nothing: anything that is not a literal stays a string.
    """
    stripped = text.strip()
    lowered = stripped.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null", "~"):
        return None
    if _INT.fullmatch(stripped):
        return int(stripped)
    if _FLOAT.fullmatch(stripped):
        return float(stripped)
    if stripped[:1] in ("[", "{"):
        with contextlib.suppress(ValueError):
            return json.loads(stripped)
    if len(stripped) >= 2 and stripped[0] == stripped[-1] and stripped[0] in "\"'":
        return stripped[1:-1]  # a quoted value stays a string: -p seed='"7"'
    return text


def parse_parameters(items: Iterable[str], *, raw: bool = False) -> dict[str, Any]:
    """``["seed=7", "profile=sim"]`` → ``{"seed": 7, "profile": "sim"}`` (see :func:`parse_value`).

    Example::

        >>> parse_parameters(["seed=7", "card_type=virtual"])
        {'seed': 7, 'card_type': 'virtual'}

    With ``raw=True`` values stay strings (``-r amount=20.00`` keeps ``"20.00"``, which ``-p``
    would turn into the float 20.0 — money is never a float).

    Raises:
        RegressError: an item without ``=`` or with a key that is not a Python identifier.
    """
    params: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise RegressError(f"-p takes key=value with a Python identifier as key, not {key or item!r}")
        params[key] = text if raw else parse_value(text)
    return params


def check_parameters(parameters: Mapping[str, Any]) -> None:
    """Refuse parameters that would write a secret into the output notebooks.

    papermill records every parameter in the executed notebook (a cell and its metadata), so
    a key that looks like a secret (contains ``secret``, ``token``, ``password`` or ``key``)
    or a value that the leak scanner flags is refused.

    Example::

        >>> check_parameters({"profile": "sim", "seed": 7})
        >>> check_parameters({"client_secret": "…"})  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        kit.regress.RegressError: refusing parameter 'client_secret': its name contains 'secret'…

    Raises:
        RegressError: naming the parameter (never its value) and where secrets go instead.
    """
    for key, value in parameters.items():
        word = next((w for w in _SECRET_WORDS if w in key.lower()), None)
        if word is not None:
            raise RegressError(
                f"refusing parameter {key!r}: its name contains {word!r}, and papermill writes every "
                "parameter into the executed notebook. Secrets reach the kernels through the "
                f"environment ({env.CLIENT_ID}, {env.CLIENT_SECRET}, {env.ACCESS_TOKEN}), never as -p "
                "parameters"
            )
        found = leaks.scan_text(json.dumps(value, default=str), location=f"parameter {key!r}")
        if found:
            raise RegressError(
                f"refusing parameter {key!r}: its value looks like a {found[0].kind}, and papermill "
                "writes every parameter into the executed notebook"
            )
