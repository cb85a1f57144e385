"""Partner API kit: a client, a simulator (kit.sim) and notebook regression runs."""
