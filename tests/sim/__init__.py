"""The simulator's HTTP contract tests (written from the wire contract, not from the code)."""
