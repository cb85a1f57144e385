"""The hardening runs, shared by the test suite and ``python -m benchmarks.stress``.

Each run talks HTTP to a real simulator (uvicorn on loopback) and returns a report of
figures; the tests assert on small runs, ``make stress`` prints big ones.

- :func:`run_fuzz` (:mod:`.fuzz`): schemathesis requests from the simulator's ``/openapi.json``.
- :func:`run_transfers` (:mod:`.money`): P2P transfers through the client under injected faults.
- :func:`run_leak_journey` (:mod:`.leaks`): a whole client journey through the leak scanner.
"""

from tests.hardening.harness.fuzz import FuzzReport, problem_violation, run_fuzz
from tests.hardening.harness.leaks import LeakReport, captured_logs, leak_journey, run_leak_journey
from tests.hardening.harness.money import Customer, MoneyReport, customer, run_transfers

__all__ = [
    "Customer",
    "FuzzReport",
    "LeakReport",
    "MoneyReport",
    "captured_logs",
    "customer",
    "leak_journey",
    "problem_violation",
    "run_fuzz",
    "run_leak_journey",
    "run_transfers",
]
