"""The wire in notebooks and ``kit regress``: the companion records, writes its wire and its
tokens' fingerprints for the run; ``--har`` writes ``OUT/NN_name.har``; the leak scan finds a
short answer only where it could be the secret, and a used token whatever its format."""

from __future__ import annotations

import json
import os
import re
import secrets
from collections import Counter
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from kit import regress
from kit.notebook import companion
from kit.notebook.wire import WIRE_ENV, Sink, cell
from kit.regress import har
from kit.regress.leaks import Fingerprints, read_fingerprints, scan_text
from kit.regress.model import NotebookResult
from tests.client.test_wire_har import validate_har

WIRE_FIXTURES = Path(__file__).resolve().parent / "wire_fixtures"


# -- the leak scan: no false positive on ids, no blind spot on formats ---------------------------


def test_a_short_answer_is_caught_where_it_could_be_the_secret() -> None:
    for text in (
        "The answer to question 2 is 4821.",
        '{"question_id": "q2", "choice": "4821"}',
        "| q2 | 4821 |",
        "answer=4821",
    ):
        assert [f.kind for f in scan_text(text, secrets=["4821"])] == ["secret"], text


def test_the_same_digits_inside_an_id_are_not() -> None:
    ids = "person 9f1c2b3a-4821-4abc-8def-012345674821, account acc_4821ab, card crd-4821, v1.4821"
    assert scan_text(ids, secrets=["4821"]) == []


def test_a_session_token_without_a_prefix_is_caught_by_its_fingerprint() -> None:
    token = secrets.token_urlsafe(32)  # no ses_ prefix: no pattern finds it
    salt = secrets.token_bytes(16)
    texts = (f"session {token}.", f'{{"svc-session-id": "{token}"}}', f"GET /x/{token}?a=1")
    for text in texts:
        assert scan_text(text) == []
        found = scan_text(text, secrets=[Fingerprints.of(salt, [token])])
        assert [f.kind for f in found] == ["used-token"], text
        assert token not in str(found)
    assert scan_text(f"session {token}", secrets=[Fingerprints.of(salt, ["another-token-of-16"])]) == []


# -- the companion: recording on, the run's files ---------------------------------------------------


def test_the_companion_records_and_writes_no_token_in_the_clear(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix = str(tmp_path / "nb")
    monkeypatch.setenv(WIRE_ENV, prefix)
    mine = companion.Companion()
    api = mine.connect("sim", seed=7)
    try:
        assert WIRE_ENV not in os.environ  # a process the notebook starts does not inherit it
        api.sessions.create("anonymous", expiration="sliding")
        api.accounts.create()
        assert api.wire_log is not None and len(api.wire_log) >= 4
        partner, session = api._requestor.auth.token, api._requestor.current
        assert partner is not None and session is not None
        lines = Path(prefix + ".wire.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(lines) == len(api.wire_log)
        assert {json.loads(line)["path"] for line in lines} >= {
            "/oauth/accesstoken",
            "/sessions",
            "/accounts",
        }
        tokens_file = Path(prefix + ".tokens.json").read_text(encoding="utf-8")
        for token in (partner.reveal(), session.token.reveal()):
            assert token not in "".join(lines) and token not in tokens_file
        prints = read_fingerprints(prefix + ".tokens.json")
        assert prints is not None
        leaked = f"oops: {session.token.reveal()} and {partner.reveal()}"
        assert [f.kind for f in scan_text(leaked, secrets=[prints])] == ["used-token", "used-token"]
    finally:
        api.close()


def test_outside_a_kernel_there_is_no_cell_and_no_sink(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(WIRE_ENV, raising=False)
    assert cell() is None
    assert Sink.from_env() is None


def test_a_leak_in_a_har_makes_the_notebook_leaked(tmp_path: Path) -> None:
    token = secrets.token_urlsafe(32)
    path = tmp_path / "01_x.har"
    path.write_text(json.dumps({"log": {"entries": [{"comment": f"token {token}"}]}}), encoding="utf-8")
    passed = NotebookResult("01_x.ipynb", "passed", 1.0, tmp_path / "01_x.ipynb")
    result = har.attach(passed, path, [Fingerprints.of(b"s", [token])])
    assert (result.status, result.cell) == ("leaked", "01_x.har")
    assert [f.kind for f in result.findings] == ["used-token"]
    assert token not in path.read_text(encoding="utf-8")  # rewritten redacted
    clean = tmp_path / "02_y.har"
    clean.write_text('{"log": {"entries": []}}', encoding="utf-8")
    assert har.attach(passed, clean, []) is passed


# -- kit regress --har ------------------------------------------------------------------------


@pytest.mark.slow  # a kit regress run: ≈4 s
@pytest.mark.papermill
def test_regress_har_writes_a_valid_har_beside_the_notebook(tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = regress.run(["01"], notebooks_dir=WIRE_FIXTURES, out_dir=out, write_har=True, jobs=1)
    assert report.ok, report.summary
    log = validate_har(out / "01_wire.har")["log"]
    assert log["creator"]["name"] == "partner-api-kit"
    entries = log["entries"]
    accounts = [e for e in entries if e["request"]["url"].endswith("/accounts")]
    assert [e["response"]["status"] for e in accounts] == [503, 201]  # the fault and its replay
    sessions = [e for e in entries if e["request"]["url"].endswith("/sessions")]
    assert len(sessions) == 2  # both clients' calls
    assert all("notebook cell In [" in e["comment"] for e in entries)
    executed_nb = json.loads((out / "01_wire.ipynb").read_text(encoding="utf-8"))
    count = executed_nb["cells"][-1]["execution_count"]  # the cell that made the calls
    assert all(f"notebook cell In [{count}]" in e["comment"] for e in accounts)
    executed = (out / "01_wire.ipynb").read_text(encoding="utf-8")
    assert "503 → 201 · 2 attempts" in executed
    assert not list(out.glob("*.jsonl")) and not list(out.glob("*.tokens.json"))


def test_har_needs_the_local_pool(tmp_path: Path) -> None:
    with pytest.raises(regress.RegressError, match="--har"):
        regress.run(
            ["01"],
            notebooks_dir=WIRE_FIXTURES,
            out_dir=tmp_path,
            write_har=True,
            scheduler="tcp://127.0.0.1:9",
        )


def _call_numbers(entries: list[dict[str, Any]]) -> Counter[int]:
    """How many clients made a call numbered n (a retried call's later attempts not again; a
    call with a refused partner token, ``calls 5 and 7``, counts for both of its rows; the
    simulator's ``control call``s are not numbered)."""
    seen: Counter[int] = Counter()
    for entry in entries:
        parts = [part.strip() for part in entry["comment"].split(";")]
        later = any(p.startswith("attempt ") and not p.startswith("attempt 1 ") for p in parts[1:])
        if parts[0].startswith(("call ", "calls ")) and not later:
            for number in re.findall(r"\d+", parts[0]):
                seen[int(number)] += 1
    return seen


@pytest.mark.slow
@pytest.mark.papermill
def test_regress_00_07_har_files_validate_hold_every_call_and_no_secret(tmp_path: Path) -> None:
    """The issue's own run: ``kit regress 00 07 --har``. Each client numbers its calls 1, 2, …:
    every number up to a client's last is in the file (no call missing), both of 07's customers
    and its 503 with the replay are there, and the run's leak scan passed over the HAR files."""
    out = tmp_path / "out"
    report = regress.run(["00", "07"], out_dir=out, write_har=True, jobs=2)
    assert report.ok, report.summary  # a leak in a HAR file makes its notebook "leaked"
    for name, clients in (("00_quickstart", 1), ("07_p2p", 2)):
        entries = validate_har(out / f"{name}.har")["log"]["entries"]
        numbers = _call_numbers(entries)
        counts = [numbers[n] for n in range(1, max(numbers) + 1)]
        assert counts[0] == clients and all(a >= b > 0 for a, b in pairwise(counts)), (
            name,
            counts,
        )
        text = json.dumps(entries)
        assert "Bearer <partner-token>" in text and "eyJ" not in text  # redacted, no JWE or JWS
    p2p = validate_har(out / "07_p2p.har")["log"]["entries"]
    requests = [(e["request"]["method"], e["request"]["url"], e["response"]["status"]) for e in p2p]
    statuses = [code for method, url, code in requests if method == "POST" and url.endswith("/p2p/transfers")]
    assert 503 in statuses and statuses[statuses.index(503) + 1] == 201  # the fault, then its replay
