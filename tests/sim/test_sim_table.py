"""The route table (``kit.sim.table``): built from the operations per personality, checked once
(collisions, parameters, the one precedence rule), matched whatever the order of the table, a
route module imported on the first request for one of its operations."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import Response

from kit.sim import Settings, create_app
from kit.sim.personality import Personality
from kit.sim.routes import BY_KEY, MODULES, OPERATIONS, Operation, partner_module
from kit.sim.table import Route, Routes, RouteTable, RouteTableError, build

THIRTEEN = [
    "create_account",
    "create_person",
    "kyc_questions",
    "kyc_answers",
    "create_card",
    "get_card",
    "end_session",
    "create_transfer",
    "get_transfer",
    "subscribe_webhooks",
    "webhook_keys",
    "list_document_requests",
    "submit_document",
]


def _scope(method: str, path: str, root_path: str = "") -> dict[str, Any]:
    return {"type": "http", "method": method, "path": root_path + path, "root_path": root_path}


def _served(table: RouteTable, method: str, path: str) -> tuple[str, dict[str, Any]] | None:
    found = table.match(_scope(method, path))
    return None if found is None else (found[0].key, found[1])


def test_every_module_declares_exactly_its_operations() -> None:
    for name in MODULES:
        declared = set(partner_module(name).router.declared)
        assert declared == {op.key for op in OPERATIONS if op.module == name}, name


def test_the_operations_the_seed_does_not_show_have_the_dialects_keys() -> None:
    assert set(THIRTEEN) <= set(BY_KEY)
    assert BY_KEY["create_account"].path == "/accounts" and BY_KEY["end_session"].methods == ("DELETE",)


def test_the_default_table_matches_each_operation_at_its_path() -> None:
    table = build()
    assert _served(table, "GET", "/cards/card_9") == ("get_card", {"card_id": "card_9"})
    assert _served(table, "POST", "/sessions") == ("create_session", {})
    assert _served(table, "POST", "/api/sessions") is None
    assert table.match(_scope("POST", "/sessions", root_path="/api"))[0].key == "create_session"  # type: ignore[index]
    assert _served(table, "PUT", "/sessions") is None  # the path with another method: FastAPI's 405
    assert _served(table, "GET", "/nowhere") is None


def test_a_rest_operation_takes_only_the_methods_the_others_do_not_whatever_the_order() -> None:
    """The one precedence rule: on one template, the operation naming a method wins over the one
    taking the rest, even when the table lists the rest first."""
    for table in (build(), RouteTable(list(reversed(build().routes)))):
        assert _served(table, "POST", "/accounts/acc_1/savings/close")[0] == "savings_close"  # type: ignore[index]
        assert _served(table, "DELETE", "/accounts/acc_1/savings/close")[0] == "savings_close_other"  # type: ignore[index]
        assert _served(table, "POST", "/authorization/server_api/access_tokens")[0] == "legacy_access_token"  # type: ignore[index]
        assert _served(table, "PUT", "/authorization/server_api/access_tokens")[0] == "legacy_other_methods"  # type: ignore[index]


def test_a_personality_may_serve_an_operation_at_another_path() -> None:
    table = build({"create_account": "/v2/accounts", "get_card": "/v2/cards/{card_id}"})
    assert _served(table, "POST", "/v2/accounts") == ("create_account", {})
    assert _served(table, "POST", "/accounts") is None
    assert _served(table, "GET", "/v2/cards/c1") == ("get_card", {"card_id": "c1"})
    assert table["get_card"].path == "/v2/cards/{card_id}"


@pytest.mark.parametrize(
    ("paths", "named"),
    [
        ({"open_account": "/x"}, "open_account"),  # no such operation
        ({"get_card": "/cards/{id}"}, "get_card"),  # another parameter
        ({"get_card": "/cards"}, "get_card"),  # its parameter missing
        ({"get_card": "cards/{card_id}"}, "get_card"),  # not a path
        ({"create_account": "/sessions"}, "create_session and create_account are both POST /sessions"),
        ({"get_transfer": "/cards/{transfer_id}"}, "get_card and get_transfer are both GET"),  # names aside
        ({"create_account": "/cards/x"}, "may match the same path"),  # a literal against {card_id}
    ],
)
def test_a_table_that_cannot_be_served_is_refused_when_built(paths: dict[str, str], named: str) -> None:
    with pytest.raises(RouteTableError, match=named):
        build(paths)


def test_two_rest_operations_on_one_template_are_refused() -> None:
    rest = Operation("x", "removed", ("GET",), "/accounts/{account_id}/referrals", rest=True)
    routes = [Route(op, op.path) for op in OPERATIONS] + [Route(rest, rest.path)]
    from kit.sim.table import _check

    with pytest.raises(RouteTableError, match="both take the rest"):
        _check(routes)


def test_the_app_builds_its_table_from_its_personalitys_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Personality, "paths", lambda self: {"create_account": "/v2/accounts"})
    app = create_app(Settings(seed=7))
    assert app.table["create_account"].path == "/v2/accounts"
    monkeypatch.setattr(Personality, "paths", lambda self: {"create_account": "/sessions"})
    with pytest.raises(RouteTableError, match="create_account"):
        create_app(Settings(seed=7))


def test_a_module_that_does_not_declare_its_operation_is_named() -> None:
    stray = Operation("get_card", "events", ("GET",), "/cards/{card_id}")  # events declares no get_card
    with pytest.raises(RouteTableError, match="events does not declare 'get_card'"):
        Route(stray, stray.path).declared()


def test_an_operation_is_declared_once_and_only_if_the_table_has_it() -> None:
    router = Routes()
    with pytest.raises(RouteTableError, match="no operation"):
        router.operation("open_account")

    @router.operation("get_card")
    async def get_card(request: Request, card_id: str) -> Response:
        return Response(card_id)

    with pytest.raises(RouteTableError, match="declared twice"):
        router.operation("get_card")


async def _plain(request: Request, card_id: str) -> Response:
    return Response()


async def _with_query(request: Request, card_id: str, q: str) -> Response:
    return Response()


async def _int_path(request: Request, card_id: int) -> Response:
    return Response()


async def _returns_dict(request: Request, card_id: str) -> dict[str, str]:
    return {}


def _sync(request: Request, card_id: str) -> Response:
    return Response()


async def _default(request: Request, card_id: str = "c") -> Response:
    return Response()


async def _no_request(card_id: str) -> Response:
    return Response()


@pytest.mark.parametrize(
    "endpoint",
    [_with_query, _int_path, _returns_dict, _sync, _default, _no_request],
    ids=lambda f: f.__name__,
)
def test_an_endpoint_of_another_shape_is_refused(endpoint: Any) -> None:
    with pytest.raises(TypeError, match="cannot be served"):
        Routes().operation("get_card")(endpoint)


def test_an_endpoint_takes_the_request_and_its_str_path_parameters() -> None:
    assert Routes().operation("get_card")(_plain) is _plain


def test_the_table_is_built_per_app_not_at_import() -> None:
    code = (
        "import sys, kit.sim.routes, kit.sim.table; "
        "assert not [m for m in sys.modules if m.startswith('kit.sim.routes.')], 'a route module'; "
        "from kit.sim import Settings, create_app; "
        "a, b = create_app(Settings(seed=7)), create_app(Settings(seed=7)); "
        "assert a.table is not b.table and a.table.routes[0] is not b.table.routes[0]; "
        "assert not [m for m in sys.modules if m.startswith('kit.sim.routes.')], 'a route module'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
