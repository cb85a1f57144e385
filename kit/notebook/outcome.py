"""One named check's outcome (:mod:`kit.notebook.checks`)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CheckOutcome"]

_MARKS = {"passed": "✔", "failed": "✘", "skipped": "⊘"}


@dataclass(frozen=True)
class CheckOutcome:
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
