"""``OUT/report.html``: a real ``kit regress`` run's page, parsed (it is well-formed XML): the
same run as ``results.json`` — every notebook, every check with its outcome and basis, the
skips and why, since the last run first — links that resolve in OUT, nothing fetched from
anywhere; and the leak scan reads it, HTML escapes decoded. A flaky rerun's attempts are
checked on the rerun test's own run (``test_regress_scheduled``); HTML escapes in any text or
notebook output, in ``test_leaks_decoded``."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from kit import _env as env
from kit.notebook.basis import statement_ids
from kit.regress import htmlreport, leaks, outputs, preflight, record
from kit.regress.matrix import Job
from kit.regress.model import EXIT_FAILED, CheckResult, NotebookResult
from tests.notebooks.helpers import run_cli
from tests.notebooks.junit_check import valid_results
from tests.notebooks.test_regress_drift import notebook

SPEC = min(statement_ids())
CHECKED = f"""\
import kit
from kit.notebook import check, skip
api = kit.notebook.connect(profile)
with check("the JWK set has keys", spec={SPEC!r}) as c:
    c.expect_true(api.webhooks.jwks()["keys"], "the JWK set has keys", got="none", want="keys")
with check("one and one make two", choice="A01") as c:
    c.expect(1 + 1, 2, what="the sum", show=True)
skip("a <third-party> step", "not offered by this API & never asked", spec={SPEC!r})
"""
FAILING = """\
from kit.notebook import check
with check("two and two make five", choice="A01") as c:
    c.expect(2 + 2, 5, what="the sum", show=True)
"""
#: Elements that make a browser fetch something, and attributes that name what to fetch.
FETCHING = {"script", "link", "img", "iframe", "object", "embed", "source", "audio", "video", "track", "base"}
URL_ATTRIBUTES = {"href", "src", "srcset", "action", "formaction", "poster", "data", "background", "cite"}


class Page:
    """``report.html`` parsed: its tables by id, as rows of ``{column: text}``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.text = path.read_text(encoding="utf-8")
        self.root = ET.fromstring(self.text)  # well-formed, or this raises

    def by_id(self, ident: str) -> ET.Element:
        found = self.root.find(f".//*[@id='{ident}']")
        assert found is not None, ident
        return found

    def rows(self, ident: str) -> list[dict[str, str]]:
        table = self.by_id(ident)
        head = [text(th) for th in table.iterfind("thead/tr/th")]
        return [dict(zip(head, map(text, tr), strict=True)) for tr in table.iterfind("tbody/tr")]

    def links(self) -> list[str]:
        return [str(a.get("href")) for a in self.root.iter("a")]


def text(element: ET.Element) -> str:
    return " ".join("".join(element.itertext()).split())


def assert_self_contained(page: Page, server: str = "") -> None:
    """Nothing a browser would fetch: no fetching element, no URL but a relative one or a
    fragment, no style that imports; the API server only as text; a policy that forbids any."""
    for element in page.root.iter():
        assert element.tag not in FETCHING, element.tag
        for name, value in element.attrib.items():
            if name in URL_ATTRIBUTES:
                assert not re.match(r"^\s*([a-z][a-z0-9+.-]*:|//)", value, re.I), (element.tag, value)
            if name != "content":
                assert "http:" not in value and "https:" not in value, (element.tag, name, value)
    for style in page.root.iter("style"):
        assert "url(" not in (style.text or "") and "@import" not in (style.text or "")
    policy = page.root.find(".//meta[@http-equiv='Content-Security-Policy']")
    assert policy is not None and "default-src 'none'" in str(policy.get("content"))
    shown = set(re.findall(r"https?://[^\s<\"']+", page.text))
    assert shown <= ({server} if server else set()), shown


def assert_links_resolve(page: Page) -> list[Path]:
    """Every link is a fragment of the page or a relative path to a file in its folder."""
    files = []
    for href in page.links():
        if href.startswith("#"):
            page.by_id(href[1:])
            continue
        target = (page.path.parent / unquote(href)).resolve()
        assert target.is_file() and page.path.parent.resolve() in target.parents, href
        files.append(target)
    return files


def _baseline(folder: Path) -> Path:
    """A last night's ``results.json``: 02 passed then, and a notebook since removed."""
    old = [
        NotebookResult("01_checked.ipynb", "passed", 9.0, folder),
        NotebookResult("02_failing.ipynb", "passed", 1.0, folder),
        NotebookResult("03_gone.ipynb", "passed", 1.0, folder),
    ]
    when = datetime(2026, 11, 26, 3, 0, tzinfo=UTC)
    settings = {"jobs": 1, "cell_timeout": 60.0, "reruns": 0}
    data = record.build(old, parameters={}, sets={}, started=when, ended=when, exit_code=0, settings=settings)
    folder.mkdir(parents=True)
    record.write(folder, data)
    return folder


@pytest.mark.slow  # a kit regress run: ≈6 s
@pytest.mark.papermill
def test_a_runs_page_holds_what_results_json_holds(tmp_path: Path) -> None:
    notebook(tmp_path / "nb", "01_checked.ipynb", CHECKED)
    notebook(tmp_path / "nb", "02_failing.ipynb", FAILING)
    out, night = tmp_path / "out", _baseline(tmp_path / "night")
    code, stdout, stderr = run_cli(
        "--notebooks", str(tmp_path / "nb"), "--out", str(out), "--baseline", str(night)
    )
    assert code == EXIT_FAILED, stdout + stderr
    data, page = valid_results(out), Page(out / htmlreport.FILE)
    assert_self_contained(page)
    summary = (out / "summary.md").read_text(encoding="utf-8")
    title = text(page.by_id("headline")[0])  # its h1
    assert f"# {title}\n" in summary and title == "kit regress: 1 of 2 notebooks failed"
    assert text(page.by_id("fact-notebooks")) == "2 (1 passed, 1 failed)"
    assert text(page.by_id("fact-checks")) == "4 (2 passed, 1 failed, 1 skipped)"
    assert text(page.by_id("fact-profile")) == "sim"
    assert text(page.by_id("fact-server")) == "the simulator embedded in each kernel"
    assert re.fullmatch(r"\d+ s \(started .+, ended .+\)", text(page.by_id("fact-duration")))
    assert data["settings"]["servers"] == {"sim": "the simulator embedded in each kernel"}
    # since the last run comes first, and says what results.json says
    sections = [s.get("id") for s in page.root.iter("section")]
    assert sections[:3] == ["since", "notebooks-s", "each-s"]
    since = {r["what"]: r for r in page.rows("since-table")}
    assert (
        since["newly failing"]["which"]
        == "02_failing.ipynb"
        == ", ".join(data["since_last_run"]["newly_failing"])
    )
    assert since["notebooks removed"]["how many"] == "1"
    # every notebook, its status, its executed notebook linked
    rows = page.rows("notebooks")
    assert [(r["notebook"], r["status"]) for r in rows] == [
        (n["notebook"], f"{'✓' if n['status'] == 'passed' else '✗'} {n['status']}") for n in data["notebooks"]
    ]
    assert [r["executed notebook"] for r in rows] == ["01_checked.ipynb", "02_failing.ipynb"]
    assert {p.name for p in assert_links_resolve(page)} >= {
        "01_checked.ipynb",
        "02_failing.ipynb",
        "summary.md",
    }
    # each notebook's details: its checks with outcome (in words) and basis; a failed one open
    shown = []
    for i, row in enumerate(rows, start=1):
        details = page.by_id(f"nb-{i}")
        assert (details.get("open") is not None) == (row["notebook"] == "02_failing.ipynb")
        shown += [(row["notebook"], c["check"], c["basis"], c["outcome"]) for c in page.rows(f"checks-{i}")]
    bases = {"spec": "spec statement", "choice": "register entry"}
    symbols = {"passed": "✓", "failed": "✗", "skipped": "–"}
    assert shown == [
        (
            c["notebook"],
            c["title"],
            f"{bases[c['kind']]} {c['basis']}",
            f"{symbols[c['outcome']]} {c['outcome']}",
        )
        for c in data["checks"]
    ]
    failed = page.rows("checks-2")[0]
    assert "expected 5" in failed["reason"] and "got 4" in failed["reason"]  # what and why, as text
    (skip,) = page.rows("skips")
    assert skip == {
        "check": "a <third-party> step",
        "notebook": "01_checked.ipynb",
        "basis": f"spec statement {SPEC}",
        "cell": skip["cell"],
        "reason": "not offered by this API & never asked",
    }
    assert "a &lt;third-party&gt; step" in page.text  # escaped, not markup
    assert leaks.scan_file(page.path) == []


def assert_flaky_page(out: Path, server: str) -> None:
    """The page of the rerun test's run: a flaky notebook's attempts and its flaky check, and
    the sandbox's address only as text, its user info, query and fragment left out."""
    page = Page(out / htmlreport.FILE)
    assert_self_contained(page, server)
    assert text(page.by_id("fact-server")) == server
    assert text(page.by_id("fact-profile")) == "staging"
    (row,) = page.rows("notebooks")
    assert row["status"] == "↻ flaky" and row["error"].startswith("passed on attempt 2; first failed: cell")
    assert page.by_id("nb-1").get("open") is not None  # a flaky notebook deserves a look too
    attempts = page.rows("attempts-1")
    assert [(a["attempt"], a["outcome"]) for a in attempts] == [("1", "✗ failed"), ("2", "✓ passed")]
    assert "attempt 1 fails" in attempts[0]["message"] and attempts[1]["message"] == ""
    (check,) = page.rows("checks-1")
    assert check["outcome"] == "↻ flaky" and "attempt 1 fails" in check["reason"]
    assert check["basis"] == "register entry A01"


def _result(tmp_path: Path, **fields: Any) -> NotebookResult:
    return NotebookResult("01_x.ipynb", "passed", 1.0, tmp_path / "01_x.ipynb", **fields)


def _finish(tmp_path: Path, result: NotebookResult, secrets: list[str]) -> Any:
    started = datetime.now(UTC)
    run = outputs.Run(tmp_path, tmp_path, {}, {}, 1, 60.0, started, servers={"sim": "the simulator"})
    return outputs.finish([result], run, secrets=secrets, other=False, expected=None)


def test_a_secret_the_page_writes_as_html_escapes_is_found_there(tmp_path: Path) -> None:
    secret = "it's-<our>&secret"  # html.escape writes it it&#x27;s-&lt;our&gt;&amp;secret
    check = CheckResult(f"sent {secret}", "passed", "", "cell 2", "choice", "A01")  # a redaction missed
    report = _finish(tmp_path, _result(tmp_path, checks=(check,)), [secret])
    page = (tmp_path / htmlreport.FILE).read_text(encoding="utf-8")
    assert secret not in page and html.escape(secret) in page
    assert f"{tmp_path / htmlreport.FILE}, line" in " ".join(f.location for f in report.findings)
    assert not report.ok


def test_the_page_escapes_what_it_shows_and_links_only_into_out(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    for name in ("summary.md", "junit.xml", "results.json"):  # written beside it by every run
        (tmp_path / "out" / name).touch()
    elsewhere = tmp_path / "elsewhere.ipynb"
    elsewhere.write_text("{}", encoding="utf-8")
    hostile = CheckResult(
        '<script>alert(1)</script>"', "failed", "got \x1b[31mred\x00", "cell 1", "spec", "x"
    )
    results = [
        NotebookResult("01_a b.ipynb[set 1]", "failed", 1.0, tmp_path / "out" / "set 1" / "01_a b.ipynb"),
        NotebookResult("02.ipynb", "failed", 1.0, elsewhere, "cell 1", "<img src=x>", checks=(hostile,)),
    ]
    results[0].output.parent.mkdir()
    results[0].output.write_text("{}", encoding="utf-8")
    when = datetime(2026, 11, 27, tzinfo=UTC)
    settings = {"jobs": 1, "cell_timeout": 60.0, "reruns": 0}
    data = record.build(
        results,
        parameters={},
        sets={"set 1": {"seed": 1}},
        started=when,
        ended=when,
        exit_code=1,
        settings=settings,
    )
    (tmp_path / "out" / htmlreport.FILE).write_text(htmlreport.render(results, data, tmp_path / "out"))
    page = Page(tmp_path / "out" / htmlreport.FILE)
    assert_self_contained(page)
    assert not list(page.root.iter("img")) and "<script>" not in page.text
    assert [r["executed notebook"] for r in page.rows("notebooks")] == ["set 1/01_a b.ipynb", "none written"]
    assert "set%201/01_a%20b.ipynb" in page.links()
    assert_links_resolve(page)
    (check,) = page.rows("checks-2")
    assert check["check"] == '<script>alert(1)</script>"' and check["reason"] == "got #x1B[31mred#x00"
    assert text(page.by_id("fact-server")) == "not recorded"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://partner:pa55@Sandbox.example:8443/api/?key=v#top", "https://sandbox.example:8443/api/"),
        ("http://[::1]:8080", "http://[::1]:8080"),
        ("", f"{env.BASE_URL} not set to a URL"),
        ("sandbox.example", f"{env.BASE_URL} not set to a URL"),
        ("https://sandbox.example:99999/", f"{env.BASE_URL} not set to a URL"),
    ],
)
def test_the_server_of_each_profile_is_said_without_user_info_query_or_fragment(url: str, shown: str) -> None:
    jobs = [
        Job(Path("01.ipynb"), Path("out/01.ipynb")),
        Job(Path("02.ipynb"), Path("o"), {"profile": "sandbox"}),
    ]
    assert preflight.servers(jobs, {env.BASE_URL: url}) == {
        "sim": "the simulator embedded in each kernel",
        "sandbox": shown,
    }
