"""``python -m kit`` is the ``kit`` command."""

from kit.cli import main

raise SystemExit(main())
