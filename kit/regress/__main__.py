"""``python -m kit.regress`` is ``kit regress``."""

from kit.regress.cli import main

raise SystemExit(main())
