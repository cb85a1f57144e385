"""What a dialect file may not say, as its author meets it: ``kit choices check FILE`` refuses it
naming the line, entry and key; ``kit serve --choices FILE`` refuses to start in one line; the
client refuses it when the file is read. Header names that frame, route or authenticate a
message, names that end in a newline, paths that reach the control plane, the documents or a
route table the simulator cannot build, and path templates with any brace but ``{name}``."""

from __future__ import annotations

from pathlib import Path

import pytest

import kit
from kit import _dialect_rules, register
from kit._choicetool import template
from kit._outgoing import OPERATIONS, Outgoing
from kit.cli import main
from kit.errors import ConfigError
from tests.support.launcher import serve_exits
from tests.test_dialect import uncommented

CHOICES = register.data_dir() / "choices"


def kit_choices_check(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, Path]:
    """``kit choices check`` on a file of ``text``: its exit status, its stderr, the file."""
    path = tmp_path / "dialect.toml"
    path.write_text(text, encoding="utf-8")
    capsys.readouterr()
    status = main(["choices", "check", str(path)])
    return status, capsys.readouterr().err, path


def assert_refused(status: int, err: str, where: str, *words: str) -> None:
    assert status == 1, err
    assert where in err and all(word in err for word in words), err


# --- header names: framing, hop-by-hop, routing, credentials; a name ending in a newline


@pytest.mark.parametrize(
    ("entry", "key", "name"),
    [
        ("A28", "assumptions", "Origin"),
        ("A28", "session_expires_at", "Host"),
        ("A28", "request_id", "HOST"),  # any case
        ("A20", "header", "Content-Length"),
        ("A27", "header", "content-type"),
        ("A20", "replayed_header", "Transfer-Encoding"),
        ("A18", "role_header", "Connection"),
        ("A20", "header", "Cookie"),
        ("A28", "request_id", "Set-Cookie"),
        ("A27", "header", "Forwarded"),
        ("A27", "header", "X-Forwarded-For"),
        ("A20", "header", "svc-control-token"),
        ("A20", "header", "Authorization"),  # only A02's own header may be Authorization
        ("A24", "header", "Upgrade"),
        ("A27", "header", "TE"),
        ("A28", "assumptions", "Trailer"),
        ("A28", "assumptions", "Keep-Alive"),
        ("A02", "header", "Proxy-Authorization"),
        ("A28", "request_id", "Access-Control-Allow-Origin"),
        ("A27", "header", "Sec-Fetch-Site"),
        ("A20", "header", "Expect"),
        ("A28", "request_id", "WWW-Authenticate"),
        ("A27", "header", "Via"),
    ],
)
def test_kit_choices_check_refuses_a_header_name_with_a_meaning_of_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], entry: str, key: str, name: str
) -> None:
    status, err, path = kit_choices_check(tmp_path, f'[{entry}]\n{key} = "{name}"\n', capsys)
    assert_refused(status, err, f"{path}:2: [{entry}] {key}: '{name}' is reserved")


def test_the_partner_tokens_header_may_be_authorization_in_any_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, err, _ = kit_choices_check(tmp_path, '[A02]\nheader = "authorization"\n', capsys)
    assert status == 0, err


def test_a_chosen_header_name_may_not_be_another_headers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the name A28 keeps for the request id, given to the partner token's header
    status, err, path = kit_choices_check(tmp_path, '[A02]\nheader = "svc-request-id"\n', capsys)
    assert_refused(status, err, f"{path}:2: [A02] header: 'svc-request-id' is also A28 request_id")


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('[A20]\nheader = "svc-req\\n"\n', "[A20] header: 'svc-req\\n' is not a header name"),
        ('[A02]\nscheme = "Token\\n"\n', "[A02] scheme: not an authentication scheme name"),
        ('[A13]\ntypes = ["debit\\n", "temporary"]\n', "[A13] types"),
        ('[A64.codes]\ncard-not-found = "not-found\\n"\n', "[A64] codes"),
        ('[A10]\nstarting_balance = "500.00\\n"\n', "[A10] starting_balance"),
    ],
)
def test_a_name_ending_in_a_newline_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, where: str
) -> None:
    status, err, path = kit_choices_check(tmp_path, text, capsys)
    assert_refused(status, err, f"{path}:", where)


def test_kit_serve_refuses_in_one_line_a_dialect_that_takes_host_and_origin(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[A28]\nassumptions = "Origin"\nsession_expires_at = "Host"\n')
    done = serve_exits("--no-control", "--choices", str(bad))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("refusing to start: dialect file refused: [A28]"), lines


# --- paths: braces, characters, the control plane, the documents, the route table


@pytest.mark.parametrize(
    ("key", "path", "why"),
    [
        ("webhook_keys", "/_sim/snapshot", "reaches the control plane"),
        ("webhook_keys", "/_sim", "reaches the control plane"),
        ("get_card", "/{card_id}/snapshot", "reaches the control plane"),  # GET /_sim/snapshot
        ("webhook_keys", "/openapi.json", "reaches /openapi.json"),
        ("webhook_keys", "/docs", "reaches /docs"),
        ("webhook_keys", "/redoc", "reaches /redoc"),
        ("get_transfer", "/docs/{transfer_id}", "reaches /docs/oauth2-redirect"),
        ("get_card", "/cards/{card_id}/x{card_id:>300000000}", "a parameter is {name} and nothing else"),
        ("get_card", "/cards/{card_id}/{card_id.__class__}", "a parameter is {name} and nothing else"),
        ("get_card", "/cards/{card_id!r}", "a parameter is {name} and nothing else"),
        ("get_card", "/cards/{card_id}/{card_id[0]}", "a parameter is {name} and nothing else"),
        ("get_card", "/cards/{{card_id}}", "a parameter is {name} and nothing else"),
        ("get_card", "/cards/{card_id}/}", "a parameter is {name} and nothing else"),
        ("get_card", "/cards/{Card_Id}", "a parameter is {name} and nothing else"),
        ("create_account", "/v2/my accounts", "is not a path"),
        ("create_account", "/v2//accounts", "is not a path"),
        ("create_account", "/v2/%5Fsim", "is not a path"),
        ("create_account", "/v2/accounts\\n", "is not a path"),
        ("create_account", "/v2/../_sim/snapshot", "a . or .. segment"),
    ],
)
def test_kit_choices_check_refuses_a_path_the_simulator_could_not_serve_as_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, path: str, why: str
) -> None:
    status, err, file = kit_choices_check(tmp_path, f'[A67.paths]\n{key} = "{path}"\n', capsys)
    assert_refused(status, err, f"{file}:2: [A67] paths.{key}:", why)


def test_kit_choices_check_builds_the_route_table_the_server_builds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a template of its own shape, but one that can match POST /p2p/transfers' path
    status, err, path = kit_choices_check(tmp_path, '[A67.paths]\nget_card = "/p2p/{card_id}"\n', capsys)
    assert_refused(
        status, err, f"{path}:2: [A67] paths.get_card: this simulator cannot route it:", "create_transfer"
    )


@pytest.mark.parametrize(
    "text",
    [
        '[A67.paths]\nget_card = "/{card_id}"\n',
        '[A67.paths]\nget_card = "/p2p/{card_id}"\n',
    ],
)
def test_kit_serve_refuses_in_one_line_what_kit_choices_check_refuses(tmp_path: Path, text: str) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    done = serve_exits("--no-control", "--choices", str(bad))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("refusing to start: dialect file refused: ["), lines


def test_the_embedded_simulator_refuses_what_its_route_table_cannot_take(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[A67.paths]\nget_card = "/p2p/{card_id}"\n')
    with pytest.raises(ConfigError, match=r"\[A67\] paths\.get_card: this simulator cannot route it"):
        kit.connect("sim", choices=str(bad))


def test_the_client_refuses_a_template_with_a_format_spec_when_the_file_is_read(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[A67.paths]\nget_card = "/cards/{card_id}/x{card_id:>300000000}"\n')
    options = {"base_url": "http://127.0.0.1:9", "client_id": "a", "client_secret": "b"}
    with pytest.raises(ConfigError, match=r"\[A67\] paths\.get_card"):
        kit.connect("sandbox", choices=str(bad), **options)


@pytest.mark.parametrize("template", ["/cards/{card_id}/x{card_id:>3000}", "/cards/{card_id.__class__}"])
def test_the_client_fills_a_template_by_exact_names_only(template: str) -> None:
    call = Outgoing(OPERATIONS["get_card"], {"card_id": "card_1"})
    # whatever reaches it, only {card_id} is replaced: no padding, no attribute read
    assert call.path_at(template) == template.replace("{card_id}", "card_1")
    assert call.path_at("/cards/{card_id}/x/{card_id}") == "/cards/card_1/x/card_1"


# --- what stays good


def test_the_shipped_dialect_files_and_the_template_still_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for path in sorted(CHOICES.glob("*.toml")):
        assert main(["choices", "check", str(path)]) == 0, capsys.readouterr().err
    status, err, _ = kit_choices_check(tmp_path, uncommented(template()), capsys)
    assert status == 0, err


def test_the_reserved_paths_are_the_simulators_own() -> None:
    from kit.sim.app import DOCUMENTS
    from kit.sim.routes.control import router

    assert set(_dialect_rules.DOCUMENTS) == DOCUMENTS
    assert router.prefix == _dialect_rules.CONTROL_PREFIX
    assert _dialect_rules.problems({}) == []  # the register's own paths and names keep every rule
