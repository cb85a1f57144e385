"""The embedded server configures its own uvicorn instance and no logger of the process: uvicorn's
loggers are as they were before it started, and serving a client prints nothing."""

from __future__ import annotations

import subprocess
import sys

#: Each uvicorn logger's level, handlers, whether it is disabled and whether it propagates, before
#: and after an embedded server started and answered. ``uvicorn.access`` is left out of the
#: propagation: ``uvicorn.Config(access_log=False)``, the server's own setting, turns it off.
_CODE = """
import logging, httpx
from kit.sim import Settings
from kit.sim.server import start_embedded

NAMES = ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi")

def seen():
    return [
        (n, logging.getLogger(n).level, list(logging.getLogger(n).handlers), logging.getLogger(n).disabled,
         logging.getLogger(n).propagate if n != "uvicorn.access" else None)
        for n in NAMES
    ]

before = seen()
server = start_embedded(Settings(seed=7))
try:
    assert httpx.get(server.base_url + "/_sim/health").status_code == 200
    after = seen()
finally:
    server.stop()
assert after == before, (before, after)
print("same")
"""


def test_starting_the_embedded_server_leaves_uvicorns_loggers_as_they_were() -> None:
    out = subprocess.run([sys.executable, "-c", _CODE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["same"]
    assert out.stderr == ""  # nothing printed while it starts, serves and stops
