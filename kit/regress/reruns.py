"""``kit regress --reruns N``: a failed notebook runs again, up to N times, in a fresh kernel.

A remote sandbox is flaky by nature: on any profile but ``sim`` a notebook that fails and then
passes on a rerun is **flaky** — reported so in ``summary.md``, ``results.json`` and
``junit.xml`` (``<flakyFailure>``), never a silent pass, and it does not fail the run. One
that fails every attempt is a failure (``<rerunFailure>`` for each rerun). On ``sim`` the
run is seeded and deterministic: a notebook that passes only on a rerun is a failure, "not
deterministic". A leak is never rerun: an attempt that leaked ends the notebook as leaked.

Example::

    >>> first = NotebookResult("07_p2p.ipynb", "failed", 3.0, Path("out/07_p2p.ipynb"),
    ...                        cell="cell 4", error="TimeoutError: read")
    >>> final = NotebookResult("07_p2p.ipynb", "passed", 2.0, Path("out/07_p2p.ipynb"))
    >>> combine([first], final, deterministic=False).status
    'flaky'
    >>> combine([first], final, deterministic=True).error
    'NotDeterministic: failed on attempt 1, passed on attempt 2 on a seeded simulator'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from kit.regress.model import Attempt, CheckResult, NotebookResult

__all__ = ["combine", "rerunnable"]


def rerunnable(result: NotebookResult) -> bool:
    """True for a notebook that failed and leaked nothing (a leak is never rerun away).

    Example::

        >>> rerunnable(NotebookResult("00.ipynb", "leaked", 1.0, Path("out")))
        False

    Raises:
        Nothing.
    """
    return result.status == "failed" and not result.findings


def combine(
    failed: Sequence[NotebookResult], final: NotebookResult, *, deterministic: bool
) -> NotebookResult:
    """One notebook's result from its failed attempts (in order) and its last attempt.

    ``final`` passed: ``flaky`` (its attempts kept; a check that failed in an earlier attempt
    and passed in the last is ``flaky`` too, with the earlier reason), or — ``deterministic`` (the ``sim``
    profile) — ``failed`` as not deterministic, with the first failure's cell and traceback.
    ``final`` failed or leaked: as it is, with the earlier attempts kept. No earlier attempt:
    ``final`` unchanged.

    Raises:
        Nothing.
    """
    if not failed:
        return final
    attempts = tuple(Attempt(f.message, f.details, f.seconds) for f in failed)
    kept = dataclasses.replace(final, attempts=attempts)
    if final.status != "passed":
        return kept
    if not deterministic:
        return dataclasses.replace(kept, status="flaky", checks=_flaky_checks(failed, final))
    first = failed[0]
    return dataclasses.replace(
        kept,
        status="failed",
        cell=first.cell,
        error=(
            f"NotDeterministic: failed on attempt 1, passed on attempt {len(failed) + 1} "
            "on a seeded simulator"
        ),
        details=f"first attempt: {first.message}\n{first.details}".strip(),
    )


def _flaky_checks(failed: Sequence[NotebookResult], final: NotebookResult) -> tuple[CheckResult, ...]:
    """The last attempt's checks, those that failed in an earlier attempt marked ``flaky``."""
    earlier = {c.name: c for f in failed for c in f.checks if c.outcome == "failed"}
    return tuple(
        dataclasses.replace(c, outcome="flaky", reason=earlier[c.name].reason)
        if c.outcome == "passed" and c.name in earlier
        else c
        for c in final.checks
    )
