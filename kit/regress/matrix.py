"""Regression matrices: notebooks × named parameter sets (``kit regress --matrix FILE.toml``).

A matrix file holds ``[sets.NAME]`` tables of papermill parameters; every selected notebook
runs once per set, into ``OUT/NAME/``, and each (notebook, set) pair is one JUnit testcase
(``classname="notebooks.NAME"``, ``name="NOTEBOOK[NAME]"``), so a CI reader sees both. Every
set goes through the same refusal as ``-p`` (:func:`kit.regress.params.check_parameters`)
before any kernel starts, and every executed notebook through the same leak scan.

A matrix file::

    [sets.calm]
    seed = 7

    [sets.stolen]
    seed = 11
    reason = "stolen"
    amount = "20.00"        # TOML keeps strings strings: money stays exact

Example::

    >>> sets = parse_matrix('[sets.a]\\nseed = 7\\n[sets.b]\\nseed = 11\\n')
    >>> sets
    {'a': {'seed': 7}, 'b': {'seed': 11}}
    >>> [j.label for j in jobs([Path("nb/04_x.ipynb")], Path("out"), {"profile": "sim"}, sets)]
    ['04_x.ipynb[a]', '04_x.ipynb[b]']
"""

from __future__ import annotations

import os
import re
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kit.regress.model import RegressError
from kit.regress.params import check_parameters

__all__ = ["Job", "check_sets", "jobs", "load_matrix", "longest_first", "parse_matrix"]

_SET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: each job is one run
class Job:
    """One notebook with one parameter set: what a worker executes and a report row shows.

    ``set_name`` is ``None`` outside a matrix; ``label`` is the notebook's file name, with
    ``[set]`` after it in a matrix (``04_onboarding_and_kyc.ipynb[stolen]``).
    """

    source: Path
    output: Path
    params: Mapping[str, Any] = field(default_factory=dict)
    set_name: str | None = None

    @property
    def label(self) -> str:
        return self.source.name if self.set_name is None else f"{self.source.name}[{self.set_name}]"


def parse_matrix(text: str, *, origin: str = "the matrix") -> dict[str, dict[str, Any]]:
    """The parameter sets of a matrix file's text (``[sets.NAME]`` tables), each checked.

    Example::

        >>> parse_matrix('[sets.quick]\\nseed = 3\\n')
        {'quick': {'seed': 3}}

    Raises:
        RegressError: not TOML, no ``sets``, a key beside ``sets``, a set that is not a table,
            a set name that is not ``[A-Za-z0-9_.-]``, or a parameter refused as a secret —
            naming the set and the key, never the value.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RegressError(f"{origin} is not TOML: {exc}") from None
    extra = sorted(set(data) - {"sets"})
    if extra:
        raise RegressError(f"{origin}: unknown top-level key(s) {extra}; parameter sets go in [sets.NAME]")
    sets = data.get("sets")
    if not isinstance(sets, dict) or not sets:
        raise RegressError(f"{origin} names no parameter set: add [sets.NAME] tables")
    parsed: dict[str, dict[str, Any]] = {}
    for name, params in sets.items():
        if not _SET_NAME.fullmatch(name):
            raise RegressError(f"{origin}: set name {name!r} must be letters, digits, '_', '.' or '-'")
        if not isinstance(params, dict):
            raise RegressError(f"{origin}: sets.{name} must be a table of parameters")
        bad = [k for k in params if not k.isidentifier()]
        if bad:
            raise RegressError(f"{origin}: sets.{name} has key(s) that are not Python identifiers: {bad}")
        parsed[name] = dict(params)
    check_sets(parsed)
    return parsed


def check_sets(sets: Mapping[str, Mapping[str, Any]]) -> None:
    """Refuse a set holding a parameter ``-p`` would refuse (a secret-looking key or value).

    Example::

        >>> check_sets({"calm": {"seed": 7}})

    Raises:
        RegressError: naming the set and the key, never the value.
    """
    for name, params in sets.items():
        try:
            check_parameters(params)
        except RegressError as exc:
            raise RegressError(f"set {name!r}: {exc.message}") from None


def load_matrix(path: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """The parameter sets of a matrix file (see :func:`parse_matrix`).

    Example::

        >>> load_matrix("ci/matrix.toml")          # doctest: +SKIP
        {'calm': {'seed': 7}, 'stolen': {'seed': 11, 'reason': 'stolen'}}

    Raises:
        RegressError: the file cannot be read, or :func:`parse_matrix` refuses it.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise RegressError(f"cannot read the matrix file {str(file)!r}: {exc.strerror or exc}") from None
    return parse_matrix(text, origin=f"matrix file {str(file)!r}")


def jobs(
    notebooks: Sequence[Path],
    out: Path,
    base: Mapping[str, Any],
    sets: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Job]:
    """Every (notebook, set) pair to run, notebook by notebook; one job per notebook without sets.

    ``base`` (the ``-p``/``-r`` parameters) applies to every set; a key given both ways is
    refused (which value was meant is not guessable).

    Raises:
        RegressError: a parameter given by ``-p`` and by a set.
    """
    if not sets:
        return [Job(p, out / p.name, dict(base)) for p in notebooks]
    for name, params in sets.items():
        both = sorted(set(base) & set(params))
        if both:
            raise RegressError(f"parameter(s) {both} given both by -p/-r and by set {name!r}: keep one")
    return [
        Job(p, out / name / p.name, {**base, **params}, name)
        for p in notebooks
        for name, params in sets.items()
    ]


def longest_first(run: Sequence[Job], last_junit: Path) -> list[Job]:
    """``run`` with the jobs that took longest in the last run (``last_junit``, the previous
    ``junit.xml`` of the same output folder) first, so that a long notebook does not start
    last and run alone; jobs not in it keep their order, ahead of the known ones (unknown may be
    long). Without a readable previous report, ``run`` as it is.

    Example::

        >>> [j.label for j in longest_first(run, Path("out/regress/junit.xml"))]   # doctest: +SKIP
        ['12_population_simulation.ipynb', '10_whats_new_in_1_2_0.ipynb', ...]

    Raises:
        Nothing: an unreadable report only means no reordering.
    """
    try:
        cases = ET.parse(last_junit).getroot().findall(".//testcase")
    except (OSError, ET.ParseError):
        return list(run)
    seconds: dict[tuple[str, str], float] = {}
    for case in cases:
        try:
            seconds[(case.get("classname", ""), case.get("name", ""))] = float(case.get("time", ""))
        except ValueError:
            continue

    def key(job: Job) -> tuple[str, str]:
        if job.set_name is None:
            return "notebooks", job.source.stem
        return f"notebooks.{job.set_name}", f"{job.source.stem}[{job.set_name}]"

    return sorted(run, key=lambda job: -seconds.get(key(job), float("inf")))
