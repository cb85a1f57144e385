"""A simulator's OpenAPI document made a stranger's, for ``kit choices infer``'s tests: a
dialect of its own (:data:`OWN`), the served document, stripped of every name a stranger spells
its own way, and the same in OpenAPI 3.0's words."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from kit import _choices
from kit.sim import create_app
from kit.sim.settings import Settings

#: A third dialect: other paths than camel's, camel case with other renames, other headers.
OWN = """
description = "infer test: other paths, camelCase with other renames, other headers"
[A18]
role_header = "X-P2P-Role"
[A20]
header = "Request-Idempotency"
[A28]
session_expires_at = "X-Session-Until"
[A67.paths]
create_account = "/api/ledger-accounts"
create_person = "/api/ledger-accounts/{account_id}/holders"
kyc_questions = "/api/holders/{person_id}/checks/questions"
kyc_answers = "/api/holders/{person_id}/checks/responses"
create_card = "/api/ledger-accounts/{account_id}/plastic"
get_card = "/api/plastic/{card_id}"
end_session = "/api/session"
create_transfer = "/api/payments"
get_transfer = "/api/payments/{transfer_id}"
subscribe_webhooks = "/api/hooks"
webhook_keys = "/api/hooks/keys"
list_document_requests = "/api/holders/{person_id}/paperwork"
submit_document = "/api/paperwork/{document_request_id}/upload"
[A68]
field_case = "camel"
renames = { encrypted_pii = "sealedPii", session_token = "sessionKey" }
"""
_DROP = {"operationId", "summary", "description", "title", "tags"}


def served_document(path: Path) -> dict[str, Any]:
    """The ``/openapi.json`` the simulator serves under the dialect file at ``path``."""
    from starlette.testclient import TestClient

    app = create_app(Settings(choices=_choices.load(path)))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        answer = client.get("/openapi.json")
    assert answer.status_code == 200
    return answer.json()


def _strip(node: Any, names: dict[str, str]) -> Any:
    if isinstance(node, list):
        return [_strip(v, names) for v in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key.startswith("x-") or (key in _DROP and not isinstance(value, dict)):
            continue
        if key == "$ref" and isinstance(value, str):
            head, _, name = value.rpartition("/")
            out[key] = f"{head}/{names.get(name, name)}"
        else:
            out[key] = _strip(value, names)
    return out


def stranger(doc: dict[str, Any], seed: int = 3) -> dict[str, Any]:
    """``doc`` as a stranger's: no ids, summaries, descriptions, titles, tags, extensions,
    schema names of its own, no ``/_sim`` paths, its paths shuffled."""
    schemas = doc["components"]["schemas"]
    names = {
        name: f"S{i:02d}" for i, name in enumerate(random.Random(seed).sample(sorted(schemas), len(schemas)))
    }
    out = _strip(doc, names)
    out["components"]["schemas"] = {names[n]: s for n, s in out["components"]["schemas"].items()}
    paths = [(p, v) for p, v in out["paths"].items() if not p.startswith("/_sim")]
    random.Random(seed).shuffle(paths)
    out["paths"] = dict(paths)
    out.pop("tags", None)
    return out


def as_30(node: Any) -> Any:
    """A 3.1 document's schemas in 3.0's words: ``anyOf [X, null]`` → ``X`` with ``nullable``."""
    if isinstance(node, list):
        return [as_30(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: as_30(v) for k, v in node.items()}
    branches = out.get("anyOf")
    if isinstance(branches, list) and {"type": "null"} in branches:
        rest = [b for b in branches if b != {"type": "null"}]
        del out["anyOf"]
        out.update(rest[0] if len(rest) == 1 else {"anyOf": rest})
        out["nullable"] = True
    if out.get("openapi", "").startswith("3.1"):
        out["openapi"] = "3.0.3"
    return out
