"""Imported once by each population worker — a local one (:mod:`kit.lab.populations._worker`) at its start,
every Dask worker before its first shard (:mod:`kit.lab.populations.engine`): what every shard needs,
imported and built once, so that no shard pays for it. Importing it changes nothing else.
"""

from __future__ import annotations

import kit.lab.populations.shard  # noqa: F401  (the shard's code: pandas, the client, the lab)
from kit.sim.app import create_app
from kit.sim.server import start_embedded  # noqa: F401  (uvicorn)
from kit.sim.settings import Settings

create_app(Settings())  # the routes' and models' own imports, made when an app is built
