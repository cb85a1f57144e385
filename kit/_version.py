"""The kit's version: the one place it is written (the package metadata is built from it,
``tool.hatch.version``; ``kit.__version__``, the User-Agent and the HAR creator read it)."""

__version__ = "0.1.0"
