"""One named check's outcome (:mod:`kit.notebook.checks`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["MARKS", "OUTCOMES", "CheckOutcome"]

#: The mark each outcome is shown with.
MARKS = {"passed": "✔", "failed": "✘", "skipped": "⊘", "differs": "≠"}
#: What a check can end as: ``differs`` is a choice check that did not hold off the simulator.
OUTCOMES = tuple(MARKS)


@dataclass(frozen=True)
class CheckOutcome:
    """One check's outcome: ``passed``, ``failed``, ``skipped`` or ``differs`` (``reason`` says
    why); ``kind`` and ``basis`` what it rests on (``spec`` and a spec statement id, ``choice``
    and a register entry id; empty for a check that names none); ``observed``, for a difference,
    the register keys as this server answered them (:meth:`kit.notebook.observe.Observation.data`)."""

    name: str
    outcome: str
    reason: str = ""
    needs: tuple[str, ...] = ()
    kind: str = ""
    basis: str = ""
    observed: tuple[Mapping[str, Any], ...] = ()

    @property
    def line(self) -> str:
        """``✔ check passed: <name>`` (and `` — <reason>`` when skipped, failed or differing)."""
        tail = f" — {self.reason}" if self.reason else ""
        return f"{MARKS[self.outcome]} check {self.outcome}: {self.name}{tail}"

    def data(self) -> dict[str, Any]:
        """The display's JSON: name, outcome, reason, needs; ``kind`` and ``basis`` when named;
        ``observed`` when a difference observed register keys."""
        found: dict[str, Any] = {
            "name": self.name,
            "needs": list(self.needs),
            "outcome": self.outcome,
            "reason": self.reason,
        }
        if self.basis:
            found.update(kind=self.kind, basis=self.basis)
        if self.observed:
            found["observed"] = [dict(o) for o in self.observed]
        return found
