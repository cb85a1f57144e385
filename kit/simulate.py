"""Population simulation, the public name: what :mod:`kit.lab.populations.simulate` offers.

Example::

    >>> import kit.simulate
    >>> result = kit.simulate.run(customers=200, seed=7, progress=False)   # doctest: +SKIP
    >>> result.money_conserved                                             # doctest: +SKIP
    True
    >>> result.save("runs/calm")                                           # doctest: +SKIP
    >>> kit.simulate.load("runs/calm").summary()                           # doctest: +SKIP
"""

from kit.lab.populations.simulate import (
    CLOSE_REASONS,
    DEFAULT_CLIENT_OPTIONS,
    DEFAULT_SERVER_CAP,
    DEFAULT_SHARDS,
    FAULT_PROFILES,
    FUNNEL_STAGES,
    JOURNEYS,
    OUTCOMES,
    STEP_COLUMNS,
    STEPS,
    CustomerPlan,
    Draws,
    SavedResultError,
    SimulationResult,
    Summary,
    compare,
    load,
    plan,
    plan_shard,
    plans_table,
    plot_compare,
    run,
    shard_bounds,
    shutdown,
)

__all__ = [
    "CLOSE_REASONS",
    "DEFAULT_CLIENT_OPTIONS",
    "DEFAULT_SERVER_CAP",
    "DEFAULT_SHARDS",
    "FAULT_PROFILES",
    "FUNNEL_STAGES",
    "JOURNEYS",
    "OUTCOMES",
    "STEPS",
    "STEP_COLUMNS",
    "CustomerPlan",
    "Draws",
    "SavedResultError",
    "SimulationResult",
    "Summary",
    "compare",
    "load",
    "plan",
    "plan_shard",
    "plans_table",
    "plot_compare",
    "run",
    "shard_bounds",
    "shutdown",
]
