"""The test suites: ``sim`` (the wire contract), ``hardening``, ``client``, ``notebooks``."""
