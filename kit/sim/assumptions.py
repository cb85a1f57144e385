"""The ``svc-assumptions`` header: the register entries an answer relied on (A28), or none (A61).

Each request starts with a set of entries in ``request.state.assumptions`` (:meth:`Assumptions.
starting`): A46 on a simulator on the wall clock (its times are the machine's, not seeded), A45
on the control plane (``/_sim``, the simulator's own), A48 on the OpenAPI document and its pages
(``/openapi.json``, ``/docs``, ``/redoc``: the document holds the simulator's choices). The
request's checks add to it; on the way out (:meth:`Assumptions.name`) A21 joins for every
problem+json answer (its shape) and the set is named in the header, unless the answer names its
own (an idempotent replay's stored headers). Under a choice overlay that says so (A61) the
header is left out of every answer, a replay's included.
"""

from __future__ import annotations

from kit.sim.guarded import CONTROL_PREFIX
from kit.sim.headers import ASSUMPTIONS
from kit.sim.problems import PROBLEM_MEDIA_TYPE

__all__ = ["DOCUMENT_ENTRY", "Assumptions"]

#: The register entry of the OpenAPI document and its pages (the simulator's choices, A48).
DOCUMENT_ENTRY = "A48"
_ASSUMPTIONS = ASSUMPTIONS.lower().encode("latin-1")
_PROBLEM_MEDIA_TYPE = PROBLEM_MEDIA_TYPE.encode("latin-1")


class Assumptions:
    """The ``svc-assumptions`` of a simulator's answers; ``documents`` are the OpenAPI
    document's path and its pages' (A48), ``send`` whether the header is sent at all (A61)."""

    def __init__(self, documents: frozenset[str], *, send: bool = True) -> None:
        self.documents = documents
        self.send = send

    def starting(self, wall_clock: bool, path: str) -> set[str]:
        """The entries a request to ``path`` names before any of its checks."""
        assumptions: set[str] = {"A46"} if wall_clock else set()
        if path.startswith(CONTROL_PREFIX):
            assumptions.add("A45")
        elif path in self.documents:
            assumptions.add(DOCUMENT_ENTRY)
        return assumptions

    def name(
        self, raw: list[tuple[bytes, bytes]], names: set[bytes], content_type: bytes, assumptions: set[str]
    ) -> None:
        """Name ``assumptions`` on an answer's raw header list (its lower-case ``names`` and
        first ``content-type``), A21 with them for a problem; or leave the header out (A61)."""
        if content_type.startswith(_PROBLEM_MEDIA_TYPE):  # latin-1 both ways
            assumptions.add("A21")
        if not self.send:
            if _ASSUMPTIONS in names:  # an idempotent replay's stored headers
                raw[:] = [(k, v) for k, v in raw if k != _ASSUMPTIONS]
        elif assumptions and _ASSUMPTIONS not in names:
            raw.append((_ASSUMPTIONS, ",".join(sorted(assumptions)).encode("latin-1")))
