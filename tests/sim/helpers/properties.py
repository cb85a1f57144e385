"""Hypothesis settings for property tests against the shared simulator: few examples, no
deadline (every example is HTTP), derandomized (the same examples every run), and
function-scoped fixtures allowed (the simulator is reset per test, not per example)."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

PROPERTY = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
