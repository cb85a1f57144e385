"""The hardening runs of issue #6, shared by the test suite and ``benchmarks/stress.py``.

Each run talks HTTP to a real simulator (uvicorn on loopback) and returns a report of
figures; the tests assert on small runs, ``make stress`` prints big ones.

- :func:`run_fuzz`: schemathesis generates requests from the simulator's own
  ``/openapi.json`` (partner routes only) with a valid partner token, a person session of an
  established person and an ``Idempotency-Key`` injected; every answer is checked for 5xx,
  conformance to the documented responses, and problem+json on 4xx (RFC 6749 on the token
  endpoints).
- :func:`run_transfers`: P2P transfers through the client (``kit.connect``) with injected
  before- and after-commit faults and client retries; the ledger is compared with what was
  intended: duplicates, losses, money conserved.
- :func:`run_leak_journey`: a whole client journey with the history exported to CSV and
  the logs captured; :mod:`kit.leaks` must find nothing in either.
"""

from __future__ import annotations

import contextlib
import io
import logging
import random
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx

from tests.sim.helpers import (
    API_VERSION,
    PROBLEM_CT,
    PROBLEM_PREFIX,
    Device,
    call,
    create_card,
    journey,
    money,
    new_session,
    partner_token,
    reset,
)
from tests.sim.helpers import CheckedClient as CheckedClient
from tests.sim.helpers import checked_client as checked_client

OAUTH_PATHS = ("/oauth/accesstoken", "/authorization/server_api/access_tokens")
PROBLEM_FIELDS = ("type", "title", "status", "detail", "code")


def problem_violation(path: str, status: int, headers: Any, body: bytes) -> str | None:
    """What is wrong with an error answer's shape (None when nothing is)."""
    if status < 400:
        return None
    import json

    ctype = str(headers.get("content-type", "")).split(";")[0].strip()
    try:
        data = json.loads(body) if body else None
    except ValueError:
        return f"{status} body is not JSON ({ctype})"
    if path in OAUTH_PATHS and ctype == "application/json":
        ok = isinstance(data, dict) and isinstance(data.get("error"), str)
        return None if ok else f"{status} OAuth error without an RFC 6749 'error'"
    if ctype != PROBLEM_CT:
        return f"{status} content-type {ctype!r}, not {PROBLEM_CT}"
    if not isinstance(data, dict) or any(name not in data for name in PROBLEM_FIELDS):
        return f"{status} problem without {', '.join(PROBLEM_FIELDS)}"
    if data["status"] != status or data["type"] != PROBLEM_PREFIX + str(data["code"]):
        return f"{status} problem with status {data['status']!r} / type {data['type']!r}"
    return None


# --- 1. fuzzing with schemathesis ------------------------------------------------------------


@dataclass
class FuzzReport:
    requests: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    operations: Counter[str] = field(default_factory=Counter)
    server_errors: list[str] = field(default_factory=list)
    schema_violations: list[str] = field(default_factory=list)
    problem_violations: list[str] = field(default_factory=list)
    skipped: int = 0

    def failures(self) -> list[str]:
        return [*self.server_errors, *self.schema_violations, *self.problem_violations]


class _FuzzWorld:
    """Real resources and sessions the generated requests are aimed at."""

    def __init__(self, http: httpx.Client, base_url: str) -> None:
        self.http = http
        self.base_url = base_url
        reset(http, 7)
        self.a = journey(http)
        self.b = journey(http, persona_index=1, token=self.a.token)
        self.token = self.a.token
        self.card = create_card(http, self.token, self.a.account_id)["card_id"]
        resp = call(
            http,
            "POST",
            "/p2p/transfers",
            token=self.token,
            session=self.a.person_session,
            idem="fuzz-seed-transfer",
            json_body={
                "from_account_id": self.a.account_id,
                "to_person_id": self.b.person_id,
                "amount": money("1.00"),
            },
        )
        assert resp.status_code == 201, resp.text
        self.transfer = resp.json()["transfer_id"]
        resp = http.post(f"/_sim/persons/{self.a.person_id}/document_requests")
        assert resp.status_code == 201, resp.text
        self.document_request = resp.json()["document_request_id"]
        self.anonymous = new_session(http, self.token, Device())
        self.ids = {
            "account_id": self.a.account_id,
            "person_id": self.a.person_id,
            "card_id": self.card,
            "transfer_id": self.transfer,
            "document_request_id": self.document_request,
        }

    def headers_for(self, method: str, path: str) -> dict[str, str]:
        """A valid partner token and the session that fits the operation."""
        method = method.upper()
        if path in OAUTH_PATHS and method != "DELETE":
            return {"Authorization": "Basic c2ltLXBhcnRuZXI6c2ltLXNlY3JldA=="}  # sim-partner:sim-secret
        if path in OAUTH_PATHS:  # the legacy DELETE revokes the bearer: a throwaway one
            return {"Authorization": f"Bearer {partner_token(self.http)}"}
        headers = {"Authorization": f"Bearer {self.token}"}
        if method == "DELETE" and path == "/sessions":  # ends the session: a throwaway one
            headers["svc-session-id"] = new_session(self.http, self.token, Device())
        elif method == "POST" and path == "/accounts":
            headers["svc-session-id"] = self.anonymous
        else:
            assert self.a.person_session is not None
            headers["svc-session-id"] = self.a.person_session
        if method == "POST":
            headers["Idempotency-Key"] = f"fz-{uuid.uuid4().hex}"
        return headers


def _partner_operations(base_url: str) -> list[Any]:
    import schemathesis

    schema = schemathesis.openapi.from_url(f"{base_url}/openapi.json").exclude(path_regex="^/_sim")
    return [result.ok() for result in schema.get_all_operations()]


def run_fuzz(
    base_url: str,
    *,
    max_examples: int,
    min_requests: int = 0,
    max_rounds: int = 6,
    seed: int | None = None,
    log: Callable[[str], None] | None = None,
) -> FuzzReport:
    """Fuzz every partner operation in positive and negative mode (see the module doc).

    ``seed`` None: derandomized (the same requests run after run); otherwise seeded rounds
    are repeated until ``min_requests`` were sent (at most ``max_rounds``).
    """
    import requests
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st
    from hypothesis.errors import HypothesisException
    from schemathesis import GenerationMode
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        response_schema_conformance,
        status_code_conformance,
    )

    conformance = [status_code_conformance, content_type_conformance, response_schema_conformance]
    report = FuzzReport()
    with httpx.Client(base_url=base_url, timeout=30.0) as http, requests.Session() as session:
        world = _FuzzWorld(http, base_url)
        operations = _partner_operations(base_url)
        for round_no in range(max_rounds):
            for op in operations:
                for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                    strategy = op.as_strategy(mode)
                    names = [p.name for p in op.path_parameters]
                    if names and mode is GenerationMode.POSITIVE:
                        real = {name: world.ids[name] for name in names}
                        strategy = st.one_of(op.as_strategy(mode, path_parameters=real), strategy)

                    test = given(case=strategy)(_case_runner(op, world, session, report, conformance))
                    test = settings(
                        max_examples=max_examples,
                        deadline=None,
                        database=None,
                        derandomize=seed is None,
                        phases=[Phase.explicit, Phase.generate],
                        suppress_health_check=list(HealthCheck),
                    )(test)
                    if seed is not None:
                        test = hypothesis_seed(seed * 1000 + round_no)(test)
                    try:
                        test()
                    except HypothesisException as exc:  # e.g. nothing left to negate
                        report.skipped += 1
                        if log:
                            log(f"{op.method.upper()} {op.path} {mode.value}: {type(exc).__name__}: {exc}")
            if seed is None or report.requests >= min_requests:
                break
    return report


def _case_runner(
    op: Any, world: _FuzzWorld, session: Any, report: FuzzReport, checks: list[Any]
) -> Callable[[Any], None]:
    def one(case: Any) -> None:
        _fuzz_one(case, op, world, session, report, checks)

    return one


def _fuzz_one(
    case: Any, op: Any, world: _FuzzWorld, session: Any, report: FuzzReport, checks: list[Any]
) -> None:
    import requests

    case.headers = {**(case.headers or {}), **world.headers_for(op.method, op.path)}
    try:
        response = case.call(base_url=world.base_url, session=session, timeout=30)
    except (requests.RequestException, ValueError, TypeError, UnicodeError):
        report.skipped += 1  # a request the HTTP library refuses to send
        return
    headers = {
        str(k).lower(): (v[0] if isinstance(v, list | tuple) and v else v)
        for k, v in response.headers.items()
    }
    label = f"{op.method.upper()} {op.path}"
    report.requests += 1
    report.statuses[response.status_code] += 1
    report.operations[label] += 1
    where = f"{label} -> {response.status_code}"
    if response.status_code >= 500:
        report.server_errors.append(f"{where}: {response.text[:200]}")
    if not headers.get("svc-request-id") or headers.get("svc-api-version") != API_VERSION:
        report.problem_violations.append(f"{where}: svc-request-id / svc-api-version missing")
    problem = problem_violation(op.path, response.status_code, headers, response.content)
    if problem:
        report.problem_violations.append(f"{where}: {problem}")
    try:
        case.validate_response(response, checks=checks)
    except Exception as exc:  # schemathesis raises Failure / FailureGroup
        message = " ".join(str(exc).split())[:300]
        report.schema_violations.append(f"{where}: {type(exc).__name__}: {message}")


# --- 4. exactly-once money through the client -----------------------------------------------


@dataclass
class MoneyReport:
    intended: int = 0
    in_ledger: int = 0
    duplicates: int = 0
    losses: int = 0
    mismatches: int = 0
    balance_errors: int = 0
    money_before: Decimal = Decimal(0)
    money_after: Decimal = Decimal(0)
    faults_fired: dict[str, int] = field(default_factory=dict)
    client_retries: int = 0
    replayed: int = 0
    gave_up: int = 0

    @property
    def conserved(self) -> bool:
        return self.money_before == self.money_after


@dataclass
class Customer:
    api: Any
    account_id: str
    person_id: str


def onboard(api: Any, persona: int) -> Customer:
    """anonymous → account → person (KYC with the simulator's right answers)."""
    api.sessions.create("anonymous", expiration="fixed")
    account = api.accounts.create()
    api.sessions.promote("account", account_id=account.account_id)
    person = api.persons.create(account.account_id, **api.sim.persona(persona).pii)
    result = api.kyc.answer(person.person_id, api.sim.kyc_answers(person.person_id))
    assert result.status == "established", result
    api.sessions.promote("person", person_id=person.person_id)
    return Customer(api, account.account_id, person.person_id)


def _ledger(http: httpx.Client) -> dict[str, Any]:
    resp = http.get("/_sim/ledger")
    assert resp.status_code == 200, resp.text
    return resp.json()


def run_transfers(
    base_url: str,
    *,
    count: int,
    customers: int = 4,
    fault_rate: float = 0.30,
    seed: int = 11,
    max_outer_attempts: int = 8,
    naive: bool = False,
) -> MoneyReport:
    """``count`` P2P transfers between ``customers`` onboarded customers, with ``fault_rate``
    of the POSTs failing (half before commit, half after), all retried by the client with
    the same Idempotency-Key. The ledger must show each intended transfer exactly once.

    ``naive``: the negative control — no client retries, and the caller retries with a new
    key each time, as a client without idempotency would: after-commit faults then move
    money twice, and the report must say so.
    """
    import kit
    from kit.errors import ApiError, TransportError

    report = MoneyReport(intended=count)
    rng = random.Random(seed)
    with httpx.Client(base_url=base_url, timeout=30.0) as http:
        reset(http, 7)
        clients = [
            kit.connect(
                "sim", base_url=base_url, sleep=lambda _s: None, seed=seed + i, max_retries=0 if naive else 6
            )
            for i in range(customers)
        ]
        try:
            people = [onboard(api, i % 12) for i, api in enumerate(clients)]
            for person in people:
                person.api.sim.fund(person.account_id, "100000.00")
            before = {a["account_id"]: Decimal(a["balance"]["value"]) for a in _ledger(http)["accounts"]}
            report.money_before = sum(before.values(), Decimal(0))
            control = clients[0].sim
            # draw_fault takes the first fault that fires: rates r and r/(1-r) split it in halves.
            half = fault_rate / 2
            control.add_fault(
                "POST", "/p2p/transfers", rate=half, when="before_commit", retry_after=1, latency_ms=1
            )
            control.add_fault(
                "POST",
                "/p2p/transfers",
                rate=half / (1 - half),
                when="after_commit",
                retry_after=1,
                latency_ms=1,
            )
            intents: list[tuple[str, Customer, Customer, Decimal]] = []
            acknowledged: dict[int, str] = {}
            for i in range(count):
                sender, receiver = rng.sample(people, 2)
                amount = Decimal(rng.randint(1, 5000)) / 100
                key = f"hx-{seed}-{i}-{uuid.uuid4().hex[:8]}"
                intents.append((key, sender, receiver, amount))
                for attempt in range(max_outer_attempts):  # the caller's own bounded retry
                    if naive and attempt:
                        key = f"{key}-again{attempt}"
                    try:
                        t = sender.api.p2p.transfer(
                            from_account_id=sender.account_id,
                            to_person_id=receiver.person_id,
                            amount=amount,
                            idempotency_key=key,
                        )
                    except (ApiError, TransportError) as exc:
                        if getattr(exc, "code", None) not in ("injected-fault", None):
                            raise
                        continue
                    acknowledged[i] = t.transfer_id
                    break
                else:
                    report.gave_up += 1
            faults = http.get("/_sim/faults").json()["faults"]
            report.faults_fired = {f["when"]: f["fired"] for f in faults}
            http.delete("/_sim/faults")
            ledger = _ledger(http)
            after = {a["account_id"]: Decimal(a["balance"]["value"]) for a in ledger["accounts"]}
            report.money_after = sum(after.values(), Decimal(0))
            by_id = Counter(t["transfer_id"] for t in ledger["transfers"])
            rows = {t["transfer_id"]: t for t in ledger["transfers"]}
            report.in_ledger = len(ledger["transfers"])
            matched = 0
            expected = dict(before)
            for i, (_key, sender, receiver, amount) in enumerate(intents):
                expected[sender.account_id] -= amount
                expected[receiver.account_id] += amount
                tid = acknowledged.get(i)
                if tid is None or tid not in rows:
                    report.losses += 1
                    continue
                matched += 1
                row = rows[tid]
                if (
                    row["from_account_id"] != sender.account_id
                    or row["to_person_id"] != receiver.person_id
                    or Decimal(row["amount"]["value"]) != amount
                ):
                    report.mismatches += 1
            report.duplicates = report.in_ledger - matched + sum(n - 1 for n in by_id.values())
            report.balance_errors = sum(1 for acc, value in expected.items() if after.get(acc) != value)
            for api in clients:
                history = api.history
                report.client_retries += int(history["retries"].sum())
                report.replayed += int(history["replayed"].sum())
        finally:
            for api in clients:
                api.close()
    return report


# --- 6. no leaks -----------------------------------------------------------------------------


@dataclass
class LeakReport:
    history_rows: int = 0
    log_records: int = 0
    csv_findings: list[str] = field(default_factory=list)
    log_findings: list[str] = field(default_factory=list)
    planted_found: bool = False

    @property
    def hits(self) -> int:
        return len(self.csv_findings) + len(self.log_findings)


@contextlib.contextmanager
def captured_logs(names: tuple[str, ...] = ("kit", "httpx", "httpcore")) -> Iterator[io.StringIO]:
    """Every record of these loggers at DEBUG, formatted with its arguments, in a buffer."""
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setLevel(logging.DEBUG)
    handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    saved = []
    for name in names:
        logger = logging.getLogger(name)
        saved.append((logger, logger.level))
        logger.setLevel(logging.DEBUG)
        logger.addHandler(handler)
    try:
        yield buffer
    finally:
        for logger, level in saved:
            logger.removeHandler(handler)
            logger.setLevel(level)


def leak_journey(base_url: str, out_dir: Path) -> tuple[Path, list[str]]:
    """Two customers through every flow; the first one's history is written to CSV.

    Returns the CSV path and the secrets a leak would show: both session tokens, the
    partner tokens, the client secret and the personas' PII.
    """
    import kit

    with httpx.Client(base_url=base_url, timeout=30.0) as http:
        reset(http, 7)
    a_api = kit.connect("sim", base_url=base_url, sleep=lambda _s: None, seed=1)
    b_api = kit.connect("sim", base_url=base_url, sleep=lambda _s: None, seed=2)
    try:
        a, b = onboard(a_api, 0), onboard(b_api, 1)
        a_api.webhooks.listen()
        card = a_api.cards.create(a.account_id, type="virtual")
        a_api.cards.close(card.card_id, reason="lost")
        a_api.events.send(a.account_id, "password.changed", details={"channel": "app"})
        t = a_api.p2p.transfer(from_account_id=a.account_id, to_person_id=b.person_id, amount="12.50")
        b_api.p2p.get(t.transfer_id)
        doc = a_api.sim.create_document_request(a.person_id)
        a_api.document_requests.list(a.person_id)
        a_api.document_requests.submit(doc.document_request_id, document={"kind": "utility_bill"})
        a_api.kyc.questions(a.person_id)
        a_api.webhooks.wait_for("card.closed", timeout=10)
        a_api.cards.get(card.card_id)
        with contextlib.suppress(kit.errors.ApiError):  # errors go to the history too
            a_api.p2p.transfer(from_account_id=a.account_id, to_person_id=b.person_id, amount="1.005")
        secrets = [a_api.config.client_secret.reveal()]
        for api in (a_api, b_api):
            if api._current is not None:
                secrets.append(api._current.token.reveal())
            if api._transport.auth.token is not None:
                secrets.append(api._transport.auth.token.reveal())
        for i in (0, 1):
            secrets += [v.reveal() for v in a_api.sim.persona(i).pii.values()]
        path = out_dir / "history.csv"
        a_api.history.to_csv(path, index=False)
        b_api.history.to_csv(out_dir / "history_b.csv", index=False)
        return path, secrets
    finally:
        a_api.close()
        b_api.close()


def run_leak_journey(base_url: str, out_dir: Path) -> LeakReport:
    """The journey with logs captured at DEBUG; both CSVs and the logs scanned."""
    from kit.leaks import scan_file, scan_text

    report = LeakReport()
    with captured_logs() as buffer:
        path, secrets = leak_journey(base_url, out_dir)
    logs = buffer.getvalue()
    report.log_records = logs.count("\n")
    for csv in (path, out_dir / "history_b.csv"):
        report.history_rows += max(0, csv.read_text().count("\n") - 1)
        report.csv_findings += [str(f) for f in scan_file(csv, secrets=secrets)]
    report.log_findings = [str(f) for f in scan_text(logs, secrets=secrets, location="logs")]
    planted = path.with_name("planted.csv")
    planted.write_text(path.read_text() + f"x,{secrets[1]}\n")
    report.planted_found = bool(scan_file(planted, secrets=secrets))
    return report
