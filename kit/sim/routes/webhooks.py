"""Webhook subscriptions and the signing keys (A23, A24)."""

from __future__ import annotations

from urllib.parse import urlsplit

from fastapi import APIRouter, Request, Response

from kit import register
from kit.sim.fastpath import PlainRoute
from kit.sim.models import Jwks, SubscriptionCreate, SubscriptionOut
from kit.sim.openapi import body, problems
from kit.sim.pipeline import Call, Reply, run
from kit.sim.problems import Problem, validation_problem
from kit.sim.settings import is_loopback
from kit.sim.state import Subscription

router = APIRouter(tags=["webhooks"], route_class=PlainRoute)
_SPEC = register.spec()
WEBHOOK_EVENTS: list[str] = list(_SPEC["webhook_events"])
RENAMED: dict[str, str] = dict(_SPEC["renamed_webhook_events"])


@router.post(
    "/webhooks/subscriptions",
    status_code=201,
    response_model=SubscriptionOut,
    responses=problems(400, 401, 413, 415, 422),
    openapi_extra=body(SubscriptionCreate),
    summary="Subscribe a URL to webhook events",
)
async def subscribe(request: Request) -> Response:
    def handle(call: Call) -> Reply:
        call.reject_clear_pii()
        req = call.parse(SubscriptionCreate)
        renamed = {name: RENAMED[name] for name in req.events if name in RENAMED}
        if renamed:
            raise Problem(
                422,
                "event-renamed",
                "These event names were corrected in 1.2.0; subscribe to the new names.",
                renamed=renamed,
            )
        unknown = [name for name in req.events if name not in WEBHOOK_EVENTS]
        if unknown:
            raise Problem(
                422,
                "unknown-event-type",
                f"Unknown webhook event type; allowed: {', '.join(WEBHOOK_EVENTS)}.",
                allowed=WEBHOOK_EVENTS,
            )
        try:
            parts = urlsplit(req.url)
            host = parts.hostname
            parts.port  # noqa: B018 - raises on a bad port
        except ValueError:
            parts, host = urlsplit(""), None
        if parts.scheme not in ("http", "https") or not host:
            raise validation_problem([{"field": "/url", "message": "must be an absolute http(s) URL"}])
        settings = call.sim.settings
        if not (is_loopback(host) or settings.allow_any_webhook_host or host in settings.webhook_hosts):
            raise Problem(
                422,
                "webhook-url-not-allowed",
                "This simulator delivers only to loopback hosts unless others are allowed at start.",
            )
        sub = Subscription(
            call.state.ids.next("sub"), call.partner, req.url, list(dict.fromkeys(req.events)), call.now
        )
        call.state.subscriptions[sub.subscription_id] = sub
        return Reply(201, {"subscription_id": sub.subscription_id, "url": sub.url, "events": sub.events})

    return await run(request, handle, assumptions=("A23",))


@router.get(
    "/webhooks/jwks",
    response_model=Jwks,
    responses=problems(401),
    summary="Public keys that verify svc-webhook-signature",
)
async def jwks(request: Request) -> Response:
    return await run(request, lambda call: Reply(200, call.state.keys.signing_jwks()), assumptions=("A24",))
