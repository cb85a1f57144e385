"""The soak's traffic: devices of both partner clients doing what a team's clients do, every
answer checked against what it must be.

Each operation is a short sequence of requests (:data:`OPERATIONS`, with weights): init data
fetched and never used, anonymous sessions created and ended or abandoned, sessions opened
directly for a bound device (the token comes back encrypted to the device), inbound events
with new idempotency keys, their replays and a reused key, card issue and close (a webhook),
card reads, the signing keys, new partner tokens, webhook subscriptions and refused requests.
Client-side crypto is the expensive part of a session: device keys are made once, the
server's public keys imported once, and only the JWE that must carry a fresh nonce is made per
session.

    >>> traffic = Traffic(pool, random.Random(7), receiver_url)  # doctest: +SKIP
    >>> await traffic.enroll(devices)  # doctest: +SKIP
    >>> await traffic.run_one(traffic.rng.choice(devices))  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import base64
import collections
import json
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from joserfc import jwe
from joserfc.jwe import JWERegistry
from joserfc.jwk import ECKey, RSAKey

from tests.sim.helpers.contract import CLOSE_REASONS, INBOUND_EVENT_TYPES, PARTNER_A, PARTNER_B
from tests.sim.helpers.wire import headers as request_headers
from tests.soak.wire import Answer, Pool

PARTNERS = (PARTNER_A, PARTNER_B)
SERVER_JWE = JWERegistry(algorithms=["RSA-OAEP-256", "ECDH-ES+A256KW", "A256GCM"])
DEVICE_JWE = JWERegistry(algorithms=["ECDH-ES+A256KW", "A256GCM"])
INIT = "/sessions/user_session_initialization_data"
#: Replays and reused keys pick among this many recent keys of their partner.
RECENT = 200


@dataclass
class Device:
    """A device of partner client ``partner`` (0 or 1) with its EC key, made once."""

    partner: int
    device_id: str = field(default_factory=lambda: f"soak-{uuid.uuid4().hex[:12]}")
    key: ECKey = field(default_factory=lambda: ECKey.generate_key("P-256", private=True))
    account_id: str = ""

    def __post_init__(self) -> None:
        public = dict(self.key.as_dict(private=False))
        self.facts = {
            "device": {"device_id": self.device_id, "platform": "ios", "model": "Soak 1", "os_version": "17"},
            "device_jwks": {"keys": [public]},
        }


@dataclass
class Key:
    """An idempotency key sent, with its request and when (simulator seconds since the start)."""

    key: str
    account_id: str
    event_type: str
    at: int
    event_id: str = ""  # what the first answer named: a replay names it again


@dataclass
class Tally:
    """What the answers were: per status, per operation, and what was wrong."""

    requests: int = 0
    statuses: collections.Counter[int] = field(default_factory=collections.Counter)
    operations: collections.Counter[str] = field(default_factory=collections.Counter)
    server_errors: int = 0  # 5xx answers and dropped connections
    unexpected: int = 0
    examples: list[str] = field(default_factory=list)

    def wrong(self, what: str) -> None:
        self.unexpected += 1
        if len(self.examples) < 20:
            self.examples.append(what)


class Traffic:
    """Sends the operations for a set of devices and checks every answer.

    ``on_request`` (if set) is called after every request, with the count so far.
    """

    def __init__(
        self, pool: Pool, rng: random.Random, receiver_url: str, operations: dict[str, int] | None = None
    ) -> None:
        self.pool = pool
        chosen = operations or OPERATIONS
        self._names, self._weights = list(chosen), list(chosen.values())
        self.rng = rng
        self.receiver_url = receiver_url
        self.tally = Tally()
        self.tokens: list[str] = ["", ""]
        self.on_request: Callable[[int], None] | None = None
        #: Simulator seconds since the start, moved by the clock steps; keys are kept a day (A20).
        self.sim_seconds = 0
        self.key_window = 86400
        self._server_keys: dict[str, tuple[str, Any]] = {}
        self._keys: list[collections.deque[Key]] = [collections.deque(maxlen=RECENT) for _ in PARTNERS]
        self._cards: list[collections.deque[str]] = [collections.deque(maxlen=RECENT) for _ in PARTNERS]

    # -- one request, checked ---------------------------------------------------------------------

    async def send(
        self,
        op: str,
        method: str,
        path: str,
        expect: int,
        *,
        partner: int | None = None,
        authorization: str | None = None,
        session: str | None = None,
        idem: str | None = None,
        body: Any = None,
        content: bytes | None = None,
        content_type: str = "application/json",
    ) -> Answer:
        """One request: the partner's bearer token (or ``authorization``), a session, a key."""
        token = self.tokens[partner] if partner is not None and authorization is None else None
        extra = {"Authorization": authorization} if authorization is not None else None
        headers = request_headers(token, session, idem, extra)
        try:
            resp = await self.pool.request(
                method, path, headers=headers, body=body, content=content, content_type=content_type
            )
        except (OSError, asyncio.IncompleteReadError) as exc:  # a dropped connection: a finding too
            resp = Answer(0, {}, f"{type(exc).__name__}: {exc}".encode())
        self._count(op, f"{method} {path}", resp, expect)
        return resp

    def _count(self, op: str, what: str, resp: Answer, expect: int) -> None:
        tally = self.tally
        tally.requests += 1
        tally.statuses[resp.status] += 1
        if resp.status >= 500 or resp.status == 0:
            tally.server_errors += 1
            tally.wrong(f"{op}: {what} -> {resp.status} {resp.text[:120]}")
        elif resp.status != expect:
            tally.wrong(f"{op}: {what} -> {resp.status} (expected {expect}) {resp.text[:120]}")
        if self.on_request is not None:
            self.on_request(tally.requests)

    # -- partner tokens, keys, sessions -------------------------------------------------------------

    async def new_token(self, partner: int, op: str = "token") -> None:
        """A fresh partner token for ``partner``, used from now on (older ones expire on the clock)."""
        basic = base64.b64encode(":".join(PARTNERS[partner]).encode()).decode()
        resp = await self.send(
            op,
            "POST",
            "/oauth/accesstoken",
            200,
            authorization=f"Basic {basic}",
            content=b"grant_type=client_credentials",
            content_type="application/x-www-form-urlencoded",
        )
        if resp.status == 200:
            self.tokens[partner] = resp.json()["access_token"]

    def _encrypt(self, plaintext: dict[str, Any], jwks: dict[str, Any], alg: str) -> str:
        if alg not in self._server_keys:
            jwk = next(k for k in jwks["keys"] if k.get("alg") == alg)
            key = RSAKey.import_key(jwk) if jwk["kty"] == "RSA" else ECKey.import_key(jwk)
            self._server_keys[alg] = (jwk["kid"], key)
        kid, key = self._server_keys[alg]
        header = {"alg": alg, "enc": "A256GCM", "kid": kid}
        return jwe.encrypt_compact(header, json.dumps(plaintext).encode(), key, registry=SERVER_JWE)

    async def session(
        self,
        op: str,
        device: Device,
        kind: str,
        *,
        current: str | None = None,
        account_id: str | None = None,
        fresh: bool = False,
    ) -> str | None:
        """Init data, then ``POST /sessions``: the session token (decrypted when sent encrypted).

        ``fresh``: as a new device (a new id, the same key), as every new client of a team is.
        """
        init = await self.send(op, "GET", INIT, 200, partner=device.partner)
        if init.status != 200:
            return None
        data = init.json()
        plaintext = {"nonce": data["nonce"], **device.facts}
        if fresh:
            plaintext["device"] = {**device.facts["device"], "device_id": f"soak-{uuid.uuid4().hex[:12]}"}
        if account_id is not None:
            plaintext["account_id"] = account_id
        alg = "RSA-OAEP-256" if self.rng.random() < 0.25 else "ECDH-ES+A256KW"  # RSA: the workers' load
        body = {
            "session_type": kind,
            "expiration_strategy": self.rng.choice(("fixed", "sliding")),
            "encrypted_data": self._encrypt(plaintext, data["jwks"], alg),
        }
        resp = await self.send(
            op, "POST", "/sessions", 201, partner=device.partner, session=current, body=body
        )
        if resp.status != 201:
            return None
        answer = resp.json()
        if "encrypted_session_token" in answer:
            decrypted = jwe.decrypt_compact(
                answer["encrypted_session_token"], device.key, registry=DEVICE_JWE
            )
            return str(json.loads(decrypted.plaintext)["session_token"])
        return str(answer["session_token"])

    async def enroll(self, device: Device) -> None:
        """Anonymous session → account → account session: the device is bound to its account."""
        anonymous = await self.session("enroll", device, "anonymous")
        resp = await self.send(
            "enroll",
            "POST",
            "/accounts",
            201,
            partner=device.partner,
            session=anonymous,
            body={"product": "spending"},
        )
        if resp.status != 201:
            return
        device.account_id = resp.json()["account_id"]
        session = await self.session(
            "enroll", device, "account", current=anonymous, account_id=device.account_id
        )
        await self.send("enroll", "DELETE", "/sessions", 204, partner=device.partner, session=session)

    async def subscribe(self, partner: int, events: list[str], op: str = "subscribe") -> None:
        body = {"url": self.receiver_url, "events": events}
        await self.send(op, "POST", "/webhooks/subscriptions", 201, partner=partner, body=body)

    # -- the operations ---------------------------------------------------------------------------

    async def unused_init_data(self, d: Device) -> None:
        await self.send("unused_init_data", "GET", INIT, 200, partner=d.partner)

    async def session_ended(self, d: Device) -> None:
        token = await self.session("session_ended", d, "anonymous", fresh=True)
        if token is not None:
            await self.send("session_ended", "DELETE", "/sessions", 204, partner=d.partner, session=token)

    async def session_abandoned(self, d: Device) -> None:
        await self.session("session_abandoned", d, "anonymous", fresh=True)

    async def session_opened(self, d: Device) -> None:
        token = await self.session("session_opened", d, "account", account_id=d.account_id)
        if token is None:
            return
        event = {"event_type": self.rng.choice(INBOUND_EVENT_TYPES)}
        path = f"/accounts/{d.account_id}/events"
        await self.send("session_opened", "POST", path, 202, partner=d.partner, session=token, body=event)
        await self.send("session_opened", "DELETE", "/sessions", 204, partner=d.partner, session=token)

    async def event_new_key(self, d: Device) -> None:
        key = Key(uuid.uuid4().hex, d.account_id, self.rng.choice(INBOUND_EVENT_TYPES), self.sim_seconds)
        path = f"/accounts/{d.account_id}/events"
        body = {"event_type": key.event_type}
        resp = await self.send("event_new_key", "POST", path, 202, partner=d.partner, idem=key.key, body=body)
        if resp.status == 202:
            key.event_id = resp.json()["event_id"]
            self._keys[d.partner].append(key)

    def _recent_key(self, d: Device) -> tuple[Key, bool]:
        """A recent key of the partner, and whether it is still kept (a day, A20). One no longer
        kept is sent again once (it runs anew) and no more: two at once would race."""
        keys = self._keys[d.partner]
        key = self.rng.choice(keys)
        kept = self.sim_seconds - key.at < self.key_window
        if not kept:
            keys.remove(key)
        return key, kept

    async def event_replayed(self, d: Device) -> None:
        if not self._keys[d.partner]:
            return await self.event_new_key(d)
        key, kept = self._recent_key(d)
        path = f"/accounts/{key.account_id}/events"
        body = {"event_type": key.event_type}
        resp = await self.send(
            "event_replayed", "POST", path, 202, partner=d.partner, idem=key.key, body=body
        )
        if resp.status != 202:
            return
        replayed = (
            resp.headers.get("idempotent-replayed") == "true" and resp.json()["event_id"] == key.event_id
        )
        if replayed != kept:
            self.tally.wrong(f"event_replayed: replayed {replayed} for a key kept {kept}")

    async def event_key_reused(self, d: Device) -> None:
        if not self._keys[d.partner]:
            return await self.event_new_key(d)
        key, kept = self._recent_key(d)
        other = next(t for t in INBOUND_EVENT_TYPES if t != key.event_type)
        path = f"/accounts/{key.account_id}/events"
        expect = 422 if kept else 202
        await self.send(
            "event_key_reused",
            "POST",
            path,
            expect,
            partner=d.partner,
            idem=key.key,
            body={"event_type": other},
        )

    async def event_plain(self, d: Device) -> None:
        body = {"event_type": self.rng.choice(INBOUND_EVENT_TYPES)}
        await self.send(
            "event_plain", "POST", f"/accounts/{d.account_id}/events", 202, partner=d.partner, body=body
        )

    async def card_closed(self, d: Device) -> None:
        path = f"/accounts/{d.account_id}/cards"
        body = {"type": self.rng.choice(("virtual", "temporary"))}
        resp = await self.send(
            "card_closed", "POST", path, 201, partner=d.partner, idem=uuid.uuid4().hex, body=body
        )
        if resp.status != 201:
            return
        card_id = resp.json()["card_id"]
        reason = {"reason": self.rng.choice(CLOSE_REASONS)}
        await self.send("card_closed", "POST", f"/cards/{card_id}/close", 200, partner=d.partner, body=reason)
        self._cards[d.partner].append(card_id)

    async def card_read(self, d: Device) -> None:
        if not self._cards[d.partner]:
            return await self.unused_init_data(d)
        card_id = self.rng.choice(self._cards[d.partner])
        await self.send("card_read", "GET", f"/cards/{card_id}", 200, partner=d.partner)

    async def signing_keys(self, d: Device) -> None:
        await self.send("signing_keys", "GET", "/webhooks/jwks", 200, partner=d.partner)

    async def token(self, d: Device) -> None:
        await self.new_token(d.partner)

    async def subscription(self, d: Device) -> None:
        await self.subscribe(d.partner, ["document_request.completed"])  # never sent in the soak

    async def refused(self, d: Device) -> None:
        kind = self.rng.randrange(4)
        events = f"/accounts/{d.account_id}/events"
        if kind == 0:
            await self.send("refused", "GET", "/cards/card_unknown", 404, partner=d.partner)
        elif kind == 1:
            await self.send("refused", "GET", "/webhooks/jwks", 401, partner=d.partner, session="ses_unknown")
        elif kind == 2:
            await self.send("refused", "POST", events, 400, partner=d.partner, content=b'{"event_type":')
        else:
            await self.send("refused", "POST", events, 422, partner=d.partner, body={"event_type": "nope"})

    async def run_one(self, device: Device) -> None:
        """One operation, drawn by weight, for ``device``."""
        name = self.rng.choices(self._names, self._weights)[0]
        self.tally.operations[name] += 1
        await getattr(self, name)(device)


#: Operation → weight: mostly reads, sessions and events, as a team's clients send them; few
#: resources a partner keeps (cards), since those are kept for good.
OPERATIONS: dict[str, int] = {
    "unused_init_data": 14,
    "session_ended": 8,
    "session_abandoned": 4,
    "session_opened": 4,
    "event_new_key": 14,
    "event_replayed": 10,
    "event_key_reused": 1,
    "event_plain": 6,
    "card_closed": 1,
    "card_read": 8,
    "signing_keys": 6,
    "token": 1,
    "subscription": 1,
    "refused": 3,
}
