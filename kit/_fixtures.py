"""Sandbox fixtures: the test personas a sandbox publishes and the KYC answers that pass its checks.

``PARTNER_API_SANDBOX_FIXTURES`` (:data:`kit._env.SANDBOX_FIXTURES`) names a TOML file. It is
read in memory only — every value is wrapped in :class:`~kit.Sensitive` and nothing of it is
ever written anywhere (the leak scan of ``kit regress`` looks for each value in its outputs).
The format::

    # One [[persona]] table per test customer of the sandbox.
    [[persona]]
    persona_id = "persona-01"          # how notebooks and journeys name it (not PII)
    first_name = "Ada"
    last_name = "Sample"
    date_of_birth = "1950-03-14"       # YYYY-MM-DD (a TOML date works too)
    national_id = "000-00-0001"

    [persona.kyc]                      # the answers that pass KYC, by question id or text
    birth_year = "1950"
    "In which month were you born?" = "March"
    national_id_last2 = "01"

Every value is a string; each answer is the text of the choice to pick. A question is matched
by its ``question_id`` first, then by its text (case and spacing ignored). ``kit serve
--sandbox-fixtures PATH`` writes such a file for the simulator's own personas.

A file that cannot be used raises :class:`~kit.errors.FixturesError` naming the entry
(``persona 2 ("persona-02"): date_of_birth is missing``) — never a value.

Example::

    >>> fixtures = load("sandbox.toml")                       # doctest: +SKIP
    >>> who = fixtures.persona("persona-01")                  # doctest: +SKIP
    >>> api.persons.create(account_id, **who.pii)             # doctest: +SKIP
    >>> api.kyc.answer(person_id, who.answers(api.kyc.questions(person_id)))  # doctest: +SKIP
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from kit import _env as env
from kit import _files as files
from kit import register
from kit._sensitive import Sensitive, reveal
from kit._tomltext import value as toml_value
from kit.errors import FixturesError
from kit.models import Persona

__all__ = [
    "PERSONA_FIELDS",
    "AnyPersona",
    "FixturePersona",
    "Fixtures",
    "from_env",
    "load",
    "parse",
    "render",
    "required",
    "version",
]

#: The fields of a ``[[persona]]`` table besides its ``kyc`` answers.
PERSONA_FIELDS: tuple[str, ...] = ("persona_id", *Persona.PII_FIELDS)
_ID_LIKE = re.compile(r"^[A-Za-z0-9_.:-]{1,40}$")


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


@dataclass(frozen=True, repr=False)
class FixturePersona:
    """One test customer: its id, its PII and its KYC answers, all held as Sensitive."""

    persona_id: str
    persona: Persona
    kyc: Sensitive[dict[str, str]]

    def __repr__(self) -> str:
        return f"FixturePersona(persona_id={self.persona_id!r}, pii=••••••, kyc=••••••)"

    @property
    def pii(self) -> Any:
        """The four PII fields, still wrapped, as keyword arguments for ``api.persons.create``."""
        return self.persona.pii

    def answers(
        self, questions: Sequence[Mapping[str, Any]] | Sensitive[Any]
    ) -> Sensitive[list[dict[str, str]]]:
        """The answers to ``questions`` (as ``api.kyc.questions`` gives them), wrapped.

        Raises:
            FixturesError: a question this persona has no answer for (named by its id).
        """
        by_id = self.kyc.reveal()
        by_text = {_norm(key): value for key, value in by_id.items()}
        chosen = []
        for question in reveal(questions):
            qid = str(question.get("question_id", ""))
            answer = by_id.get(qid)
            if answer is None:
                answer = by_text.get(_norm(str(question.get("text", ""))))
            if answer is None:
                raise FixturesError(
                    f"sandbox fixtures: persona {self.persona_id!r} has no KYC answer for question "
                    f"{qid!r} (by its id or its text)"
                )
            chosen.append({"question_id": qid, "choice": answer})
        return Sensitive(chosen, label="kyc_answers")

    def values(self) -> Iterator[str]:
        """Every PII value and answer (for the leak scanner only)."""
        for name in Persona.PII_FIELDS:
            yield str(getattr(self.persona, name).reveal())
        yield from self.kyc.reveal().values()


#: A persona of either source (the simulator's or a fixtures file's): both have ``persona_id`` and ``pii``.
AnyPersona = Persona | FixturePersona


@dataclass(frozen=True)
class Fixtures:
    """The personas of one fixtures file, in file order."""

    personas: tuple[FixturePersona, ...]
    source: str = ""

    def __len__(self) -> int:
        return len(self.personas)

    def persona(self, which: int | str = 0) -> FixturePersona:
        """A persona by position or ``persona_id``.

        Raises:
            FixturesError: no such persona (the known ids are named).
        """
        if isinstance(which, int):
            if -len(self.personas) <= which < len(self.personas):
                return self.personas[which]
        else:
            for persona in self.personas:
                if persona.persona_id == which:
                    return persona
        known = ", ".join(p.persona_id for p in self.personas)
        raise FixturesError(f"sandbox fixtures: no persona {which!r}; the file has {known}")

    def matching(self, pii: Mapping[str, Any]) -> FixturePersona | None:
        """The persona whose PII is ``pii`` (compared in memory), or ``None``."""
        wanted = {name: str(reveal(pii.get(name))) for name in Persona.PII_FIELDS}
        for persona in self.personas:
            if all(str(getattr(persona.persona, n).reveal()) == v for n, v in wanted.items()):
                return persona
        return None

    def values(self) -> list[str]:
        """Every value of the file (the leak scanner's list), longest first."""
        return sorted({v for p in self.personas for v in p.values()}, key=lambda v: (-len(v), v))


def _entry(index: int, table: Mapping[str, Any]) -> str:
    pid = table.get("persona_id")
    named = f" ({pid!r})" if isinstance(pid, str) and _ID_LIKE.match(pid) else ""
    return f"persona {index}{named}"


def _text(value: Any) -> str | None:
    if isinstance(value, date):
        return value.isoformat()
    return value if isinstance(value, str) and value.strip() else None


def _persona(index: int, table: Any, seen: set[str]) -> FixturePersona:
    if not isinstance(table, Mapping):
        raise FixturesError(f"sandbox fixtures: persona {index} is not a table ([[persona]])")
    entry = _entry(index, table)
    unknown = sorted(set(table) - {*PERSONA_FIELDS, "kyc"})
    if unknown:
        names = ", ".join(repr(k[:40]) for k in unknown)
        raise FixturesError(
            f"sandbox fixtures: {entry}: unknown field(s) {names}; allowed: {', '.join(PERSONA_FIELDS)}, kyc"
        )
    values: dict[str, str] = {}
    for name in PERSONA_FIELDS:
        if name not in table:
            raise FixturesError(f"sandbox fixtures: {entry}: {name} is missing")
        text = _text(table[name])
        if text is None:
            raise FixturesError(f"sandbox fixtures: {entry}: {name} must be a non-empty string")
        values[name] = text
    try:
        date.fromisoformat(values["date_of_birth"])
    except ValueError:
        raise FixturesError(f"sandbox fixtures: {entry}: date_of_birth must be a date (YYYY-MM-DD)") from None
    if not _ID_LIKE.match(values["persona_id"]):
        raise FixturesError(
            f"sandbox fixtures: {entry}: persona_id must be letters, digits, '_', '-', '.' or ':'"
        )
    if values["persona_id"] in seen:
        raise FixturesError(f"sandbox fixtures: {entry}: persona_id is used twice")
    seen.add(values["persona_id"])
    return FixturePersona(values["persona_id"], Persona.from_wire(values), _kyc(entry, table.get("kyc")))


def _kyc(entry: str, table: Any) -> Sensitive[dict[str, str]]:
    if table is None:
        raise FixturesError(f"sandbox fixtures: {entry}: kyc is missing (a [persona.kyc] table of answers)")
    if not isinstance(table, Mapping) or not table:
        raise FixturesError(
            f"sandbox fixtures: {entry}: kyc must be a non-empty table: question id or text = answer"
        )
    answers: dict[str, str] = {}
    for n, (key, value) in enumerate(table.items(), start=1):
        named = f"kyc answer {n}" + (f" (question {key!r})" if _ID_LIKE.match(key) else "")
        if not isinstance(value, str) or not value.strip():
            raise FixturesError(
                f"sandbox fixtures: {entry}: {named} must be a non-empty string (the choice's text)"
            )
        answers[key] = value
    return Sensitive(answers, label="kyc_answers")


def parse(text: str, *, source: str = "") -> Fixtures:
    """Fixtures from TOML text (see the module docstring for the format).

    Raises:
        FixturesError: not TOML, or an entry of the wrong shape (named, never its value).
    """
    import tomllib  # here: a simulator's client never reads fixtures (kept out of connect's imports)

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise FixturesError(f"sandbox fixtures {source or 'text'} is not valid TOML: {exc}") from None
    personas = data.pop("persona", None)
    if data:  # anything beside the [[persona]] tables
        names = ", ".join(map(repr, sorted(data)))
        raise FixturesError(f"sandbox fixtures: unknown top-level key(s) {names}; only [[persona]] tables")
    if not isinstance(personas, list) or not personas:
        raise FixturesError("sandbox fixtures: no persona: add one [[persona]] table per test customer")
    seen: set[str] = set()
    return Fixtures(tuple(_persona(i, t, seen) for i, t in enumerate(personas, start=1)), source)


def load(path: str | os.PathLike[str]) -> Fixtures:
    """Read a fixtures file (in memory only).

    Raises:
        FixturesError: unreadable, not TOML, or an entry of the wrong shape.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise FixturesError(f"cannot read the sandbox fixtures file {path}: {type(exc).__name__}") from None
    return parse(text, source=str(path))


def version(path: str | os.PathLike[str]) -> tuple[str, float, int]:
    """What tells one version of a fixtures file from the next: path, mtime and size.

    Raises:
        FixturesError: the file cannot be read.
    """
    try:
        stat = os.stat(path)
    except OSError as exc:
        raise FixturesError(
            f"{env.SANDBOX_FIXTURES} names {path}, which cannot be read: {type(exc).__name__}"
        ) from None
    return (str(path), stat.st_mtime, stat.st_size)


def from_env(environ: Mapping[str, str] | None = None) -> Fixtures | None:
    """The fixtures named by ``PARTNER_API_SANDBOX_FIXTURES``, or ``None`` when it is not set
    (read each time: a profile keeps the copy its clients use, :meth:`kit._profiles.Profile.fixtures`).

    Raises:
        FixturesError: the file cannot be used.
    """
    path = (os.environ if environ is None else environ).get(env.SANDBOX_FIXTURES)
    if not path:
        return None
    version(path)
    return load(path)


def required(environ: Mapping[str, str] | None = None) -> Fixtures:
    """:func:`from_env`, for a caller that cannot go on without fixtures.

    Raises:
        FixturesError: the variable is not set, or the file cannot be used.
    """
    found = from_env(environ)
    if found is None:
        raise FixturesError(
            f"the sandbox profile takes its test personas and KYC answers from the file named by "
            f"{env.SANDBOX_FIXTURES}: set it (kit serve --sandbox-fixtures PATH writes one for the simulator)"
        )
    return found


def render(personas: Sequence[Mapping[str, Any]], *, header: str = "") -> str:
    """A fixtures file's text: ``personas`` are mappings of :data:`PERSONA_FIELDS` (plain or
    Sensitive values) and ``kyc`` (question id or text → answer).

    Example::

        >>> print(render([{"persona_id": "p1", "first_name": "A", "last_name": "B",
        ...                "date_of_birth": "1950-03-14", "national_id": "1", "kyc": {"q": "x"}}]))
        [[persona]]
        persona_id = "p1"
        first_name = "A"
        last_name = "B"
        date_of_birth = "1950-03-14"
        national_id = "1"
        <BLANKLINE>
        [persona.kyc]
        "q" = "x"
        <BLANKLINE>

    Raises:
        KeyError: a persona without one of the fields.
    """
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    for persona in personas:
        lines += ["", "[[persona]]"] if lines else ["[[persona]]"]
        lines += [f"{name} = {toml_value(str(reveal(persona[name])))}" for name in PERSONA_FIELDS]
        lines += ["", "[persona.kyc]"]
        lines += [  # a question's key quoted, whatever it holds
            f"{toml_value(str(k))} = {toml_value(str(reveal(v)))}" for k, v in reveal(persona["kyc"]).items()
        ]
    return "\n".join(lines) + "\n"


# --- the simulator's own personas, published as a sandbox would (kit serve --sandbox-fixtures) ---

#: How many test personas ``kit serve --sandbox-fixtures`` publishes by default: three, as a
#: partner's sandbox might; every flow notebook (00-11) runs with them.
FIXTURE_PERSONAS = 3


def sim_fixtures_text(personas: int | None = FIXTURE_PERSONAS) -> str:
    """A sandbox fixtures file for the first ``personas`` of the simulator's personas (``None``:
    all of them): PII from the register's personas, KYC answers keyed by the question texts of
    register entry A12 (birth year, month name, last two digits of the national id — what the
    simulator derives from the PII).

    Example::

        >>> sim_fixtures_text().count("[[persona]]")
        3
    """
    import calendar

    year, month, last2 = register.value("A12")["question_texts"]
    written = []
    for person in register.personas()[:personas]:
        born = date.fromisoformat(str(person["date_of_birth"]))
        digits = "".join(ch for ch in str(person["national_id"]) if ch.isdigit()).rjust(2, "0")[-2:]
        kyc = {year: str(born.year), month: calendar.month_name[born.month], last2: digits}
        written.append({**{k: person[k] for k in PERSONA_FIELDS}, "kyc": kyc})
    header = (
        "Sandbox fixtures for kit serve's simulated personas (synthetic: obviously fake numbers).\n"
        f"Point {env.SANDBOX_FIXTURES} at this file. Format: kit._fixtures "
        "(docs/sandbox.md, Test personas)."
    )
    return render(written, header=header)


def write_sim_fixtures(path: str, overwrite: bool, personas: int = FIXTURE_PERSONAS) -> str | None:
    """Write :func:`sim_fixtures_text` to ``path`` (a new file, owner-only, never through a link
    found there: :mod:`kit._files`); the reason it could not, or None."""
    target = os.path.abspath(path)
    if os.path.lexists(target) and not overwrite:
        return f"{path} exists: pass --overwrite-fixtures to replace it"
    try:
        files.write(target, sim_fixtures_text(personas), replace=overwrite)
    except OSError as exc:
        return f"cannot write {path}: {type(exc).__name__}"
    return None
