"""Named checks: what a notebook verifies, each passed, failed or skipped here — with the reason.

A notebook marks what it verifies with :func:`check`. A check that runs everywhere is a
``with`` block; a check that needs something a sandbox may lack (the simulator's control plane:
clock travel, fault injection, the deliveries log, funding; a webhook receiver the API can
reach) is a decorated function, run at once — or, where that is missing, reported **skipped**
with its reason, never silently passed. A whole story section that needs the control plane or
the receiver is a cell tagged ``needs-control`` or ``needs-receiver`` (:mod:`kit.notebook.tags`):
``kit regress`` skips it where it cannot run and reports its checks skipped the same way::

    from kit.notebook import check, expect_true, problem_code

    with check("a closed card cannot be closed again", choice="A16") as c:
        c.expect(error.code, problem_code("card-already-closed"), what="problem code", show=True)

    @check("clock travel moves the clock", needs="control plane", choice="A45")
    def _():
        before = api.sim.clock()
        expect_true(api.sim.advance(60) > before, "the clock moved on", want="a later time")

Each outcome is shown in the cell's output: a line of text (``✔ check passed: …``) and a
display with the MIME type :data:`MIME_TYPE` that ``kit regress`` counts per notebook
(``summary.md``, one JUnit testcase per check). A failing check shows its line and raises
:class:`CheckFailed` (from the error inside it, naming the check and what was expected and
what came): the notebook fails as before. Outside Jupyter the line is printed.

A check states what it expects through its comparisons (``c.expect``, ``c.expect_in``,
``c.expect_true`` or the same functions of :mod:`kit.notebook.expect`, counted toward every
check running): one that made none **fails**, "expected nothing", on every profile — a check
that verifies nothing is a defect of the notebook. A check that has nothing to compare on some
profile is not entered there: :func:`skip` reports it skipped and says why.

Every check names its basis (:mod:`kit.notebook.basis`): ``spec="<statement id>"`` or
``choice="A.."``. A choice check that does not hold on a profile other than ``sim``
(:attr:`kit._profiles.Profile.knows_choices`) **differs** instead of failing::

    ≠ check differs: card id format — differs from A41: card id: the simulator chooses
      'card_ + 20 hex', this server answered 'UUID'

and the notebook goes on; the display carries ``outcome: "differs"``, ``kind`` and ``basis``.

What a check needs is asked of a profile (:mod:`kit._profiles`): the one given to
:func:`use`, else that of the latest client made through :func:`kit.notebook.connect`, else
``sim``. The client's webhook receiver listens on this machine's loopback, so
``needs="webhook receiver"`` is also met on any profile whose API is on loopback (``kit serve
--no-control`` standing in for a sandbox), never by a remote sandbox.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable, Collection, Sequence
from types import TracebackType
from typing import Any, NamedTuple, TypeVar

from kit._profiles import Profile
from kit.notebook import expect as _expect
from kit.notebook.basis import Basis, chooser
from kit.notebook.companion import COMPANION
from kit.notebook.observe import Observation, observe
from kit.notebook.outcome import CheckOutcome

__all__ = [
    "EXPECTED_NOTHING",
    "MIME_TYPE",
    "NEEDS",
    "CheckFailed",
    "CheckOutcome",
    "Need",
    "check",
    "results",
    "skip",
    "use",
]

T = TypeVar("T")

#: The MIME type of a check's display (``kit regress`` reads it from the executed notebook).
MIME_TYPE = "application/vnd.partner-api-kit.check+json"
#: The reason of a check that ended without making any expectation.
EXPECTED_NOTHING = (
    "expected nothing: the check made no expectation (c.expect, c.expect_in, c.expect_true); "
    "where it has nothing to compare, kit.notebook.skip says why"
)


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


def _emit(outcome: CheckOutcome, line: str | None = None) -> None:
    """Record ``outcome`` and show it: its JSON for ``kit regress``, and ``line`` (else
    :attr:`CheckOutcome.line`) for the reader."""
    COMPANION.record(outcome)
    shown = line or outcome.line
    shell = None
    if "IPython" in sys.modules:
        from IPython import get_ipython

        shell = get_ipython()
    if shell is None:
        print(shown)
        return
    from IPython.display import display

    display({MIME_TYPE: outcome.data(), "text/plain": shown}, raw=True)


def skip(name: str, reason: str, *, spec: str | None = None, choice: str | None = None) -> CheckOutcome:
    """Report the check ``name`` as skipped for ``reason`` (when no ``needs`` says it).

    Raises:
        ValueError: an unknown basis id (see :func:`check`).
    """
    basis = Basis.of(spec=spec, choice=choice)
    outcome = CheckOutcome(name, "skipped", reason, kind=basis.kind, basis=basis.id)
    _emit(outcome)
    return outcome


class CheckFailed(AssertionError):
    """A check failed: raised from the error inside it, with the check's name and what was
    expected and what came (:mod:`kit.notebook.expect`), so the notebook stops as before."""


def _reason(error: BaseException, tb: TracebackType | None) -> str:
    """What went wrong, in one line: a :class:`~kit.notebook.expect.Mismatch`'s own words, else
    the error's class and message; a bare ``assert`` (no message) names its source line."""
    if isinstance(error, _expect.Mismatch):
        return str(error)[:300]
    message = str(error)
    if not message and isinstance(error, AssertionError):
        frames = traceback.extract_tb(tb or error.__traceback__)
        line = (frames[-1].line or "").strip() if frames else ""
        at = f" at `{line[:160]}`" if line else ""
        return f"AssertionError (a bare assert without a message){at}"
    return f"{type(error).__name__}: {message[:200]}".rstrip(": ")


class check:  # lower case: used as ``with check(…)`` and ``@check(…)``, like a function
    """A named check (see the module docstring): a ``with`` block, or a decorated function
    that runs at once — or is reported skipped when this profile lacks what it ``needs``.

    Its basis (:mod:`kit.notebook.basis`): ``spec="card.1"`` (a statement of the spec: fails on
    any server that violates it) or ``choice="A15"`` (a register entry: fails on the simulator;
    on any other profile, a miss is reported as a **difference** — ``≠ check differs: … —
    differs from A15: …`` — and the notebook goes on). Compare with :meth:`expect`,
    :meth:`expect_in` and :meth:`expect_true`, so that a miss says what was expected and what
    came; a failure is re-raised as :class:`CheckFailed` (an ``AssertionError``) naming the check.

    A check that made no comparison fails: ``expected nothing`` (see the module docstring).

    Example::

        >>> with check("two plus two") as c:
        ...     c.expect(2 + 2, 4, what="the sum", show=True)
        ✔ check passed: two plus two
        >>> with check("close reasons are the register's", choice="A15") as c:  # doctest: +SKIP
        ...     c.expect(reasons, chosen("A15", "reasons"), what="close reasons", show=True)

    Raises:
        ValueError: an unknown ``needs``, an unknown basis id, or both ``spec`` and ``choice``.
        TypeError: a ``with`` block that ``needs`` something (it could not be skipped); no basis
            once :func:`kit.notebook.require_basis` is on.
    """

    def __init__(
        self,
        name: str,
        *,
        needs: str | Sequence[str] | None = None,
        spec: str | None = None,
        choice: str | None = None,
    ) -> None:
        wanted = (needs,) if isinstance(needs, str) else tuple(needs or ())
        unknown = [n for n in wanted if n not in NEEDS]
        if unknown:
            raise ValueError(f"check {name!r}: unknown needs {unknown}; known: {', '.join(NEEDS)}")
        try:
            self.basis = Basis.of(spec=spec, choice=choice)
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"check {name!r}: {exc}") from None
        self.name = name
        self.needs = wanted
        #: The line shown when it passes, where the story says it better than "check passed"
        #: (:func:`kit.notebook.start`'s reset); any other outcome shows its usual line.
        self.said_when_passed: str | None = None
        self.outcome: CheckOutcome | None = None
        self.observed: tuple[Observation, ...] = ()
        self._tally = _expect.Tally()

    @property
    def made(self) -> int:
        """How many expectations its body made so far (none: it fails, "expected nothing")."""
        return self._tally.made

    def __repr__(self) -> str:
        basis = f", {self.basis.kind}={self.basis.id!r}" if self.basis else ""
        return f"check({self.name!r}, needs={self.needs!r}{basis})"

    # -- comparisons: what was expected and what came ------------------------------------------
    def expect(self, got: Any, want: Any, *, what: str, show: bool = False) -> None:
        """``got == want`` (:func:`kit.notebook.expect.expect`)."""
        _expect.expect(got, want, what=what, show=show)

    def expect_in(self, got: Any, allowed: Collection[Any], *, what: str, show: bool = False) -> None:
        """``got in allowed`` (:func:`kit.notebook.expect.expect_in`)."""
        _expect.expect_in(got, allowed, what=what, show=show)

    def expect_true(self, condition: object, what: str, *, got: Any = None, want: str = "true") -> None:
        """``condition`` holds (:func:`kit.notebook.expect.expect_true`)."""
        _expect.expect_true(condition, what, got=got, want=want)

    # -- running -------------------------------------------------------------------------------
    def missing(self) -> str | None:
        """Why this check cannot run on the current profile, or ``None`` when it can."""
        profile, base_url = COMPANION.judged()
        for name in self.needs:
            need = NEEDS[name]
            if not need.has(profile, base_url):
                return need.reason
        return None

    def _differs(self, error: BaseException, tb: TracebackType | None) -> str | None:
        """The difference this error is, for a choice check off the simulator (else ``None``);
        what it observed of the register's keys goes to :attr:`observed`."""
        if self.basis.kind != "choice" or not isinstance(error, Exception):
            return None
        profile, _ = COMPANION.judged()
        if profile.knows_choices:
            return None
        entry = self.basis.id
        if isinstance(error, _expect.Mismatch):
            if error.shown is not None:
                self.observed = tuple(observe(*error.shown, COMPANION.reads(), entry))
            named = list(dict.fromkeys(o.entry for o in self.observed)) or [entry]
            of = "" if named == [entry] else f" (in a check of {entry})"
            return (
                f"differs from {', '.join(named)}{of}: {error.what}: {chooser(named[0])} chooses "
                f"{error.want}, this server answered {error.got}"
            )
        return f"differs from {entry}: this server answered otherwise — {_reason(error, tb)}"

    def _finish(self, failed: BaseException | None, tb: TracebackType | None = None) -> bool:
        """Record and show the outcome; True when the error is a difference (not raised)."""
        kind, basis = self.basis.kind, self.basis.id
        if failed is None:
            passed = self._tally.made > 0
            outcome, reason = ("passed", "") if passed else ("failed", EXPECTED_NOTHING)
            self.outcome = CheckOutcome(self.name, outcome, reason, self.needs, kind, basis)
            _emit(self.outcome, self.said_when_passed if passed else None)
            return False
        difference = self._differs(failed, tb)
        if difference is not None:
            observed = tuple(o.data() for o in self.observed)
            self.outcome = CheckOutcome(self.name, "differs", difference, self.needs, kind, basis, observed)
            _emit(self.outcome)
            return True
        self.outcome = CheckOutcome(self.name, "failed", _reason(failed, tb), self.needs, kind, basis)
        _emit(self.outcome)
        return False

    def _failure(self) -> CheckFailed:
        assert self.outcome is not None
        where = f" ({self.basis.describe()})" if self.basis else ""
        return CheckFailed(f"check {self.name!r}{where} failed: {self.outcome.reason}")

    def __enter__(self) -> check:
        if self.needs:
            raise TypeError(
                f"check {self.name!r} needs {', '.join(self.needs)}: write it as a decorated function "
                f"(@check({self.name!r}, needs=...) above def _(): ...) so that it can be skipped"
            )
        self._tally = _expect.Tally().__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> bool:
        self._tally.__exit__(kind, error, tb)
        if self._finish(error, tb):
            return True  # a difference: reported, the notebook goes on
        if error is not None and isinstance(error, Exception) and not isinstance(error, CheckFailed):
            raise self._failure() from error
        if error is None and self._failed():
            raise self._failure()  # it expected nothing
        return False

    def _failed(self) -> bool:
        return self.outcome is not None and self.outcome.outcome == "failed"

    def __call__(self, fn: Callable[[], T]) -> T | None:
        why = self.missing()
        if why is not None:
            self.outcome = CheckOutcome(self.name, "skipped", why, self.needs, self.basis.kind, self.basis.id)
            _emit(self.outcome)
            return None
        try:
            with _expect.Tally() as self._tally:
                value = fn()
        except BaseException as exc:
            if self._finish(exc, exc.__traceback__):
                return None
            if isinstance(exc, Exception) and not isinstance(exc, CheckFailed):
                raise self._failure() from exc
            raise
        self._finish(None)
        if self._failed():
            raise self._failure()  # it expected nothing
        return value
