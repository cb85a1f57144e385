"""The project's data: the assumptions register, the spec's facts, the personas.

Both the client and the simulator read these files (``data/`` in a checkout, ``kit/_data``
in an installed wheel). Every "not shown" of the spec that the simulator had to decide is an
entry of the register; where a decision is a value (a lifetime, a list), code reads it from
here so that the register and the behaviour cannot drift apart.
"""

from __future__ import annotations

import json
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["assumption", "assumptions", "data_dir", "personas", "spec", "value"]


def data_dir() -> Path:
    """The folder holding the register, the spec facts and the personas."""
    packaged = Path(__file__).with_name("_data")
    return packaged if packaged.is_dir() else Path(__file__).resolve().parent.parent / "data"


@cache
def _assumptions() -> tuple[dict[str, Any], ...]:
    with open(data_dir() / "assumptions.toml", "rb") as f:
        return tuple(tomllib.load(f)["assumption"])


def assumptions() -> list[dict[str, Any]]:
    """Every register entry: ``id``, ``topic``, ``spec``, ``choice``, ``enforced_in``, ``value``."""
    return [dict(a) for a in _assumptions()]


def assumption(assumption_id: str) -> dict[str, Any]:
    """One register entry by id (``"A06"``); KeyError when there is none."""
    for entry in _assumptions():
        if entry["id"] == assumption_id:
            return dict(entry)
    raise KeyError(f"no assumption {assumption_id!r} in the register")


def value(assumption_id: str) -> dict[str, Any]:
    """The machine-readable value of a register entry (empty when it has none)."""
    return dict(assumption(assumption_id).get("value", {}))


@cache
def spec() -> dict[str, Any]:
    """Facts the spec states (version, event names, the 1.2.0 change list…)."""
    with open(data_dir() / "spec.toml", "rb") as f:
        return tomllib.load(f)


@cache
def _personas() -> tuple[dict[str, Any], ...]:
    with open(data_dir() / "personas.json", encoding="utf-8") as f:
        return tuple(json.load(f)["personas"])


def personas() -> list[dict[str, Any]]:
    """Synthetic people (obviously fake numbers) for onboarding flows."""
    return [json.loads(json.dumps(p)) for p in _personas()]
