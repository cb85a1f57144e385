"""docs/scheduling.md: its CI recipes are valid YAML whose ``kit`` commands exist and parse
their options, its install line names extras that exist, and its morning ``summary.md`` excerpt
is what the kit writes (regenerated here from two runs' records; ``python -m
tests.notebooks.test_scheduling_guide`` rewrites it in the guide after a change)."""

from __future__ import annotations

import re
import shlex
import tomllib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from kit import cli
from kit._drift import Drift
from kit.regress import history, record, reports
from kit.regress.model import Attempt, CheckResult, NotebookResult
from kit.regress.sandbox import SANDBOX_ENV

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "scheduling.md"
BEGIN, END = "<!-- morning summary: begin -->", "<!-- morning summary: end -->"
OUT = Path("out/regress")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.DOTALL)


def _commands(text: str) -> list[str]:
    """Every ``kit …`` command line of a shell script (continuation lines joined)."""
    joined = text.replace("\\\n", " ")
    return [line.strip() for line in joined.splitlines() if re.match(r"\s*(\S*/)?kit\s", line)]


def _recipes() -> dict[str, Any]:
    found = {}
    for block in _blocks("yaml"):
        data = yaml.safe_load(block)
        found["github" if "jobs" in data else "gitlab"] = data
    return found


def _scripts(recipe: dict[str, Any]) -> list[str]:
    if "jobs" in recipe:
        return [step["run"] for job in recipe["jobs"].values() for step in job["steps"] if "run" in step]
    return [line for job in recipe.values() if isinstance(job, dict) for line in job.get("script", [])]


def test_the_recipes_are_valid_yaml_of_a_scheduled_github_workflow_and_a_gitlab_job() -> None:
    recipes = _recipes()
    assert set(recipes) == {"github", "gitlab"}
    github = recipes["github"]
    on = github.get("on", github.get(True))  # YAML 1.1 reads a bare `on` as true
    assert on["schedule"][0]["cron"]
    steps = [s for job in github["jobs"].values() for s in job["steps"]]
    uses = [s["uses"].split("@")[0] for s in steps if "uses" in s]
    assert {"actions/upload-artifact", "mikepenz/action-junit-report"} <= set(uses)
    assert any("GITHUB_STEP_SUMMARY" in s.get("run", "") for s in steps)
    env = {k: v for s in steps for k, v in (s.get("env") or {}).items()}
    assert all(env[name].startswith("${{ secrets.") for name in SANDBOX_ENV[1:])
    (job,) = [j for j in recipes["gitlab"].values() if isinstance(j, dict) and "script" in j]
    assert job["artifacts"]["reports"]["junit"].endswith("junit.xml")
    assert any("schedule" in str(rule.get("if", "")) for rule in job["rules"])


@pytest.mark.parametrize("recipe", ["github", "gitlab"])
def test_every_kit_command_of_a_recipe_exists_and_parses(recipe: str) -> None:
    commands = [c for script in _scripts(_recipes()[recipe]) for c in _commands(script)]
    assert any(" regress " in f" {c} " for c in commands), commands
    parser = cli.build_parser()
    for command in commands:
        argv = shlex.split(command)[1:]
        args = parser.parse_args(argv)  # an unknown option or command: SystemExit
        if args.command == "regress":
            assert args.history and args.reruns >= 1, command


def test_the_install_lines_name_extras_that_exist() -> None:
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    text = GUIDE.read_text(encoding="utf-8")
    lines = re.findall(r"partner-api-kit\[([a-z,]+)\]", text)
    assert lines and all(set(line.split(",")) <= extras for line in lines)
    assert all({"regress", "lab"} <= set(line.split(",")) for line in lines)
    assert f"keeps the last {history.KEEP} runs'" in text  # the documented constant


def morning() -> str:
    """The excerpt: a night's and a morning's results recorded by the kit, compared, summarised."""
    when = datetime(2026, 11, 26, 3, 0, tzinfo=UTC)
    spec = CheckResult("a closed card is refused", "passed", "", "cell 9", "spec", "card.1")
    moved = Drift(
        "body", "GET /cards/{card_id}", "body.created_at", "present (required)", "missing", "r1", "A35"
    )
    night = [
        NotebookResult("04_onboarding_and_kyc.ipynb", "passed", 21.4, OUT, checks=(spec,)),
        NotebookResult("05_cards_close_with_reason.ipynb", "passed", 18.2, OUT, checks=(spec,)),
        NotebookResult(
            "07_p2p.ipynb", "failed", 12.9, OUT, "cell 14 (In [9])", "TransportError: POST /p2p/transfers"
        ),
    ]
    late = Attempt("cell 6 (In [4]): TimeoutError: GET /webhooks/jwks", "", 30.1)
    now = [
        NotebookResult("04_onboarding_and_kyc.ipynb", "passed", 44.8, OUT, checks=(spec,)),
        NotebookResult(
            "05_cards_close_with_reason.ipynb",
            "failed",
            19.0,
            OUT,
            "cell 12 (In [8])",
            "CheckFailed: check 'close reasons'",
            checks=(spec,),
            drift=(moved,),
        ),
        NotebookResult("07_p2p.ipynb", "passed", 13.1, OUT),
        NotebookResult("08_webhooks.ipynb", "flaky", 16.5, OUT, attempts=(late,)),
    ]
    params = {"profile": "sandbox"}
    settings = {"jobs": 2, "cell_timeout": 120.0, "reruns": 2}
    before = record.build(
        night, parameters=params, sets={}, started=when, ended=when, exit_code=1, settings=settings
    )
    after = record.build(
        now,
        parameters=params,
        sets={},
        started=when.replace(day=27),
        ended=when,
        exit_code=1,
        settings=settings,
    )
    since = history.compare(before, after)
    source = "history/results-20261126T0300000000.json"
    text = reports.summary(now, params, OUT, 2, 120.0, since=history.section(since, source))
    return text.split("\n## Checks", 1)[0].rstrip("\n") + "\n"


def _excerpt() -> str:
    text = GUIDE.read_text(encoding="utf-8")
    return text.split(BEGIN, 1)[1].split(END, 1)[0]


def _block(summary: str) -> str:
    return f"\n```markdown\n{summary}```\n"


def test_the_guides_morning_summary_is_what_the_kit_writes() -> None:
    assert _excerpt() == _block(morning()), "run python -m tests.notebooks.test_scheduling_guide"


if __name__ == "__main__":
    guide = GUIDE.read_text(encoding="utf-8")
    head, rest = guide.split(BEGIN, 1)
    GUIDE.write_text(head + BEGIN + _block(morning()) + END + rest.split(END, 1)[1], encoding="utf-8")
