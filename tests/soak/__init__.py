"""The soak test: ``kit serve`` under mixed traffic for a week of simulator time, memory sampled."""
