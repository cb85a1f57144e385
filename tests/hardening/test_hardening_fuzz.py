"""Fuzzing the partner API from its own ``/openapi.json`` with schemathesis (issue #6, item 1).

A bounded, derandomized run (the same few hundred requests every time); ``make stress``
runs more than 2,000. Every answer: no 5xx, conforming to the documented responses,
problem+json on every 4xx (RFC 6749 JSON on the token endpoints).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.hardening.harness import problem_violation, run_fuzz


def test_generated_requests_get_documented_answers_and_no_5xx(sim_server: Any) -> None:
    report = run_fuzz(sim_server.base_url, max_examples=6)
    assert report.requests >= 200, report
    assert len(report.operations) == 20, sorted(report.operations)  # every partner operation
    assert not report.server_errors, "\n".join(report.server_errors[:20])
    assert not report.schema_violations, "\n".join(report.schema_violations[:20])
    assert not report.problem_violations, "\n".join(report.problem_violations[:20])
    # the requests reached the handlers, not only the token check: successes and refusals
    assert sum(n for status, n in report.statuses.items() if status < 300) >= 40, report.statuses
    assert {400, 404, 422} <= set(report.statuses), report.statuses


@pytest.mark.parametrize(
    ("path", "status", "headers", "body", "wrong"),
    [
        ("/cards/x", 404, {"content-type": "application/json"}, {"detail": "Not Found"}, True),
        ("/cards/x", 422, {"content-type": "application/json"}, {"detail": [{"loc": ["body"]}]}, True),
        ("/cards/x", 404, {"content-type": "text/plain"}, "Not Found", True),
        (
            "/cards/x",
            404,
            {"content-type": "application/problem+json"},
            {
                "type": "urn:partner-api-kit:problem:x",
                "title": "t",
                "status": 400,
                "detail": "d",
                "code": "x",
            },
            True,
        ),
        (
            "/cards/x",
            404,
            {"content-type": "application/problem+json"},
            {
                "type": "urn:partner-api-kit:problem:x",
                "title": "t",
                "status": 404,
                "detail": "d",
                "code": "x",
            },
            False,
        ),
        ("/oauth/accesstoken", 401, {"content-type": "application/json"}, {"error": "invalid_client"}, False),
        ("/oauth/accesstoken", 401, {"content-type": "application/json"}, {"detail": "no"}, True),
    ],
)
def test_the_problem_check_can_fail(path: str, status: int, headers: dict, body: Any, wrong: bool) -> None:
    raw = (body if isinstance(body, str) else json.dumps(body)).encode()
    assert (problem_violation(path, status, headers, raw) is not None) is wrong
