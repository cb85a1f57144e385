"""Fuzzing with schemathesis: requests generated from the simulator's own ``/openapi.json``
(partner routes only) with a valid partner token, a person session of an established
person and an ``Idempotency-Key`` injected; every answer is checked for 5xx, conformance to
the documented responses, and problem+json on 4xx (RFC 6749 on the token endpoints)."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.sim.helpers.contract import API_VERSION, PROBLEM_CT, PROBLEM_FIELDS, PROBLEM_PREFIX
from tests.sim.helpers.control import open_document_request, reset
from tests.sim.helpers.encryption import Device
from tests.sim.helpers.journeys import journey, new_session, p2p_transfer
from tests.sim.helpers.resources import create_card
from tests.sim.helpers.wire import basic_auth, partner_token

OAUTH_PATHS = ("/oauth/accesstoken", "/authorization/server_api/access_tokens")


def problem_violation(path: str, status: int, headers: Any, body: bytes) -> str | None:
    """What is wrong with an error answer's shape (None when nothing is)."""
    if status < 400:
        return None
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
        assert self.b.person_id is not None
        resp = p2p_transfer(http, self.a, self.b.person_id, "1.00", idem="fuzz-seed-transfer")
        assert resp.status_code == 201, resp.text
        self.transfer = resp.json()["transfer_id"]
        assert self.a.person_id is not None
        self.document_request = open_document_request(http, self.a.person_id)
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
            return {"Authorization": basic_auth()}
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
