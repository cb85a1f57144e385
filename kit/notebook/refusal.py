"""A refusal the notebook expects, whatever code the server refuses with.

The spec shows no error codes: the codes are the simulator's choices (register entries). A
notebook that expects a refusal catches it with :class:`refused`, goes on, and checks the code
as a choice check (a difference, not a crash, on a server that chose another code)::

    with refused("card-already-closed", choice="A16") as r:
        api.cards.close(card_id, reason="lost")
    r.status, r.code        # what the server answered (a code and status are safe to show)

Without ``expect_code`` the refusal is only caught and recorded. A call that is not refused
raises :class:`~kit.notebook.expect.Mismatch` ("expected a refusal, got a success"): inside a
check that is a failure (or a difference, for a choice check off the simulator). Either way the
refusal is an expectation of the checks running around it (:func:`kit.notebook.expect.tally`).
"""

from __future__ import annotations

from types import TracebackType

from kit.errors import ApiError
from kit.notebook.checks import check
from kit.notebook.expect import Mismatch, tally

__all__ = ["refused"]


class refused:  # lower case: used as ``with refused(…)``, like a function
    """Catch the :class:`~kit.errors.ApiError` of the block (see the module docstring).

    ``expect_code``: the code the simulator refuses with; the check ``name`` (default
    ``"refused with <code>"``) compares it as a choice check of ``choice`` (required with
    ``expect_code``). After the block: ``error``, ``code``, ``status`` (``None`` until then).

    Raises:
        ValueError: ``expect_code`` without ``choice``; an unknown entry.
        Mismatch: the block was not refused (on leaving it).
        CheckFailed: on the simulator, another code than ``expect_code``.
    """

    def __init__(
        self, expect_code: str | None = None, *, choice: str | None = None, name: str | None = None
    ) -> None:
        if expect_code is not None and not choice:
            raise ValueError(
                "refused(expect_code=…) needs choice='A..': the spec shows no codes, so the code "
                "is a register entry's choice"
            )
        self.expect_code = expect_code
        self.name = name or f"refused with {expect_code}"
        self._check = check(self.name, choice=choice) if expect_code is not None else None
        self.error: ApiError | None = None
        self.code: str | None = None
        self.status: int | None = None

    def __repr__(self) -> str:
        return f"refused({self.expect_code!r}, code={self.code!r}, status={self.status!r})"

    def __enter__(self) -> refused:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> bool:
        if error is None or isinstance(error, ApiError):
            tally()  # a refusal was expected: the checks around this block expected something
        if error is None:
            raise Mismatch(f"{self.name}: the call", "a refusal", "a success")
        if not isinstance(error, ApiError):
            return False
        self.error, self.code, self.status = error, error.code, error.status
        if self._check is not None:
            with self._check as c:
                c.expect(error.code, self.expect_code, what="problem code", show=True)
        return True
