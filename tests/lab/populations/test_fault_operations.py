"""The lab's fault profiles name each fault by its operation's key: a shard's client adds it at
the path it speaks for that operation, so under a dialect that moves an operation the fault
lands on the moved path, where the simulator serves it, and fires."""

from __future__ import annotations

from typing import Any

import httpx

import kit
from kit import _choices, register
from kit._operations import BY_KEY
from kit.lab.journeys import onboard
from kit.lab.populations.simulate import FAULT_OPERATIONS, FAULT_PROFILES

CAMEL = register.data_dir() / "choices" / "camel.toml"
MOVED = str(_choices.load(CAMEL).value("A67")["paths"]["create_card"])


def _faults(api: kit.Client) -> list[dict[str, Any]]:
    resp = httpx.get(f"{api.config.base_url}/_sim/faults")
    assert resp.status_code == 200, resp.text
    return list(resp.json()["faults"])


def test_the_flaky_profile_under_a_dialect_moving_create_card_lands_on_the_moved_path_and_fires() -> None:
    card = BY_KEY["create_card"]
    assert card.path != MOVED
    with kit.connect("sim", choices=CAMEL, sleep=lambda _: None) as api:
        api.sim.reset(7)
        api.sim.clear_faults()
        try:
            for fault in FAULT_OPERATIONS["flaky"]:  # as each shard adds them
                api.sim.add_fault(**fault)
            added = {f["method"]: f["path"] for f in _faults(api) if f["path"] in (card.path, MOVED)}
            assert added == {card.methods[0]: MOVED}
            done = onboard(api, persona=0)
            for _ in range(60):  # a tenth of the attempts fail; the client's retries absorb them
                api.cards.create(done.account_id, type="virtual")
                fired = [f["fired"] for f in _faults(api) if f["path"] == MOVED]
                if fired[0]:
                    break
            assert fired[0] >= 1
        finally:
            api.sim.clear_faults()


def test_the_profiles_shown_are_the_same_faults_at_the_default_paths() -> None:
    for name, faults in FAULT_OPERATIONS.items():
        shown = FAULT_PROFILES[name]
        assert len(shown) == len(faults)
        for at_path, by_key in zip(shown, faults, strict=True):
            operation = BY_KEY[by_key["operation"]]
            assert (at_path["method"], at_path["path"]) == (operation.methods[0], operation.path)
            assert {k: v for k, v in at_path.items() if k not in ("method", "path")} == {
                k: v for k, v in by_key.items() if k != "operation"
            }
