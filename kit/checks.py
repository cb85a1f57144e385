"""Named checks: what a notebook verifies, each passed, failed or skipped here — with the reason.

A notebook marks what it verifies with :func:`check`. A check that runs everywhere is a
``with`` block; a check that needs something a sandbox may lack (the simulator's control plane:
clock travel, fault injection, the deliveries log, funding; a webhook receiver the API can
reach) is a decorated function, run at once — or, where that is missing, reported **skipped**
with its reason, never silently passed::

    from kit.checks import check

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

Which profile applies: the one given to :func:`use`, else that of the latest
``kit.connect()`` in this process, else ``sim``. The client's webhook receiver listens on this
machine's loopback, so ``needs="webhook receiver"`` is also met on any profile whose API is on
loopback (``kit serve --no-control`` standing in for a sandbox), never by a remote sandbox.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from types import TracebackType
from typing import Any, NamedTuple, TypeVar

from kit.env import is_loopback_url

__all__ = ["MIME_TYPE", "NEEDS", "Need", "Outcome", "check", "profile", "results", "skip", "use"]

T = TypeVar("T")

#: The MIME type of a check's display (``kit regress`` reads it from the executed notebook).
MIME_TYPE = "application/vnd.partner-api-kit.check+json"


class Need(NamedTuple):
    """What a check may need: the profiles that have it, the reason shown when one does not,
    and whether any profile has it when the API is on this machine's loopback."""

    profiles: frozenset[str]
    reason: str
    on_loopback: bool = False


#: What a check may need, by name.
NEEDS: dict[str, Need] = {
    "control plane": Need(
        frozenset({"sim"}),
        "needs the simulator's control plane (clock, faults, funding, deliveries log), "
        "which a sandbox does not have",
    ),
    "webhook receiver": Need(
        frozenset({"sim"}),
        "needs a webhook receiver the API can reach: the kit's listens on this machine's "
        "loopback and this API is elsewhere; verify deliveries on your own server "
        "(kit.webhooks.verify)",
        on_loopback=True,
    ),
    "simulator": Need(
        frozenset({"sim"}),
        "needs the simulator's own answers (svc-assumptions names its register entries), "
        "which a partner's sandbox does not send",
    ),
}
_MARKS = {"passed": "✔", "failed": "✘", "skipped": "⊘"}


@dataclass(frozen=True)
class Outcome:
    """One check's outcome: ``passed``, ``failed`` or ``skipped`` (``reason`` says why)."""

    name: str
    outcome: str
    reason: str = ""
    needs: tuple[str, ...] = ()

    @property
    def line(self) -> str:
        """``✔ check passed: <name>`` (and ``: <reason>`` when skipped or failed)."""
        tail = f" — {self.reason}" if self.reason else ""
        return f"{_MARKS[self.outcome]} check {self.outcome}: {self.name}{tail}"


_state: dict[str, Any] = {"profile": None, "connected": None, "base_url": None}
_results: list[Outcome] = []
_lock = threading.Lock()


def use(profile_name: str | None) -> None:
    """Judge ``needs`` against ``profile_name`` (``None``: back to the latest ``kit.connect``)."""
    _state["profile"] = profile_name


def note_connect(profile_name: str, base_url: str | None = None) -> None:
    """Called by ``kit.connect``: the profile and API base URL of the latest client."""
    _state["connected"] = profile_name
    _state["base_url"] = base_url


def api_on_loopback() -> bool:
    """Whether the latest ``kit.connect`` in this process points at this machine's loopback."""
    return is_loopback_url(_state["base_url"])


def profile() -> str:
    """The profile checks are judged against (see the module docstring)."""
    return str(_state["profile"] or _state["connected"] or "sim")


def results() -> list[Outcome]:
    """Every outcome of this process so far, in order."""
    with _lock:
        return list(_results)


def _emit(outcome: Outcome) -> None:
    with _lock:
        _results.append(outcome)
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


def skip(name: str, reason: str) -> Outcome:
    """Report the check ``name`` as skipped for ``reason`` (when no ``needs`` says it)."""
    outcome = Outcome(name, "skipped", reason)
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
        self.outcome: Outcome | None = None

    def __repr__(self) -> str:
        return f"check({self.name!r}, needs={self.needs!r})"

    def missing(self) -> str | None:
        """Why this check cannot run on the current profile, or ``None`` when it can."""
        for name in self.needs:
            need = NEEDS[name]
            if profile() not in need.profiles and not (need.on_loopback and api_on_loopback()):
                return need.reason
        return None

    def _finish(self, failed: BaseException | None) -> None:
        reason = "" if failed is None else f"{type(failed).__name__}: {str(failed)[:200]}".rstrip(": ")
        self.outcome = Outcome(self.name, "failed" if failed else "passed", reason, self.needs)
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
            self.outcome = Outcome(self.name, "skipped", why, self.needs)
            _emit(self.outcome)
            return None
        try:
            value = fn()
        except BaseException as exc:
            self._finish(exc)
            raise
        self._finish(None)
        return value
