"""One value, one place: the header names the simulator writes and reads come from
``kit.sim.headers`` (the register's values), and the document follows the route table's paths
rather than paths written again (a personality may re-path an operation)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kit.sim import Settings, create_app
from kit.sim.personality import Personality

SIM = Path(__file__).resolve().parents[2] / "kit" / "sim"
#: The register entries that name headers, and their keys that are header names.
HEADER_KEYS = {
    "A02": ("header", "scheme"),
    "A18": ("role_header",),
    "A20": ("header",),
    "A24": ("header",),
    "A27": ("header",),
    "A28": ("session_id", "session_expires_at", "request_id", "assumptions"),
}


def test_header_names_are_read_from_the_register_in_one_module() -> None:
    found = []
    for path in SIM.rglob("*.py"):
        if path.name == "headers.py":
            continue
        text = path.read_text(encoding="utf-8")
        for entry, keys in HEADER_KEYS.items():
            names = re.findall(rf'(\w+) = (?:register\.)?value\("{entry}"\)\n', text)
            for key in keys:
                read = [rf'value\("{entry}"\)\["{key}"\]', *(rf'\b{n}\["{key}"\]' for n in names)]
                if any(re.search(pattern, text) for pattern in read):
                    found.append(f"{path.relative_to(SIM)}: {entry} {key}")
    assert not found, found


def test_the_document_follows_a_re_pathed_operation(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the document declares of the P2P operations (the required Idempotency-Key, the role
    header) goes with them to the paths the route table serves them at."""
    paths = {"create_transfer": "/v2/transfers", "get_transfer": "/v2/transfers/{transfer_id}"}
    monkeypatch.setattr(Personality, "paths", lambda self: paths)
    document = create_app(Settings(seed=7)).openapi()
    assert "/p2p/transfers" not in document["paths"]
    post = document["paths"]["/v2/transfers"]["post"]
    key = [p for p in post["parameters"] if p["name"] == "Idempotency-Key"]
    assert key and key[0]["required"] is True
    assert "svc-p2p-role" in post["responses"]["201"]["headers"]
    get = document["paths"]["/v2/transfers/{transfer_id}"]["get"]
    assert "svc-p2p-role" in get["responses"]["200"]["headers"]
