"""``kit regress --matrix`` (notebooks × parameter sets) locally and ``--scheduler`` on a real Dask
``LocalCluster`` (2 worker processes): one JUnit testcase per (notebook, set), the same verdicts
both ways, the refusals and the leak scan applied to every set.

The files without kernels run first; the cluster test starts 2 worker processes and 6 kernels.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from kit import _env as env
from kit import regress
from kit.register import personas
from kit.regress.matrix import jobs, load_matrix, longest_first, parse_matrix
from tests.notebooks.helpers import FIXTURES, run_cli

SIM_SECRET = next(iter(env.SIM_PARTNER_CLIENTS.values()))
DOB = personas()[0]["date_of_birth"]

MATRIX = """
[sets.six]
expected_total = 6

[sets.seven]
expected_total = 7
leak = true
"""
#: (testcase classname, name) → failure type (None: passed), for 02_param and 03_guarded × MATRIX.
EXPECTED = {
    ("notebooks.six", "02_param[six]"): None,
    ("notebooks.seven", "02_param[seven]"): "AssertionError",
    ("notebooks.six", "03_guarded[six]"): None,
    ("notebooks.seven", "03_guarded[seven]"): "Leak",
}


def _cases(junit: Path) -> dict[tuple[str, str], str | None]:
    cases = ET.parse(junit).getroot().findall(".//testcase")
    return {
        (c.get("classname", ""), c.get("name", "")): (
            c.find("failure").get("type") if c.find("failure") is not None else None  # type: ignore[union-attr]
        )
        for c in cases
    }


@pytest.fixture
def matrix_file(tmp_path: Path) -> Path:
    path = tmp_path / "m.toml"
    path.write_text(MATRIX, encoding="utf-8")
    return path


# --- the matrix file, without kernels -----------------------------------------------------------


def test_a_matrix_file_gives_named_sets_and_one_job_per_pair(matrix_file: Path) -> None:
    sets = load_matrix(matrix_file)
    assert sets == {"six": {"expected_total": 6}, "seven": {"expected_total": 7, "leak": True}}
    run = jobs([Path("nb/02_param.ipynb"), Path("nb/03_guarded.ipynb")], Path("out"), {"pause": 0.0}, sets)
    assert [(j.label, str(j.output), dict(j.params)) for j in run] == [
        ("02_param.ipynb[six]", "out/six/02_param.ipynb", {"pause": 0.0, "expected_total": 6}),
        (
            "02_param.ipynb[seven]",
            "out/seven/02_param.ipynb",
            {"pause": 0.0, "expected_total": 7, "leak": True},
        ),
        ("03_guarded.ipynb[six]", "out/six/03_guarded.ipynb", {"pause": 0.0, "expected_total": 6}),
        (
            "03_guarded.ipynb[seven]",
            "out/seven/03_guarded.ipynb",
            {"pause": 0.0, "expected_total": 7, "leak": True},
        ),
    ]
    assert [j.label for j in jobs([Path("nb/02_param.ipynb")], Path("out"), {})] == ["02_param.ipynb"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[sets.a\nseed = 7", "is not TOML"),
        ("seed = 7", "unknown top-level key"),
        ("[other]\nseed = 7", "unknown top-level key"),
        ("", "names no parameter set"),
        ("sets = 3", "names no parameter set"),
        ("[sets]\na = 7", "must be a table"),
        ('[sets."has space"]\nseed = 7', "set name 'has space'"),
        ('[sets.a]\n"not-an-id" = 7', "not Python identifiers"),
        ('[sets.a]\nclient_secret = "x-value"', "set 'a': refusing parameter 'client_secret'"),
        (f'[sets.b]\nnote = "{SIM_SECRET}"', "set 'b': refusing parameter 'note': its value looks like"),
    ],
)
def test_a_bad_matrix_is_refused_naming_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(regress.RegressError, match=message.replace("(", r"\(")) as caught:
        parse_matrix(text)
    assert SIM_SECRET not in caught.value.message and "x-value" not in caught.value.message


def test_the_cli_refuses_a_secret_in_a_set_before_any_kernel(tmp_path: Path) -> None:
    matrix = tmp_path / "m.toml"
    matrix.write_text('[sets.ok]\nseed = 7\n[sets.bad]\napi_key = "k-hidden-value"\n', encoding="utf-8")
    out = tmp_path / "out"
    code, stdout, stderr = run_cli("--notebooks", str(FIXTURES), "--out", str(out), "--matrix", str(matrix))
    assert (code, stdout) == (2, "")
    assert "set 'bad': refusing parameter 'api_key'" in stderr and "k-hidden-value" not in stderr
    assert not out.exists()
    code, _, stderr = run_cli("--notebooks", str(FIXTURES), "--matrix", str(tmp_path / "missing.toml"))
    assert code == 2 and "cannot read the matrix file" in stderr


def test_a_parameter_given_by_p_and_by_a_set_is_refused(matrix_file: Path, tmp_path: Path) -> None:
    code, _, stderr = run_cli(
        "--notebooks",
        str(FIXTURES),
        "--out",
        str(tmp_path / "o"),
        "--matrix",
        str(matrix_file),
        "-p",
        "leak=false",
    )
    assert code == 2 and "['leak'] given both by -p/-r and by set 'seven'" in stderr


def test_a_sandbox_run_is_refused_on_a_cluster(tmp_path: Path) -> None:
    with pytest.raises(regress.RegressError, match="sandbox run stays on this machine"):
        regress.run(
            ["01"],
            notebooks_dir=FIXTURES,
            out_dir=tmp_path / "o",
            parameters={"profile": "sandbox"},
            scheduler="tcp://127.0.0.1:9",
            environ={},
        )


def test_an_unreachable_scheduler_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("kit.regress.cluster.CONNECT_TIMEOUT_S", 1.0)
    code, stdout, stderr = run_cli(
        "01", "--notebooks", str(FIXTURES), "--out", str(tmp_path / "o"), "--scheduler", "tcp://127.0.0.1:9"
    )
    assert (code, stdout) == (2, "")
    assert "cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'" in stderr


# --- with kernels: locally, then on a LocalCluster ----------------------------------------------


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as local:
        yield local.scheduler_address


def _check_matrix_run(code: int, stdout: str, out: Path) -> None:
    assert code == 1
    assert _cases(out / "junit.xml") == EXPECTED
    assert (
        "| 02_param.ipynb[seven] | **failed** |" in stdout
        and "| 03_guarded.ipynb[seven] | **leaked** |" in stdout
    )
    assert "## Parameter sets" in stdout and "- `seven`: `expected_total=7`, `leak=True`" in stdout
    for name in ("six", "seven"):
        assert sorted(p.name for p in (out / name).iterdir()) == ["02_param.ipynb", "03_guarded.ipynb"]
    # the leak scan applies to every set's executed notebook: found, redacted, never echoed
    executed = (out / "seven" / "03_guarded.ipynb").read_text(encoding="utf-8")
    assert "born on <persona-dob>" in executed
    for path in [*out.rglob("*.ipynb"), out / "junit.xml", out / "summary.md"]:
        assert DOB not in path.read_text(encoding="utf-8"), path


@pytest.mark.slow  # kit regress runs, on a Dask cluster too: ≈6 s
@pytest.mark.papermill
def test_a_matrix_runs_every_pair_locally(matrix_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "local"
    code, stdout, _ = run_cli(
        "02",
        "03",
        "--notebooks",
        str(FIXTURES),
        "--out",
        str(out),
        "--matrix",
        str(matrix_file),
        "--jobs",
        "2",
    )
    _check_matrix_run(code, stdout, out)


@pytest.mark.slow  # kit regress runs, on a Dask cluster too: ≈11 s
@pytest.mark.papermill
def test_a_matrix_runs_every_pair_on_a_local_cluster(cluster: str, matrix_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "cluster"
    code, stdout, _ = run_cli(
        "02", "03", "--notebooks", str(FIXTURES), "--out", str(out), "--matrix", str(matrix_file),
        "--scheduler", cluster,
    )  # fmt: skip
    _check_matrix_run(code, stdout, out)
    assert "2 jobs" in stdout  # the cluster's worker threads


@pytest.mark.papermill
def test_the_kernels_on_the_cluster_get_what_a_local_kernel_gets(cluster: str, tmp_path: Path) -> None:
    report = regress.run(["01"], notebooks_dir=FIXTURES, out_dir=tmp_path, scheduler=cluster)
    (result,) = report.results
    assert result.ok, result.message  # the fixture asserts KIT_REGRESS=1 in the kernel
    executed = (tmp_path / "01_pass.ipynb").read_text(encoding="utf-8")
    assert "token in environment: False" in executed


def test_the_longest_notebooks_of_the_last_run_start_first(tmp_path: Path) -> None:
    nbs = [Path(f"nb/{n}.ipynb") for n in ("00_a", "01_b", "02_c", "03_new")]
    sets = {"x": {"seed": 1}}
    junit = tmp_path / "junit.xml"
    assert [j.label for j in longest_first(jobs(nbs, tmp_path, {}, sets), junit)] == [
        "00_a.ipynb[x]",
        "01_b.ipynb[x]",
        "02_c.ipynb[x]",
        "03_new.ipynb[x]",
    ]  # fmt: skip  (no previous report: as given)
    junit.write_text(
        "<testsuites><testsuite>"
        '<testcase classname="notebooks.x" name="00_a[x]" time="1.0"/>'
        '<testcase classname="notebooks.x" name="01_b[x]" time="9.5"/>'
        '<testcase classname="notebooks.x" name="02_c[x]" time="3.0"/>'
        '<testcase classname="notebooks" name="03_new" time="50"/>'  # another layout: not this job
        "</testsuite></testsuites>",
        encoding="utf-8",
    )
    ordered = longest_first(jobs(nbs, tmp_path, {}, sets), junit)
    labels = [j.label for j in ordered]
    assert labels == ["03_new.ipynb[x]", "01_b.ipynb[x]", "02_c.ipynb[x]", "00_a.ipynb[x]"]
    plain = longest_first(jobs(nbs, tmp_path, {}), junit)  # the unknown ones first
    assert [j.label for j in plain] == ["00_a.ipynb", "01_b.ipynb", "02_c.ipynb", "03_new.ipynb"]
    junit.write_text("<not xml", encoding="utf-8")
    assert [j.label for j in longest_first(jobs(nbs, tmp_path, {}), junit)] == [
        j.label for j in jobs(nbs, tmp_path, {})
    ]
