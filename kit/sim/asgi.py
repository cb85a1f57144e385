"""Reading and writing the ASGI messages: the one JSON decoder and encoder, and the two places
that step past Starlette's general classes.

:func:`decode_json` is where every JSON request body (and every decrypted payload) is read,
:func:`encode_json` where every JSON answer, every problem body and every webhook delivery's
body is written (a dialect's translation, ``kit.sim.dialect``, and ``kit.sim.delivery`` read
and write through them too), so that a transform of the member names can be applied in one
place.

Where the simulator reads or writes headers without Starlette's ``Headers`` and
``MutableHeaders`` it is because a paired ``make bench`` run showed it worth at least 2 % of a
figure; each such helper names its entry in ``benchmarks/bench.py``'s ``FIXES`` and has a
parity test beside it (``tests/sim/test_sim_asgi.py``): it must read and write exactly what
Starlette's own would.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["decode_json", "encode_json", "first", "put"]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


#: ``json.loads(text, parse_constant=_reject_constant)``, one decoder for every request.
_STRICT = json.JSONDecoder(parse_constant=_reject_constant)
_LENIENT = json.JSONDecoder()
#: ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)``, one encoder for every answer.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
#: ``json.dumps(value, separators=(",", ":"))``: a webhook delivery's body, ASCII only.
_ASCII_ENCODER = json.JSONEncoder(separators=(",", ":"))


def decode_json(text: str | bytes, *, constants: bool = False) -> Any:
    """A JSON text (or bytes, in the encoding ``json.loads`` detects) as ``json.loads`` reads it;
    ``NaN`` and ``Infinity`` refused (a ``ValueError``) unless ``constants``."""
    if isinstance(text, bytes):
        text = text.decode(json.detect_encoding(text), "surrogatepass")
    return (_LENIENT if constants else _STRICT).decode(text)


def encode_json(value: Any, *, ascii_only: bool = False) -> bytes:
    """The wire encoding of every JSON answer and problem: compact, UTF-8; ``ascii_only``: any
    other character escaped (``\\u00e9``), as a webhook delivery's body is written."""
    return (_ASCII_ENCODER if ascii_only else _ENCODER).encode(value).encode()


def first(scope: Mapping[str, Any], name: bytes) -> str | None:
    """A request's first header ``name`` (lower-case bytes) from its ASGI scope, as Starlette's
    ``request.headers.get`` reads it, without building its ``Headers``.

    FIXES: "… a partner request's headers read off the raw ASGI list" (benchmark 1, round 2).
    """
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return None


def put(raw: list[tuple[bytes, bytes]], names: set[bytes], name: bytes, value: bytes) -> None:
    """``MutableHeaders.__setitem__`` on a raw list whose ``names`` are known: the first such
    header replaced, later ones dropped; appended when there is none.

    FIXES: "ServiceHeaders and svc-session-expires-at set on the raw header list".
    """
    if name not in names:
        raw.append((name, value))
        names.add(name)
        return
    found = [i for i, (k, _) in enumerate(raw) if k == name]
    for i in reversed(found[1:]):
        del raw[i]
    raw[found[0]] = (name, value)
