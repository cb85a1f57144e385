"""The client speaks a dialect through one adapter, :class:`kit._spoken.Spelling` (the house's
issue 60, item 2, the client's side).

The kit's modules are read with :mod:`ast`, never imported for the scans: a module touches the
dialect when it reads or calls an attribute of a name or attribute called ``dialect`` or
``_dialect`` (``dialect.chosen(…)``, ``self.config.dialect.to_wire(…)``). Passing a dialect
along (``Recorder(…, dialect=config.dialect)``) is not touching it."""

from __future__ import annotations

import ast
from pathlib import Path

import httpx

from kit import _auth, _choices, _spoken
from kit._dialect import DEFAULT, Dialect
from kit._sensitive import Sensitive

KIT = Path(__file__).resolve().parents[1] / "kit"

#: The client modules that may touch the dialect, and why each one does.
MAY_TOUCH = {
    # the dialect itself, and the base room's modules that make it or name its headers
    "kit/_dialect.py": "the dialect: its tables and how they translate",
    "kit/_headers.py": "the one home of header names: HeaderNames.of(dialect)",
    # the client's one adapter
    "kit/_spoken.py": "Spelling: the client's adapter, one layer of the transport",
    # readers, with no table of their own
    "kit/_redaction.py": "the recorder's redactor: a dialect's names of secrets (A68, A02, A20)",
    "kit/webhooks.py": "verify: A24's algorithm and skew, an event's names (A68)",
    "kit/_resources/webhooks.py": "api.webhooks: the keys of A24's algorithm",
}


def _client_modules() -> list[Path]:
    return sorted([*KIT.glob("*.py"), *(KIT / "_resources").glob("*.py")])


def _touches(node: ast.AST) -> bool:
    """Whether ``node`` reads or calls an attribute of a dialect (see the module docstring)."""
    if not isinstance(node, ast.Attribute):
        return False
    held = node.value
    if isinstance(held, ast.Name):
        return held.id in ("dialect", "_dialect")
    return isinstance(held, ast.Attribute) and held.attr in ("dialect", "_dialect")


def _touching() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in _client_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        hits = [f"{n.lineno}: .{n.attr}" for n in ast.walk(tree) if _touches(n)]  # type: ignore[attr-defined]
        if hits:
            found[str(path.relative_to(KIT.parent))] = hits
    return found


def test_only_the_adapter_and_the_readers_touch_the_dialect() -> None:
    touching = _touching()
    beyond = {where: hits for where, hits in touching.items() if where not in MAY_TOUCH}
    assert not beyond, f"ask the client's Spelling (kit/_spoken.py), not the dialect: {beyond}"
    assert set(touching) == set(MAY_TOUCH), "a module left the list: take it off MAY_TOUCH"


def _methods_naming(cls: str, module: str, name: str) -> set[str]:
    """The methods of class ``cls`` in ``module`` that read an attribute called ``name``."""
    tree = ast.parse((KIT / module).read_text(encoding="utf-8"))
    (found,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls]
    return {
        method.name
        for method in found.body
        if isinstance(method, ast.FunctionDef)
        and any(isinstance(n, ast.Attribute) and n.attr == name for n in ast.walk(method))
    }


def test_the_transport_spells_in_one_layer() -> None:
    """The spelling layer (the request out, the answer back) is ``_spelled`` and the request it
    builds; ``__init__`` makes the spelling and the contract check reads the answer through it."""
    assert _methods_naming("Transport", "_transport.py", "spelling") == {
        "__init__",
        "_spelled",
        "_spelled_request",
        "_check_contract",
    }


def _camel() -> Dialect:
    return Dialect.of(
        _choices.parse(
            {
                "A68": {"field_case": "camel"},
                "A01": {"client_auth": "post"},
                "A02": {"header": "X-Partner-Token", "scheme": "Token"},
                "A64": {"codes": {"invalid-partner-token": "bad-token"}},
            }
        )
    )


def test_the_adapter_seals_and_opens_a_payload_in_the_wire_s_names() -> None:
    plain = _spoken.PLAIN
    spelling = _spoken.Spelling.of(_camel())
    sealed = spelling.seal({"session_token": "t", "answers": [{"question_id": "q1"}]})
    assert sealed == {"sessionToken": "t", "answers": [{"questionId": "q1"}]}
    assert spelling.open(sealed) == {"session_token": "t", "answers": [{"question_id": "q1"}]}
    payload = {"session_token": "t"}
    assert plain.seal(payload) is payload and plain.open(payload) is payload
    assert _spoken.Spelling.of(DEFAULT) is plain


def test_the_adapter_owns_what_the_token_and_the_bearer_ask() -> None:
    """The token request's client authentication (A01), the bearer's header and scheme (A02),
    whether an answer refuses the token (A64): the auth flow asks the spelling it is given."""
    plain = _spoken.PLAIN
    spelling = _spoken.Spelling.of(_camel())
    assert spelling.client_auth == "post" and plain.client_auth == "either"
    assert spelling.bearer == ("X-Partner-Token", "Token")
    assert plain.bearer == ("Authorization", "Bearer")
    headers, form = _auth.credentials("id", Sensitive("secret"), spelling)
    assert "Authorization" not in headers and form["client_secret"] == "secret"
    refused = httpx.Response(401, json={"code": "bad-token"})
    assert _auth.token_refused(refused, spelling) and not _auth.token_refused(refused, plain)
    auth = _auth.PartnerAuth(lambda: None, client_id="id", spelling=spelling)
    auth.preset(Sensitive("tok"))
    request = httpx.Request("GET", "http://sandbox.test/cards")
    auth.authorize(request)
    assert request.headers["x-partner-token"] == "Token tok"


def test_a_recording_client_s_first_call_is_one_call_at_the_wire_s_path(tmp_path: Path) -> None:
    """Inside the spelling layer the wire log sees the wire: a moved operation's call is kept at
    its path there, with the kit's path beside it, from the first call of a recording client."""
    from tests.client.test_mock_transport import _client

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/oauth/accesstoken":
            return httpx.Response(200, json={"access_token": "t", "token_type": "Bearer", "expires_in": 60})
        return httpx.Response(200, json={"keys": []})

    choices = tmp_path / "dialect.toml"
    choices.write_text('[A67.paths]\nwebhook_keys = "/v2/webhook-keys"\n', encoding="utf-8")
    with _client(handler, choices=choices, record=True) as api:
        api.webhooks.jwks()
        assert api.wire_log is not None
        first, token = api.wire_log.exchanges()  # the token fetched inside the first call
    assert (first.kind, first.method, first.path) == ("call", "GET", "/v2/webhook-keys")
    assert first.kit_path == "/webhooks/jwks" and len(first.attempts) == 1
    assert (token.method, token.path, token.kit_path) == ("POST", "/oauth/accesstoken", None)


def test_an_answer_is_checked_by_the_contract_of_the_version_it_names_in_the_wire_s_header() -> None:
    """Under a dialect that renames the version header (A27), the answer's version is read from
    the dialect's header: a 1.1.0 answer is checked by 1.1.0's contract, with no version drift."""
    camel = Dialect.of(_choices.load(KIT.parent / "data" / "choices" / "camel.toml"))
    spelling = _spoken.Spelling.of(camel)
    header = spelling.names.api_version
    assert header.lower() != _spoken.Spelling.of(DEFAULT).names.api_version.lower()  # renamed
    raw = [(header.encode(), b"1.1.0"), (b"content-type", b"application/json")]
    rows, contract = spelling.checked("GET", "/webhooks/jwks", 200, raw, {"keys": []}, has_content=True)
    assert contract.version == "1.1.0"
    assert [row for row in rows if row.kind == "version"] == []
