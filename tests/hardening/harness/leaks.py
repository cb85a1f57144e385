"""No leaks: a whole client journey with the history exported to CSV and the logs captured
at DEBUG; the leak scanner (``kit.regress.leaks``) must find nothing in either, and must find
a secret planted in a copy."""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.hardening.harness.money import customer
from tests.sim.helpers.control import reset


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


def _session_token(api: Any) -> str | None:
    """The client's current session token: no public view shows it (by design), so the one
    place the suite reads a client's insides."""
    current = api._requestor.current
    return None if current is None else current.token.reveal()


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
        a, b = customer(a_api, 0), customer(b_api, 1)
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
            session_token = _session_token(api)
            if session_token is not None:
                secrets.append(session_token)
            secrets.append(api.token().token.reveal())  # the token it holds: no new exchange
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
    from kit.regress.leaks import scan_file, scan_text

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
