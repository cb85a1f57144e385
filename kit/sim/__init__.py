"""``kit.sim``: a stateful, deterministic simulator of the Partner API, served by uvicorn."""

from kit.sim.app import create_app
from kit.sim.settings import Settings

__all__ = ["Settings", "create_app"]
