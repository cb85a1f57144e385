"""The notebook companion: what a notebook wants beside the client, kept apart from it.

Notebooks (and ``kit.lab``'s tools) create their clients with :func:`connect` — the same
arguments as :func:`kit.connect`, which it calls passing the companion's hooks
(:mod:`kit._hooks`), so the companion sees every client a notebook makes. It offers:

- named checks (:func:`check`, :func:`skip`, :func:`results`): passed, failed, or skipped
  with the reason when this client's profile lacks what a check ``needs`` (asked of the
  profile, :mod:`kit._profiles`); each outcome is a line of text and a display of MIME type
  :data:`CHECK_MIME_TYPE` that ``kit regress`` counts;
- each check's basis (:mod:`kit.notebook.basis`): ``spec="card.1"`` — a statement of the
  spec, which any conforming server must hold — or ``choice="A15"`` — a register entry, the
  simulator's choice; off the simulator a choice check that does not hold **differs**
  (``≠ check differs: … — differs from A15: the simulator chooses …, this server answered …``),
  counted apart and never raising. :func:`chosen` is the value a choice check expects (the
  register's, or an expectation overlay's: ``KIT_EXPECT_CHOICES``, :func:`expect_choices`);
- comparisons that say what was expected and what came (:func:`expect`, :func:`expect_in`,
  :func:`expect_true`, also methods of a check; :func:`id_format` shows an id's format, never
  the id), and :class:`refused`, which catches a refusal whatever its code and checks the code
  as a choice;
- the drift display: after each cell, the contract drift its clients met (MIME type
  :data:`DRIFT_MIME_TYPE`, one :func:`text_line` per drift);
- :func:`conformance`: which register entries this kernel's calls confirmed, which differ
  (what the simulator chooses, what the server answered) and which none could tell, and the
  spec's statements checked — a DataFrame, the table ``kit regress`` writes to ``conformance.md``;
- :func:`start`, the preamble of every flow notebook (connect, and reset the simulator to its
  random seed where the profile can);
- the test persona helpers :func:`persona` and :func:`kyc_answers` (the client's profile says
  where personas and answers come from: the simulator, or the sandbox fixtures file);
- :func:`register_table`, register entries as a compact table (one line each, the spec's words
  and the simulator's choice on demand); :func:`entries_used`, the table a notebook ends with:
  the entries its calls and checks relied on;
- :func:`problem_code`, the problem code a check expects (the register's choice, A64);
  :func:`calls`, a client's history without the simulator's control calls;
  :func:`error_families`, the error catalogue by family, with what a back end should do;
  :func:`local_app`, an app of the notebook's own (a webhook receiver) served on loopback;
  :func:`changes_checked`, each change of the version with the checks that showed it here.

The client core never imports this package, nor IPython; the regression runner reads the
MIME types from here.

Example::

    from kit.notebook import check, connect

    api = connect(profile, seed=seed)
    with check("an anonymous session opens", spec="session.1") as c:
        c.expect(api.sessions.create("anonymous").session_type, "anonymous",
                 what="session type", show=True)
    with check("a card's id has the simulator's format", choice="A41") as c:
        c.expect(id_format(card.card_id), "card_ + 20 hex", what="card id format", show=True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kit.notebook.basis import Basis, chosen, expect_choices, expectation, problem_code, require_basis
from kit.notebook.catalogue import ErrorFamilies, error_families
from kit.notebook.changes import ChangesTable, changes_checked
from kit.notebook.checks import MIME_TYPE as CHECK_MIME_TYPE
from kit.notebook.checks import NEEDS, CheckFailed, CheckOutcome, Need, check, results, skip, use
from kit.notebook.companion import COMPANION, Companion
from kit.notebook.conformity import conformance
from kit.notebook.display import MIME_TYPE as DRIFT_MIME_TYPE
from kit.notebook.display import text_line
from kit.notebook.expect import Mismatch, describe, expect, expect_in, expect_true, id_format
from kit.notebook.local_app import Running, local_app
from kit.notebook.refusal import refused
from kit.notebook.register_view import RegisterTable, register_table
from kit.notebook.relied import calls, entries_used

if TYPE_CHECKING:
    from kit._client import (
        Client,
        connect,  # the companion's takes kit.connect's options: typed as those
    )
    from kit._drift import Drift
    from kit._fixtures import AnyPersona
    from kit._sensitive import Sensitive
else:
    from kit.notebook.companion import connect

__all__ = [
    "CHECK_MIME_TYPE",
    "COMPANION",
    "DRIFT_MIME_TYPE",
    "NEEDS",
    "Basis",
    "ChangesTable",
    "CheckFailed",
    "CheckOutcome",
    "Companion",
    "ErrorFamilies",
    "Mismatch",
    "Need",
    "RegisterTable",
    "Running",
    "calls",
    "changes_checked",
    "check",
    "chosen",
    "conformance",
    "connect",
    "describe",
    "entries_used",
    "error_families",
    "expect",
    "expect_choices",
    "expect_in",
    "expect_true",
    "expectation",
    "findings",
    "id_format",
    "kyc_answers",
    "local_app",
    "persona",
    "problem_code",
    "refused",
    "register_table",
    "require_basis",
    "results",
    "skip",
    "start",
    "text_line",
    "use",
]


def persona(api: Client, which: int | str = 0) -> AnyPersona:
    """A test persona for ``api``'s profile (``api.personas.get``): the simulator's in
    ``sim``, the fixtures file's on a sandbox. Both have ``persona_id`` and ``pii``.

    Example::

        >>> who = persona(api, "persona-01")                     # doctest: +SKIP
        >>> api.persons.create(account_id, **who.pii)             # doctest: +SKIP

    Raises:
        FixturesError: (sandbox) no fixtures, or no such persona.
    """
    return api.personas.get(which)


def kyc_answers(
    api: Client,
    person_id: str,
    questions: Sequence[Mapping[str, Any]] | Sensitive[Any],
    *,
    who: AnyPersona | str | None = None,
) -> Sensitive[Any]:
    """The answers that pass KYC for ``person_id``, wrapped (``api.personas.kyc_answers``):
    the simulator's in ``sim``; on a sandbox the fixtures answers of ``who`` (the persona the
    person was created from, or its ``persona_id``) to ``questions``.

    Raises:
        FixturesError: (sandbox) no fixtures, no ``who``, or a question without an answer.
    """
    return api.personas.kyc_answers(person_id, questions, who)


def findings() -> list[Drift]:
    """Every drift the companion's clients met in this process (up to a bound)."""
    return COMPANION.drift.rows()


def start(profile: Any = "sim", *, seed: int = 7, **overrides: Any) -> Client:
    """The preamble every flow notebook shares: :func:`connect` (same arguments), then, where
    the profile has the simulator's control plane, the named check that resets it to ``seed``
    (register entry A45), shown as the story's line ``✔ the simulator is reset to seed 7…``;
    elsewhere that check is reported skipped, with its reason.

    Example::

        >>> api = start(profile, seed=seed, device=device)     # doctest: +SKIP

    Raises:
        ConfigError, TransportError: as :func:`kit.connect`.
    """
    api = connect(profile, seed=seed, **overrides)
    seeded = check("the simulator starts from its seeded state", needs="control plane", choice="A45")
    seeded.said_when_passed = f"✔ the simulator is reset to seed {seed}: the same ids and keys on every run"

    @seeded
    def _() -> None:
        expect(api.sim.reset(seed), seed, what="the seed the simulator runs from after the reset", show=True)

    return api
