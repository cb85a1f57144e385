"""One copy of each thing: a helper the kit needs in several rooms is written once, in one
module, and the others import it (the house's issue 60, item 5).

The kit's modules are read with :mod:`ast`, never imported for this, so that a second copy is
found whatever it is called from."""

from __future__ import annotations

import ast
import functools
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

KIT = Path(__file__).resolve().parents[1] / "kit"


@functools.cache
def _modules() -> tuple[tuple[str, ast.Module], ...]:
    """Every module of ``kit``, parsed once for the whole module of tests (none changes a tree)."""
    return tuple(
        (str(path.relative_to(KIT.parent)), ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted(KIT.rglob("*.py"))
    )


@functools.cache
def _nodes() -> tuple[tuple[str, ast.AST], ...]:
    """Every node of every module of ``kit``, with its module's path."""
    return tuple((where, node) for where, tree in _modules() for node in ast.walk(tree))


def _method_calls(method: str) -> Iterator[tuple[str, ast.Call]]:
    """Every call of a method named ``method`` (``x.method(…)``) in ``kit``, with its module."""
    for where, node in _nodes():
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method:
            yield where, node


def _definitions() -> Counter[str]:
    """How many times each function or class name is defined at any depth in kit/."""
    found: Counter[str] = Counter()
    for _, node in _nodes():
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found[node.name] += 1
    return found


def _constants() -> Counter[str]:
    """How many times each string constant stands in kit/'s code (docstrings included)."""
    found: Counter[str] = Counter()
    for _, node in _nodes():
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found[node.value] += 1
    return found


# --- the redaction vocabulary ---------------------------------------------------------------


@pytest.mark.parametrize(
    "names",
    [
        ("fingerprint", "_hash"),  # the salted hash of a secret
        ("jose_kind", "_jose_kind"),  # what a compact JOSE string is
        ("marker",),  # what stands in place of a hidden value
    ],
    ids=lambda names: names[0],
)
def test_each_redaction_helper_is_defined_once(names: tuple[str, ...]) -> None:
    defined = _definitions()
    assert sum(defined[n] for n in names) == 1, {n: defined[n] for n in names}


def test_the_word_splitter_of_names_is_written_once() -> None:
    """PII's names and secrets' are cut by one pattern (``kit._pii.words``)."""
    assert _constants()[r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+"] == 1


def test_a_salted_sha256_is_computed_in_one_place() -> None:
    salted = [
        where
        for where, node in _method_calls("sha256")
        if any(isinstance(a, ast.BinOp) and "salt" in ast.unparse(a) for a in node.args)
    ]
    assert salted == ["kit/_redaction.py"]


def test_the_recorder_and_the_leak_scan_share_one_vocabulary() -> None:
    from kit import _pii, _redaction
    from kit.regress import leaks, names, scanner

    assert _redaction.words is _pii.words
    assert scanner.jose_kind is _redaction.jose_kind
    assert scanner.fingerprint is _redaction.fingerprint
    # one table of secret names: a field's kind in a leak report is the recorder's marker's
    for field, kind in names._FIELD_KIND.items():
        assert kind == _redaction.secret_kind(field), field
        assert kind in scanner.HINTS, kind
    assert names._FIELD_KIND["access_token"] == "partner-token"
    # one marker style: the recorder's, in a report and an executed notebook alike
    token = "Zk3vQ9xLw2Rb7Tn1Yp5Hc8Md"
    recorded = _redaction.Redactor().json({"access_token": token})
    reported = leaks.redact(f'{{"access_token": "{token}"}}', environ={})
    assert recorded == {"access_token": "<partner-token>"}
    assert reported == '{"access_token": "<partner-token>"}'
    header = leaks.redact(f"Authorization: Bearer {token}", environ={})
    assert header == "Authorization: Bearer <partner-token>"


# --- the JOSE glue --------------------------------------------------------------------------


def test_a_base64url_segment_is_decoded_in_one_place() -> None:
    defined = _definitions()
    assert defined["b64decode"] + defined["_b64decode"] == 1
    padded = [where for where, node in _method_calls("urlsafe_b64decode") if "'=' *" in ast.unparse(node)]
    assert padded == ["kit/_jose.py"]


def test_no_module_filters_a_warning_of_another_library() -> None:
    """A warnings filter is the whole process's: the kit leaves joserfc's EdDSA warning out of
    its own registries instead (``kit._jose.signing_registry``)."""
    filtering = [
        where
        for where, node in _method_calls("filterwarnings")
        if any(isinstance(a, ast.Constant) and "EdDSA" in str(a.value) for a in node.args)
    ]
    assert filtering == []


def test_eddsa_signs_and_verifies_quietly_and_leaves_the_process_filters_alone() -> None:
    import warnings

    from joserfc import jws
    from joserfc.errors import SecurityWarning

    from kit.crypto import WebhookKeys
    from kit.sim.crypto import SimKeys

    keys = SimKeys.from_seed(7)
    before = list(warnings.filters)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        signature = keys.sign_detached(b"{}", iat=1, event_id="evt_1", algorithm="EdDSA")
        verifier = WebhookKeys(keys.signing_jwks("EdDSA"), algorithm="EdDSA")
        assert verifier.verify_detached(signature, b"{}")["alg"] == "EdDSA"
    assert [w for w in seen if issubclass(w.category, SecurityWarning)] == []
    assert warnings.filters == before
    with pytest.warns(SecurityWarning, match="EdDSA"):  # joserfc's own registry still says so
        jws.JWSRegistry(algorithms=["EdDSA"]).get_alg("EdDSA")


def test_the_simulators_keys_and_the_clients_server_keys_are_two_names() -> None:
    import kit.crypto
    import kit.sim.crypto

    assert "ServerKeys" not in vars(kit.sim.crypto) and "SimKeys" in vars(kit.sim.crypto)
    assert "ServerKeys" in kit.crypto.__all__


# --- one client factory ---------------------------------------------------------------------


def test_every_http_client_is_built_by_kit_http() -> None:
    """``kit/_http.py`` builds every ``httpx.Client`` and ``httpx.AsyncClient`` of the kit (the
    client's, the regression checks', ``kit proxy``'s and the simulator's deliveries), so
    ``transport=`` and the TLS settings reach them all."""
    built = [
        f"{where}:{node.lineno}"
        for where, node in _nodes()
        if isinstance(node, ast.Call)
        and ast.unparse(node.func) in ("httpx.Client", "httpx.AsyncClient")
        and where != "kit/_http.py"
    ]
    assert built == []
    imported = [
        where
        for where, node in _nodes()
        if isinstance(node, ast.ImportFrom)
        and node.module == "httpx"
        and {a.name for a in node.names} & {"Client", "AsyncClient"}
    ]
    assert imported == []


def test_the_simulators_deliveries_leave_the_environment_alone() -> None:
    from kit._http import async_http_client, shared_ssl_context

    client = async_http_client(timeout=5.0, trust_env=False)
    assert client.trust_env is False and client.follow_redirects is False
    assert async_http_client().trust_env is True
    assert shared_ssl_context() is shared_ssl_context()


# --- TOML writing ---------------------------------------------------------------------------


def test_toml_text_is_escaped_in_one_place() -> None:
    """The files the kit writes as TOML carry comments, so they are written line by line; their
    keys and values all through ``kit._tomltext``."""
    defined = _definitions()
    assert defined["_toml_string"] == 0
    importing = sorted(
        where
        for where, node in _nodes()
        if isinstance(node, ast.ImportFrom) and node.module == "kit._tomltext"
    )
    assert "kit/_fixtures.py" in importing


# --- the simulator's JSON codec -------------------------------------------------------------


@pytest.mark.parametrize("module", ["kit/sim/dialect.py", "kit/sim/delivery.py", "kit/sim/asgi.py"])
def test_the_wire_json_of_the_simulator_is_read_and_written_by_asgi(module: str) -> None:
    """``kit.sim.asgi``'s codec reads every JSON body of the wire and writes every answer; the
    dialect's translation and the webhook deliveries go through it too."""
    tree = dict(_modules())[module]
    own = [
        f"{module}:{node.lineno}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and ast.unparse(node.func) in ("json.loads", "json.dumps", "json.load", "json.dump")
    ]
    assert own == []


def test_the_codec_writes_a_delivery_as_before() -> None:
    import json

    from kit.sim.asgi import decode_json, encode_json

    event = {"id": "evt_1", "data": {"name": "José", "amount": 1.5, "nan": float("nan")}}
    assert encode_json(event, ascii_only=True) == json.dumps(event, separators=(",", ":")).encode()
    assert encode_json(event) == json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode()
    body = b'{"a": NaN, "b": "\\u00e9"}'
    assert repr(decode_json(body, constants=True)) == repr(json.loads(body))


# --- pluralising ----------------------------------------------------------------------------


def _pluralises(node: ast.AST) -> bool:
    """``'s' * (n != 1)``, ``'s' if … else ''``, ``one + 's'``, ``'y' if n == 1 else 'ies'`` and
    ``"line" if n == 1 else "lines"``: a noun's ending chosen by hand."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult | ast.Add):
        return any(isinstance(side, ast.Constant) and side.value == "s" for side in (node.left, node.right))
    if isinstance(node, ast.IfExp) and isinstance(node.test, ast.Compare):
        ends = [b.value for b in (node.body, node.orelse) if isinstance(b, ast.Constant)]
        counts_one = any(isinstance(c, ast.Constant) and c.value == 1 for c in node.test.comparators)
        strings = [e for e in ends if isinstance(e, str)]
        return (
            counts_one
            and len(strings) == 2
            and ({"s", ""} == set(strings) or {"y", "ies"} == set(strings) or strings[1] == strings[0] + "s")
        )
    return False


def test_a_noun_is_pluralised_by_one_helper() -> None:
    by_hand = [
        f"{where}:{node.lineno}"
        for where, node in _nodes()
        if where != "kit/_plural.py" and _pluralises(node)
    ]
    assert by_hand == []


def test_the_helper_says_what_the_messages_said() -> None:
    from kit._plural import counted, plural

    assert [counted(n, "check") for n in (0, 1, 2)] == ["0 checks", "1 check", "2 checks"]
    assert counted(1, "register entry", "register entries") == "1 register entry"
    assert counted(3, "register entry", "register entries") == "3 register entries"
    assert plural(2, "in a header", "in headers") == "in headers"
