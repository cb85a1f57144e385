"""Serving the simulator embedded: uvicorn in a background thread of this process.

uvicorn binds the port itself (``port=0``) and we read it back from the listening socket:
handing uvicorn a socket we bound ourselves leaves TCP_NODELAY unset and costs ~44 ms per
request. It serves :func:`~kit.sim.app.create_app`'s app, as ``kit serve`` does. The embedded
server writes no access log and configures no logging: its uvicorn's records go where the
process's logging sends them (by default nowhere below a warning, and nothing is printed while
it serves a client: a stray line on stderr would change a notebook's outputs).

    >>> server = start_embedded(Settings(seed=7))  # doctest: +SKIP
    >>> server.base_url  # doctest: +SKIP
    'http://127.0.0.1:…'
    >>> server.stop()  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import atexit
import importlib
import json
import sys
import threading
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kit._choices import Overlay
from kit._lazy import imported_past, resolved_from
from kit.sim.app import create_app
from kit.sim.settings import Settings


def _uvicorn_without_its_cli() -> types.ModuleType:
    """``import uvicorn``, its command-line module (click, the reload supervisors: ~35 ms CPU of
    the first connect) left out: the package imports ``Server, main, run`` from it, so a stand-in
    gives the real ``Server`` and, for ``main`` and ``run``, callables that load the real module
    on first call (and put its own back on the package). ``kit serve`` and ``uvicorn`` commands
    are unaffected; a later ``import uvicorn.main`` loads the real module as usual.

    FIXES: "uvicorn imported without its command-line module" (benchmark 2, connect)."""
    if "uvicorn" in sys.modules:
        return sys.modules["uvicorn"]
    stand_in = types.ModuleType("uvicorn.main")

    def later(name: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            real = importlib.import_module("uvicorn.main")
            package = sys.modules["uvicorn"]
            package.main, package.run = real.main, real.run  # type: ignore[attr-defined]
            return getattr(real, name)(*args, **kwargs)

        return call

    stand_in.main, stand_in.run = later("main"), later("run")  # type: ignore[attr-defined]
    # the package also imports Server from it: the real one, from uvicorn.server, when asked
    stand_in.__getattr__, _ = resolved_from("uvicorn.server", ["Server"], vars(stand_in))  # type: ignore[method-assign]
    with imported_past("uvicorn.main", stand_in=stand_in):
        return importlib.import_module("uvicorn")


if TYPE_CHECKING:
    import uvicorn
else:
    uvicorn = _uvicorn_without_its_cli()

_START_TIMEOUT_S = 20.0


class _Server(uvicorn.Server):
    """uvicorn's server, saying when it accepts connections (instead of being polled for it)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: Any = None) -> None:
        try:
            await super().startup(sockets=sockets)
        finally:
            self.ready.set()

    def stop_soon(self) -> None:
        """Ask the server to exit, from any thread (its loop notices at its next tick)."""
        self.should_exit = True


class EmbeddedServer:
    """A simulator served by uvicorn in a daemon thread on 127.0.0.1."""

    def __init__(self, base_url: str, settings: Settings, server: _Server, thread: threading.Thread) -> None:
        self.base_url, self.settings = base_url, settings
        self._server, self._thread = server, thread

    def __repr__(self) -> str:
        return f"EmbeddedServer(base_url={self.base_url!r}, running={self.running})"

    def stop(self) -> None:
        """Stop serving and wait for the thread to end (idempotent)."""
        self._server.stop_soon()
        if self._thread.is_alive():
            self._thread.join(timeout=10)

    def stop_at_exit(self) -> None:
        """At the interpreter's exit: a simulator keeping a state file is stopped and waited for
        (its last transactions committed); one in memory is only told to stop. Its thread is a
        daemon and nothing of it outlives the process, so the exit does not wait for uvicorn's
        graceful shutdown (~0.15 s at the end of every notebook kernel)."""
        if self.settings.state_file:
            self.stop()
        else:
            self._server.stop_soon()

    @property
    def running(self) -> bool:
        return self._thread.is_alive() and not self._server.should_exit


def start_embedded(
    settings: Settings | None = None, *, host: str = "127.0.0.1", loop: str = "asyncio"
) -> EmbeddedServer:
    """Start a simulator in a background thread and return once it accepts connections.

    ``loop`` is uvicorn's loop choice. The default, the standard library's loop, suits a
    simulator serving one notebook (uvloop's import is ~20 ms of the first connect, and one
    client never needs its throughput); a population shard, serving many at once, asks for
    ``"auto"`` (uvloop when installed, as ``kit serve`` uses).
    """
    settings = settings or Settings()
    app = create_app(settings)
    config = uvicorn.Config(
        app,
        host=host,
        port=0,
        log_config=None,  # the process's logging as it is: no handler, format or level of uvicorn's
        access_log=False,
        proxy_headers=False,  # no access log: nothing would show a forwarded client (kit._serveopts)
        lifespan="on",
        loop=loop,
        ws="none",  # no websocket routes: the websockets package stays unimported (~15 ms)
        timeout_graceful_shutdown=2,
    )
    server = _Server(config)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            with asyncio.Runner(loop_factory=config.get_loop_factory()) as runner:
                runner.run(server.serve())
        except BaseException as exc:  # surfaced to the caller below
            failure.append(exc)
        finally:
            server.ready.set()

    thread = threading.Thread(target=run, name="kit-sim", daemon=True)
    thread.start()
    server.ready.wait(_START_TIMEOUT_S)
    if not server.started:
        server.should_exit = True
        thread.join(timeout=5)
        raise RuntimeError(f"the embedded simulator did not start: {failure[0] if failure else 'timeout'}")
    port = server.servers[0].sockets[0].getsockname()[1]
    return EmbeddedServer(f"http://{host}:{port}", settings, server, thread)


_shared: dict[str, EmbeddedServer] = {}
_shared_lock = threading.Lock()


def shared_server(choices: Overlay | None = None) -> EmbeddedServer:
    """The process-wide embedded simulator: started on first use, reused, stopped at exit.

    One per choice overlay (``kit._choices``): a client asking for another overlay than a
    running simulator's gets a second simulator with that one, never the first re-chosen
    under it; the same overlay (the same values, from any file) reuses its simulator.

    Raises:
        ChoicesError: the simulator cannot serve the overlay (entry and key named).
    """
    key = overlay_key(choices)
    with _shared_lock:
        server = _shared.get(key)
        if server is None or not server.running:
            server = _shared[key] = start_embedded(Settings(choices=choices or None))
            atexit.register(server.stop_at_exit)
        return server


def overlay_key(choices: Overlay | None) -> str:
    """The same values give the same key, whatever file they came from."""
    if not choices:
        return ""
    return json.dumps({entry: choices.changes(entry) for entry in choices.entries()}, sort_keys=True)
