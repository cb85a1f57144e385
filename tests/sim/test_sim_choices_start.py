"""Starting a simulator with a choice overlay: ``kit serve --choices FILE``, ``KIT_SIM_CHOICES``
and ``kit.connect("sim", choices=FILE)``. A refused overlay starts nothing and names entry and key;
another overlay than the running embedded simulator's starts a second embedded simulator."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

import kit
from kit import _env as env
from kit import register
from kit.errors import ConfigError
from tests.support.launcher import serve_exits, serve_process

OTHER = register.data_dir() / "choices" / "other.toml"
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("[A99]\nx = 1\n", "[A99]"),
        ('[A14]\nmonths = "two"\n', "[A14] months"),
        ("[A04]\nrsa_bits = 3072\n", "[A04] rsa_bits"),
    ],
)
def test_kit_serve_refuses_a_bad_overlay_and_starts_nothing(tmp_path: Path, text: str, named: str) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    fixtures = tmp_path / "fixtures.toml"
    done = serve_exits("--no-control", "--choices", str(bad), "--sandbox-fixtures", str(fixtures))
    assert done.returncode == 2, done.stderr
    assert "refusing to start: dialect file refused:" in done.stderr and named in done.stderr
    assert done.stdout == "" and not fixtures.exists()  # nothing started, nothing written


def test_kit_serve_reads_kit_sim_choices(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[A15]\nreasons = 3\n")
    done = serve_exits(env={env.SIM_CHOICES: str(bad)})
    assert done.returncode == 2 and "[A15] reasons" in done.stderr


def test_kit_serve_with_the_other_choices_answers_with_them() -> None:
    with (
        serve_process("--no-control", "--choices", str(OTHER)) as served,
        httpx.Client(base_url=served.base_url, timeout=10) as http,
    ):
        token = http.post(
            "/oauth/accesstoken",
            data={"grant_type": "client_credentials"},
            auth=next(iter(env.SIM_PARTNER_CLIENTS.items())),
        )
        assert token.json()["expires_in"] == 3600
        assert UUID.match(token.headers["svc-request-id"]) and "svc-assumptions" not in token.headers
        document = http.get("/openapi.json").json()
        assert document["info"]["x-choices"]["A15"]["reasons"] == ["lost", "stolen", "customer_request"]


def test_connect_with_choices_starts_a_second_embedded_simulator() -> None:
    with kit.connect("sim") as plain, kit.connect("sim", choices=str(OTHER)) as other:
        again = kit.connect("sim", choices=str(OTHER))
        assert other.config.base_url != plain.config.base_url
        assert again.config.base_url == other.config.base_url  # the same overlay: the same simulator
        assert other.config.profile.choices is not None and plain.config.profile.choices is None
        assert kit.connect("sim").config.base_url == plain.config.base_url
        answer = httpx.get(f"{other.config.base_url}/webhooks/jwks")
        assert UUID.match(answer.headers["svc-request-id"]) and "svc-assumptions" not in answer.headers
        again.close()


def test_connect_reads_kit_sim_choices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(env.SIM_CHOICES, str(OTHER))
    with kit.connect("sim") as api:
        assert api.config.profile.choices is not None
        assert "A60" in api.config.profile.choices


def test_connect_refuses_a_bad_overlay_naming_entry_and_key(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[A60]\nid_format = "ulid"\n')
    with pytest.raises(ConfigError, match=r"\[A60\] id_format"):
        kit.connect("sim", choices=str(bad))
    bad.write_text("[A14]\nyears = 2\n")
    with pytest.raises(ConfigError, match=r"\[A14\] years"):
        kit.connect("sim", choices=str(bad))


def test_choices_are_spoken_on_every_profile_and_served_by_a_started_simulator_only(tmp_path: Path) -> None:
    camel = OTHER.parent / "camel.toml"
    options = {"base_url": "http://127.0.0.1:9", "client_id": "a", "client_secret": "b"}
    with kit.connect("sandbox", choices=str(camel), **options) as sandbox:
        assert sandbox.config.dialect.field_case == "camel"  # the client speaks it
    with kit.connect("sim", base_url="http://127.0.0.1:9", choices=str(camel)) as at_url:
        assert at_url.config.dialect.field_case == "camel"
        assert at_url.config.profile.choices is None  # a kit serve at base_url= serves its own --choices
    kebab = tmp_path / "kebab.toml"
    kebab.write_text('[A68]\nfield_case = "kebab"\n')
    with pytest.raises(ConfigError, match=r"\[A68\] field_case"):
        kit.connect("sandbox", choices=str(kebab), **options)
