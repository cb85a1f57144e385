"""Imported once by a population's fork server (:mod:`kit.lab.engine`), before it forks the
worker processes: what every shard needs, imported and built once, so that each worker starts
in milliseconds instead of seconds. Importing it starts no thread (a process that forks must
not run any) and changes nothing else; nothing else imports it.
"""

from __future__ import annotations

import kit.lab.shard  # noqa: F401  (the shard's code: pandas, the client, the lab)
from kit.sim.app import create_app
from kit.sim.server import start_embedded  # noqa: F401  (uvicorn)
from kit.sim.settings import Settings

create_app(Settings())  # the routes' and models' own imports, made when an app is built
