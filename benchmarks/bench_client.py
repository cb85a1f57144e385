"""Benchmark 2 — client overhead: a full journey through ``kit`` ÷ the same calls by hand.

The journey (one new device, one new client each time): partner token, init data, anonymous
session, account, promotion to account, person (PII encrypted), KYC questions (decrypted with
the device key), the right answers (control plane) sent encrypted, promotion to person, a
temporary card created and closed, an inbound event, a P2P transfer to a recipient onboarded
once beforehand. Against one ``kit serve`` subprocess, so the server's share is the same on
both sides.

The bare side makes exactly the same HTTP calls (same paths, bodies, ``Idempotency-Key`` on
every partner POST as kit sends) with one ``httpx.Client`` and joserfc by hand: it is what a
careful user would write without the kit. Journeys alternate kit / bare, medians compared.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from benchmarks.bench_support import CLIENT_ID, CLIENT_SECRET, median
from tests.support.launcher import serve_process

TARGET = 1.15  # issue 37: the client journey within 15 % of bare httpx + joserfc
ENC = "A256GCM"
RSA_ALG = "RSA-OAEP-256"
DEVICE_ALG = "ECDH-ES+A256KW"


def kit_journey(base_url: str, pii: dict[str, str], recipient: str, n: int) -> int:
    """One journey through kit; returns the number of HTTP exchanges it made."""
    import kit
    from kit.lab.journeys import onboard

    device = {"device_id": f"dev-kit-{n}", "platform": "ios", "model": "bench", "os_version": "17.2"}
    with kit.connect("sim", base_url=base_url, device=device) as api:
        api.token()
        api.sessions.init_data()
        customer = onboard(api, pii, expiration="sliding")
        assert customer.status == "established"
        card = api.cards.create(customer.account_id, type="temporary")
        api.cards.close(card.card_id, reason="lost")
        api.events.send(customer.account_id, "password.changed")
        transfer = api.p2p.transfer(
            from_account_id=customer.account_id, to_person_id=recipient, amount="12.50", memo="lunch"
        )
        assert transfer.status == "completed"
        return len(api.calls)


_TLS: list[Any] = []


def _tls() -> Any:
    """One TLS context for every bare client too, as kit shares one (building it costs ~20 ms):
    the ratio then measures what kit adds per call, not client construction."""
    import httpx

    if not _TLS:
        _TLS.append(httpx.create_ssl_context())
    return _TLS[0]


def bare_journey(base_url: str, pii: dict[str, str], recipient: str, n: int) -> int:
    """The same calls with httpx and joserfc by hand; returns the number of HTTP exchanges."""
    import httpx
    from joserfc import jwe
    from joserfc.jwk import ECKey, RSAKey

    to_server = jwe.JWERegistry(algorithms=[RSA_ALG, ENC])
    to_device = jwe.JWERegistry(algorithms=[DEVICE_ALG, ENC])
    calls = 0
    with httpx.Client(
        base_url=base_url, timeout=10.0, headers={"Accept": "application/json"}, verify=_tls()
    ) as http:

        def call(
            method: str, path: str, *, body: Any = None, session: str | None = None, partner: bool = True
        ) -> httpx.Response:
            nonlocal calls
            headers = {}
            if partner:
                headers["Authorization"] = f"Bearer {token}"
                if method == "POST":
                    headers["Idempotency-Key"] = str(uuid.uuid4())
            if session is not None:
                headers["svc-session-id"] = session
            r = http.request(method, path, json=body, headers=headers)
            calls += 1
            if r.status_code >= 400:
                raise RuntimeError(f"{method} {path}: {r.status_code} {r.text[:200]}")
            return r

        r = http.post(
            "/oauth/accesstoken", data={"grant_type": "client_credentials"}, auth=(CLIENT_ID, CLIENT_SECRET)
        )
        calls += 1
        token = r.json()["access_token"]
        device_key = ECKey.generate_key("P-256", parameters={"use": "enc"}, private=True)
        device_jwks = {
            "keys": [{**device_key.as_dict(private=False), "use": "enc", "kid": device_key.thumbprint()}]
        }
        device = {"device_id": f"dev-bare-{n}", "platform": "ios", "model": "bench", "os_version": "17.2"}
        server: dict[str, Any] = {}

        def init() -> str:
            data = call("GET", "/sessions/user_session_initialization_data").json()
            if not server:
                jwk = next(k for k in data["jwks"]["keys"] if k["alg"] == RSA_ALG)
                server.update(kid=jwk["kid"], key=RSAKey.import_key(jwk))
            return str(data["nonce"])

        def encrypt(value: Any) -> str:
            return jwe.encrypt_compact(
                {"alg": RSA_ALG, "enc": ENC, "kid": server["kid"]},
                json.dumps(value, separators=(",", ":")).encode(),
                server["key"],
                registry=to_server,
            )

        def open_session(kind: str, current: str | None, **ids: str) -> str:
            plain = {"nonce": init(), "device": device, "device_jwks": device_jwks, **ids}
            r = call(
                "POST",
                "/sessions",
                session=current,
                body={
                    "session_type": kind,
                    "expiration_strategy": "sliding",
                    "encrypted_data": encrypt(plain),
                },
            )
            return str(r.json()["session_token"])

        init()
        session = open_session("anonymous", None)
        account_id = call("POST", "/accounts", body={"product": "spending"}, session=session).json()[
            "account_id"
        ]
        session = open_session("account", session, account_id=account_id)
        person_id = call(
            "POST", f"/accounts/{account_id}/persons", session=session, body={"encrypted_pii": encrypt(pii)}
        ).json()["person_id"]
        enc_q = call("GET", f"/persons/{person_id}/kyc/questions", session=session).json()[
            "encrypted_questions"
        ]
        questions = json.loads(jwe.decrypt_compact(enc_q, device_key, registry=to_device).plaintext)
        assert questions["questions"]
        answers = call("GET", f"/_sim/persons/{person_id}/kyc_answers", partner=False).json()["answers"]
        result = call(
            "POST",
            f"/persons/{person_id}/kyc/answers",
            session=session,
            body={"encrypted_answers": encrypt({"answers": answers})},
        ).json()
        assert result["status"] == "established"
        session = open_session("person", session, person_id=person_id)
        card_id = call(
            "POST", f"/accounts/{account_id}/cards", body={"type": "temporary"}, session=session
        ).json()["card_id"]
        call("POST", f"/cards/{card_id}/close", body={"reason": "lost"}, session=session)
        call(
            "POST", f"/accounts/{account_id}/events", body={"event_type": "password.changed"}, session=session
        )
        transfer = call(
            "POST",
            "/p2p/transfers",
            session=session,
            body={
                "from_account_id": account_id,
                "to_person_id": recipient,
                "amount": {"value": "12.50", "currency": "USD"},
                "memo": "lunch",
            },
        ).json()
        assert transfer["status"] == "completed"
    return calls


def _recipient(base_url: str) -> tuple[str, dict[str, str]]:
    import kit
    from kit.lab.journeys import onboard

    device = {"device_id": "dev-recipient", "platform": "android", "model": "bench", "os_version": "14"}
    with kit.connect("sim", base_url=base_url, device=device) as api:
        recipient = onboard(api, persona=1, promote_to_person=False, expiration="sliding")
        assert recipient.status == "established" and recipient.person_id is not None
        pii = {k: v.reveal() for k, v in api.sim.persona(0).pii.items()}
        return recipient.person_id, pii


def measure(*, rounds: int = 15, seconds: float = 60.0) -> dict[str, Any]:
    kit_times: list[float] = []
    bare_times: list[float] = []
    calls: dict[str, int] = {}
    with serve_process() as served:
        url = served.base_url
        recipient, pii = _recipient(url)
        calls["kit"] = kit_journey(url, pii, recipient, -1)  # warm-up both paths
        calls["bare"] = bare_journey(url, pii, recipient, -1)
        deadline = time.perf_counter() + seconds
        for n in range(rounds):
            if time.perf_counter() > deadline:
                break
            first, second = (kit_journey, bare_journey) if n % 2 == 0 else (bare_journey, kit_journey)
            for fn in (first, second):
                t0 = time.perf_counter()
                fn(url, pii, recipient, n)
                (kit_times if fn is kit_journey else bare_times).append(time.perf_counter() - t0)
    kit_ms, bare_ms = median(kit_times) * 1000, median(bare_times) * 1000
    return {
        "name": "client overhead: journey through kit ÷ bare httpx + joserfc",
        "kit": round(kit_ms, 2),
        "kit_unit": "ms per journey through kit",
        "reference": round(bare_ms, 2),
        "reference_unit": "ms per journey, bare httpx + joserfc",
        "ratio": round(kit_ms / bare_ms, 3),
        "target": f"<= {TARGET}",
        "met": kit_ms / bare_ms <= TARGET,
        "rounds": len(kit_times),
        "details": {
            "http_calls": calls,
            "kit_ms": [round(t * 1000, 1) for t in kit_times],
            "bare_ms": [round(t * 1000, 1) for t in bare_times],
        },
    }


if __name__ == "__main__":
    print(json.dumps(measure(rounds=8), indent=2))
