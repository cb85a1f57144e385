"""The hardening suite: fuzzing, hostile inputs, the authorization matrix, money, leaks."""
