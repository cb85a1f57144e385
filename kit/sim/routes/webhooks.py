"""Webhook subscriptions and the signing keys (A23, A24).

Only the spec's four events can be subscribed to (A40); deliveries go to loopback hosts unless
others were allowed at start, and off loopback to global addresses only (A39, ``kit.sim.guard``).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response

from kit import register
from kit.sim import versions
from kit.sim.bodies import Jwks, SubscriptionCreate
from kit.sim.call import Call, RouteReply
from kit.sim.guard import webhook_target_refusal
from kit.sim.openapi import declare
from kit.sim.pipeline import run
from kit.sim.problems import Problem, validation_problem
from kit.sim.records import Subscription
from kit.sim.representations import SubscriptionOut
from kit.sim.table import Routes

router = Routes(tags=["webhooks"])
_SPEC = {k: register.fact(k) for k in ("webhook_events", "renamed_webhook_events")}
WEBHOOK_EVENTS: list[str] = list(_SPEC["webhook_events"])
RENAMED: dict[str, str] = dict(_SPEC["renamed_webhook_events"])


@declare(
    router,
    "subscribe_webhooks",
    SubscriptionOut,
    status=201,
    takes=SubscriptionCreate,
    summary="Subscribe a URL to webhook events",
)
async def subscribe(request: Request) -> Response:
    return await run(request, _subscribe)


def _subscription(call: Call) -> tuple[SubscriptionCreate, str]:
    """The subscription asked for, its events checked against the version's (A23, A40)."""
    req = call.body_as(SubscriptionCreate, uses=("A23",))
    version = call.version  # change 6: the names of this version; the subscription is pinned to it
    allowed = versions.webhook_events(version)
    renames = versions.renamed_events(version)
    renamed = {name: renames[name] for name in req.events if name in renames}
    if renamed:
        raise Problem(
            422,
            "event-renamed",
            "These event names were corrected in 1.2.0; subscribe to the new names.",
            renamed=renamed,
        )
    unknown = [name for name in req.events if name not in allowed]
    if unknown:
        raise Problem(
            422,
            "unknown-event-type",
            f"Unknown webhook event type; allowed: {', '.join(allowed)}.",
            allowed=allowed,
            assumptions=("A40",),
        )
    try:
        parts = urlsplit(req.url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        parts, host = urlsplit(""), None
    if parts.scheme not in ("http", "https") or not host:
        raise validation_problem([{"field": "/url", "message": "must be an absolute http(s) URL"}])
    return req, version


async def _subscribe(call: Call) -> RouteReply:
    req, version = _subscription(call)
    why = await webhook_target_refusal(req.url, call.sim.settings)  # a name resolved off the loop
    if why is not None:
        where = "only to loopback hosts" if call.sim.settings.on_loopback else "only to global addresses"
        raise Problem(
            422,
            "webhook-url-not-allowed",
            f"This simulator delivers {where} unless others are allowed at start "
            f"(--allow-webhook-host): {why}.",
            assumptions=("A39",),
        )
    sub = Subscription(
        call.state.ids.next("sub"),
        call.partner,
        req.url,
        list(dict.fromkeys(req.events)),
        call.now,
        api_version=version,
    )
    call.state.subscriptions[sub.subscription_id] = sub
    return RouteReply(201, SubscriptionOut.wire(sub))


@declare(router, "webhook_keys", Jwks, summary="Public keys that verify svc-webhook-signature")
async def jwks(request: Request) -> Response:
    def handle(call: Call) -> RouteReply:
        call.uses("A24")
        return RouteReply(200, call.state.keys.signing_jwks(call.sim.payloads.signing_algorithm))

    return await run(request, handle)
