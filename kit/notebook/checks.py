"""Named checks: what a notebook verifies, each passed, failed or skipped here — with the reason.

A notebook marks what it verifies with :func:`check`. A check that runs everywhere is a
``with`` block; a check that needs something a sandbox may lack (the simulator's control plane:
clock travel, fault injection, the deliveries log, funding; a webhook receiver the API can
reach) is a decorated function, run at once — or, where that is missing, reported **skipped**
with its reason, never silently passed::

    from kit.notebook import check

    with check("a closed card cannot be closed again"):
        ...

    @check("clock travel expires the session", needs="control plane")
    def _():
        api.sim.advance(600)
        ...

Each outcome is shown in the cell's output: a line of text (``✔ check passed: …``) and a
display with the MIME type :data:`MIME_TYPE` that ``kit regress`` counts per notebook
(``summary.md``, one JUnit testcase per check). A failing check shows its line and re-raises:
the notebook fails as before. Outside Jupyter the line is printed.

What a check needs is asked of a profile (:mod:`kit.profiles`): the one given to
:func:`use`, else that of the latest client made through :func:`kit.notebook.connect`, else
``sim``. The client's webhook receiver listens on this machine's loopback, so
``needs="webhook receiver"`` is also met on any profile whose API is on loopback (``kit serve
--no-control`` standing in for a sandbox), never by a remote sandbox.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict
from types import TracebackType
from typing import NamedTuple, TypeVar

from kit.notebook.companion import COMPANION
from kit.notebook.outcome import CheckOutcome
from kit.profiles import Profile

__all__ = ["MIME_TYPE", "NEEDS", "CheckOutcome", "Need", "check", "results", "skip", "use"]

T = TypeVar("T")

#: The MIME type of a check's display (``kit regress`` reads it from the executed notebook).
MIME_TYPE = "application/vnd.partner-api-kit.check+json"


class Need(NamedTuple):
    """What a check may need: the reason shown when it is missing, and the question that asks
    a profile (and the API's base URL) whether it has it."""

    reason: str
    has: Callable[[Profile, str | None], bool]


#: What a check may need, by name; each asks the profile.
NEEDS: dict[str, Need] = {
    "control plane": Need(
        "needs the simulator's control plane (clock, faults, funding, deliveries log), "
        "which a sandbox does not have",
        lambda profile, _url: profile.control_plane,
    ),
    "webhook receiver": Need(
        "needs a webhook receiver the API can reach: the kit's listens on this machine's "
        "loopback and this API is elsewhere; verify deliveries on your own server "
        "(kit.webhooks.verify)",
        lambda profile, url: profile.reaches_receiver(url),
    ),
    "simulator": Need(
        "needs the simulator's own answers (svc-assumptions names its register entries), "
        "which a partner's sandbox does not send",
        lambda profile, _url: profile.server_choices,
    ),
}


def use(profile: str | Profile | type[Profile] | None) -> None:
    """Judge ``needs`` against ``profile`` (``None``: back to the latest client's)."""
    COMPANION.use(profile)


def results() -> list[CheckOutcome]:
    """Every outcome of this process so far, in order."""
    return COMPANION.results()


def _emit(outcome: CheckOutcome) -> None:
    COMPANION.record(outcome)
    shell = None
    if "IPython" in sys.modules:
        from IPython import get_ipython

        shell = get_ipython()
    if shell is None:
        print(outcome.line)
        return
    from IPython.display import display

    data = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(outcome).items()}
    display({MIME_TYPE: data, "text/plain": outcome.line}, raw=True)


def skip(name: str, reason: str) -> CheckOutcome:
    """Report the check ``name`` as skipped for ``reason`` (when no ``needs`` says it)."""
    outcome = CheckOutcome(name, "skipped", reason)
    _emit(outcome)
    return outcome


class check:  # lower case: used as ``with check(…)`` and ``@check(…)``, like a function
    """A named check (see the module docstring): a ``with`` block, or a decorated function
    that runs at once — or is reported skipped when this profile lacks what it ``needs``.

    Example::

        >>> with check("two plus two"):
        ...     assert 2 + 2 == 4
        ✔ check passed: two plus two

    Raises:
        ValueError: an unknown ``needs`` (the known ones are named).
        TypeError: a ``with`` block that ``needs`` something (it could not be skipped).
    """

    def __init__(self, name: str, *, needs: str | Sequence[str] | None = None) -> None:
        wanted = (needs,) if isinstance(needs, str) else tuple(needs or ())
        unknown = [n for n in wanted if n not in NEEDS]
        if unknown:
            raise ValueError(f"check {name!r}: unknown needs {unknown}; known: {', '.join(NEEDS)}")
        self.name = name
        self.needs = wanted
        self.outcome: CheckOutcome | None = None

    def __repr__(self) -> str:
        return f"check({self.name!r}, needs={self.needs!r})"

    def missing(self) -> str | None:
        """Why this check cannot run on the current profile, or ``None`` when it can."""
        profile, base_url = COMPANION.judged()
        for name in self.needs:
            need = NEEDS[name]
            if not need.has(profile, base_url):
                return need.reason
        return None

    def _finish(self, failed: BaseException | None) -> None:
        reason = "" if failed is None else f"{type(failed).__name__}: {str(failed)[:200]}".rstrip(": ")
        self.outcome = CheckOutcome(self.name, "failed" if failed else "passed", reason, self.needs)
        _emit(self.outcome)

    def __enter__(self) -> check:
        if self.needs:
            raise TypeError(
                f"check {self.name!r} needs {', '.join(self.needs)}: write it as a decorated function "
                f"(@check({self.name!r}, needs=...) above def _(): ...) so that it can be skipped"
            )
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._finish(error)

    def __call__(self, fn: Callable[[], T]) -> T | None:
        why = self.missing()
        if why is not None:
            self.outcome = CheckOutcome(self.name, "skipped", why, self.needs)
            _emit(self.outcome)
            return None
        try:
            value = fn()
        except BaseException as exc:
            self._finish(exc)
            raise
        self._finish(None)
        return value
