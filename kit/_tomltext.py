"""TOML text of values, for the files the kit writes (``kit choices template``, ``kit choices
infer``, ``kit regress --write-choices``, a sandbox fixtures file): strings, numbers, booleans,
lists and inline tables. Each of those files carries comments for its reader, which a TOML
writer of data (``tomli-w``) does not write, so they are written line by line, every key and
value through here: the one escaper.

    >>> value({"session_token": "token", "x": [1, True]}), key("account-not-found"), key("a b")
    ('{ session_token = "token", x = [1, true] }', 'account-not-found', '"a b"')
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["key", "value"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def key(name: str) -> str:
    """``name`` as a TOML key: bare when it may be, else quoted (as :func:`value` quotes)."""
    return name if _BARE_KEY.fullmatch(name) else value(name)


def value(item: Any) -> str:
    """``item`` as a TOML value.

    Raises:
        TypeError: not a value an overlay holds.
    """
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, int | float):
        return repr(item)
    if isinstance(item, str):  # JSON's escapes are TOML's, but for DEL, which TOML escapes too
        return json.dumps(item, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(item, list | tuple):
        return "[" + ", ".join(value(v) for v in item) + "]"
    if isinstance(item, Mapping):
        inner = ", ".join(f"{key(str(k))} = {value(v)}" for k, v in item.items())
        return "{ " + inner + " }" if inner else "{}"
    raise TypeError(f"not a TOML value: {type(item).__name__}")
