"""Fixtures for the lab tests: the client tests' embedded simulator, reset between tests.

Declared once, in ``tests/client/conftest.py``; importing them here makes pytest offer them to
``tests/lab`` too.
"""

from __future__ import annotations

from tests.client.conftest import SEED, make_client, reset_sim, sim_url, sleeps

__all__ = ["SEED", "make_client", "reset_sim", "sim_url", "sleeps"]
