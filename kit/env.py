"""Names the kit shares with its environment: environment variables and the simulator's
built-in partner clients.

One place for each name, read by the client (``kit.config``), the simulator (``kit.sim``),
``kit serve`` and ``kit regress`` alike. This module imports nothing from the kit, so every
room may import it.
"""

from __future__ import annotations

__all__ = [
    "ACCESS_TOKEN",
    "BASE_URL",
    "CLIENT_ID",
    "CLIENT_SECRET",
    "SANDBOX_FIXTURES",
    "SECRET_VARIABLES",
    "SIM_CONTROL_TOKEN",
    "SIM_PARTNERS",
    "SIM_PARTNER_CLIENTS",
]

# -- a partner sandbox (the ``sandbox`` profile) ----------------------------------------------
BASE_URL = "PARTNER_API_BASE_URL"
CLIENT_ID = "PARTNER_API_CLIENT_ID"
CLIENT_SECRET = "PARTNER_API_CLIENT_SECRET"
#: A partner token fetched once by ``kit regress`` for a whole sandbox run ("about once per
#: day", spec) and handed to the kernels through the environment, never as a parameter.
ACCESS_TOKEN = "PARTNER_API_ACCESS_TOKEN"
#: A TOML file of the sandbox's published test personas and their KYC answers.
SANDBOX_FIXTURES = "PARTNER_API_SANDBOX_FIXTURES"

# -- the simulator (``kit serve``) -------------------------------------------------------------
#: ``id:secret,id2:secret2`` — the partner clients ``kit serve`` accepts.
SIM_PARTNERS = "KIT_SIM_PARTNERS"
#: The token the control plane (``/_sim``) requires off loopback.
SIM_CONTROL_TOKEN = "KIT_SIM_CONTROL_TOKEN"

#: The environment variables whose values are secrets, with the kind of secret each holds.
SECRET_VARIABLES: dict[str, str] = {
    CLIENT_SECRET: "client-secret",
    ACCESS_TOKEN: "access-token",
    SIM_CONTROL_TOKEN: "control-token",
}

#: The partner clients the simulator ships with (client id → client secret), unless
#: ``KIT_SIM_PARTNERS`` says otherwise. The first is the ``sim`` profile's default.
SIM_PARTNER_CLIENTS: dict[str, str] = {
    "sim-partner": "sim-secret",
    "sim-partner-b": "sim-secret-b",
}
