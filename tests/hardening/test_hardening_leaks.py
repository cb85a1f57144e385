"""No leaks (issue #6, item 6): a whole client journey with the history exported to CSV and
every log record of the kit and httpx at DEBUG; the leak scanner (:mod:`kit.regress.leaks`)
finds nothing in either — and does find a secret planted in a copy, so the scan can fail."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from kit.regress.leaks import scan_file, scan_text
from tests.hardening.harness import leak_journey


def test_a_full_journey_leaks_nothing_into_history_or_logs(
    sim_server: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    for name in ("kit", "httpx", "httpcore"):
        caplog.set_level(logging.DEBUG, logger=name)
    csv, secrets = leak_journey(sim_server.base_url, tmp_path)
    assert len(secrets) >= 9  # client secret, two session and two partner tokens, PII
    rows = csv.read_text().splitlines()
    assert len(rows) > 20 and rows[0].startswith("time,method,path,status"), rows[:2]
    assert any(",422," in row and "invalid-amount" in row for row in rows)  # errors are there too
    assert caplog.records, "the journey logged nothing: the scan below would prove nothing"
    logs = caplog.text + "\n".join(r.getMessage() for r in caplog.records)

    for path in (csv, tmp_path / "history_b.csv"):
        findings = scan_file(path, secrets=secrets)
        assert findings == [], [str(f) for f in findings]
    findings = scan_text(logs, secrets=secrets, location="logs")
    assert findings == [], [str(f) for f in findings]

    # the scan can fail: the same CSV with a session token and a persona's date of birth
    planted = tmp_path / "planted.csv"
    session_token = next(s for s in secrets if s.startswith("ses_"))
    planted.write_text(csv.read_text() + f"x,{session_token}\n")
    assert {f.kind for f in scan_file(planted)} >= {"session-token"}
    dob = next(s for s in secrets if len(s) == 10 and s[4] == "-")
    assert scan_text(logs + f"\nkit DEBUG born {dob}") != []
