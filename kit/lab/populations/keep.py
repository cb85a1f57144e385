"""A population's result kept on disk: ``result.save(DIR)`` and ``kit.simulate.load(DIR)``.

``DIR/result.json`` holds the format version (:data:`FORMAT`), the kit's version, the run's
settings, its wall-clock seconds and its aggregates (the shards' combined
:class:`~kit.lab.populations.aggregate.Partial`: funnel counts, error mix, retries, latency
histograms, the ledger check); ``DIR/steps/``, ``DIR/ledger/``, ``DIR/shards.parquet`` and
``DIR/calls.parquet`` the tables (Parquet, money as decimal strings). A later kernel has
``.summary()``, the tables and the plots of the loaded result; a result of another format
version is refused (:class:`SavedResultError`).

The published personas a run on a partner's sandbox played (PII) are never written: such a
result keeps how many there were, and its ``plans`` cannot be drawn again.

Example::

    >>> result = kit.simulate.run(customers=50, seed=7, progress=False)   # doctest: +SKIP
    >>> result.save("runs/calm")                                          # doctest: +SKIP
    >>> kit.simulate.load("runs/calm").summary()                          # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kit.errors import KitError
from kit.lab.populations.aggregate import Partial, steps_frame

__all__ = ["FILE", "FORMAT", "SavedResultError", "read", "save"]

#: The version of the saved shape; :func:`load` refuses another.
FORMAT = 1
#: The small JSON beside the Parquet tables.
FILE = "result.json"
_MONEY = ("opening", "sent", "received", "expected", "balance")
_COUNTERS = ("reached", "retried", "retries")


class SavedResultError(KitError):
    """A saved population result cannot be loaded: not one, unreadable, or another format."""

    hint = "save it again with this kit's kit.simulate (result.save(DIR))"


def _partial(part: Partial) -> dict[str, Any]:
    return {
        "customers": part.customers,
        "p2p_planned": part.p2p_planned,
        **{name: dict(getattr(part, name)) for name in _COUNTERS},
        "errors": [[*key, n] for key, n in part.errors.items()],
        "latency": {
            step: {str(i): int(counts[i]) for i in np.flatnonzero(counts)} | {"bins": len(counts)}
            for step, counts in part.latency.items()
        },
        "latency_max": dict(part.latency_max),
        "transfers": part.transfers,
        "accounts": part.accounts,
        "opening": str(part.opening),
        "balance": str(part.balance),
        "mismatched": part.mismatched,
        "unchecked": part.unchecked,
    }


def _unpartial(data: dict[str, Any]) -> Partial:
    latency = {}
    for step, sparse in data["latency"].items():
        counts = np.zeros(int(sparse.pop("bins")), dtype=np.int64)
        for index, n in sparse.items():
            counts[int(index)] = n
        latency[step] = counts
    return Partial(
        customers=data["customers"],
        p2p_planned=data["p2p_planned"],
        **{name: Counter(data[name]) for name in _COUNTERS},
        errors=Counter({(s, o, st, c): n for s, o, st, c, n in data["errors"]}),
        latency=latency,
        latency_max=dict(data["latency_max"]),
        transfers=data["transfers"],
        accounts=data["accounts"],
        opening=Decimal(data["opening"]),
        balance=Decimal(data["balance"]),
        mismatched=data["mismatched"],
        unchecked=data["unchecked"],
    )


def _settings(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings as JSON: the reason mix as pairs (its keys include ``None``), the
    published personas left out (PII), their number kept."""
    kept = dict(settings)
    mix = kept.get("reason_mix")
    kept["reason_mix"] = [[k, v] for k, v in mix.items()] if mix else None
    personas = kept.pop("personas", None)
    if personas is not None:
        kept["personas_omitted"] = len(personas)
    kept["journeys"] = list(kept.get("journeys", ()))
    return kept


def _unsettings(kept: dict[str, Any]) -> dict[str, Any]:
    settings = dict(kept)
    mix = settings.get("reason_mix")
    settings["reason_mix"] = {k: v for k, v in mix} if mix else None
    settings["journeys"] = tuple(settings.get("journeys", ()))
    settings.setdefault("personas", None)
    return settings


def save(result: Any, folder: str | os.PathLike[str]) -> Path:
    """Write ``result`` (a :class:`~kit.lab.populations.results.SimulationResult`) to ``folder``
    (created; a result already there is replaced); the folder.

    Raises:
        OSError: the folder cannot be written.
    """
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    if result.out is not None and target.resolve() == result.out.resolve():
        _tables(result, target)  # a streamed run's own folder: its steps and ledger are there
        return _head(result, target)
    for name in ("steps", "ledger"):
        shutil.rmtree(target / name, ignore_errors=True)
        (target / name).mkdir()
    if result._steps is None and result.out is not None:  # streamed: copy the Parquet parts
        for part in sorted((result.out / "steps").glob("*.parquet")):
            shutil.copyfile(part, target / "steps" / part.name)
    else:
        result.steps.to_parquet(target / "steps" / "part-0.parquet", index=False)
    ledger = result.ledger.copy()
    for column in _MONEY:
        ledger[column] = [None if v is None or pd.isna(v) else str(v) for v in ledger[column]]
    ledger.to_parquet(target / "ledger" / "part-0.parquet", index=False)
    _tables(result, target)
    return _head(result, target)


def _tables(result: Any, target: Path) -> None:
    result.shards.to_parquet(target / "shards.parquet", index=False)
    result.calls.to_parquet(target / "calls.parquet", index=False)


def _head(result: Any, target: Path) -> Path:
    from kit import __version__

    head = {
        "format": FORMAT,
        "kind": "kit.simulate result",
        "kit_version": __version__,
        "elapsed_s": result.elapsed_s,
        "steps_in_memory": result._steps is not None,
        "settings": _settings(dict(result.settings)),
        "partial": _partial(result.partial),
    }
    (target / FILE).write_text(json.dumps(head, indent=1, default=str) + "\n", encoding="utf-8")
    return target


def read(folder: str | os.PathLike[str]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """What :func:`save` wrote to ``folder``: the positional and keyword arguments of a
    :class:`~kit.lab.populations.results.SimulationResult` (:func:`kit.simulate.load` builds it).

    Raises:
        SavedResultError: no saved result there, or one of another format version (named).
    """
    source = Path(folder)
    try:
        head = json.loads((source / FILE).read_text(encoding="utf-8"))
    except OSError:
        raise SavedResultError(f"no saved population result in {str(source)!r} (no {FILE})") from None
    except ValueError:
        raise SavedResultError(f"{str(source / FILE)!r} is not JSON") from None
    found = head.get("format") if isinstance(head, dict) else None
    if not isinstance(head, dict) or head.get("kind") != "kit.simulate result" or found != FORMAT:
        raise SavedResultError(
            f"{str(source)!r} holds a population result of format {found!r}; this kit reads format {FORMAT}"
        )
    steps = steps_frame(pd.read_parquet(source / "steps")) if head["steps_in_memory"] else None
    calls = pd.read_parquet(source / "calls.parquet").astype({"status": "Int64", "calls": "int64"})
    shards = pd.read_parquet(source / "shards.parquet")
    partial, settings = _unpartial(head["partial"]), _unsettings(head["settings"])
    kwargs = {"steps": steps, "out": source, "calls": calls}
    return (partial, settings, float(head["elapsed_s"]), shards), kwargs
