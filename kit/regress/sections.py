"""Tagged sections in ``kit regress``: a cell that cannot run here is not executed.

A cell tagged ``needs-control`` or ``needs-receiver`` (:mod:`kit.notebook.tags`) needs what a
sandbox may lack. papermill has no tag-based skip, so kit regress's engine runs its own
notebook client (:func:`engine`): before such a cell it asks the kernel
(:func:`kit.notebook.tags.can_run`, a ``user_expressions`` probe: no output, no history) —
the kernel knows the profile and the API its clients use. Where the answer is no, the kernel
runs :func:`kit.notebook.tags.skipped_section` in the cell's place: one line saying why, and
every check the cell defines reported skipped with that reason, as a check's ``needs=`` is.
The executed notebook keeps the cell's own source, its output that line.

Example::

    >>> from papermill.engines import NBClientEngine, papermill_engines  # doctest: +SKIP
    >>> papermill_engines.register("with-sections", engine(NBClientEngine))  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from typing import Any

from kit.notebook import tags

__all__ = ["engine", "probe"]

_LOG = logging.getLogger("kit.regress")


def probe(tag: str) -> str:
    """The expression the kernel evaluates to tell whether a section tagged ``tag`` can run."""
    return f"__import__('kit.notebook.tags', fromlist=['can_run']).can_run({tag!r})"


def _client() -> type[Any]:
    from nbclient.util import run_sync
    from papermill.clientwrap import PapermillNotebookClient

    class SectionClient(PapermillNotebookClient):  # type: ignore[misc]
        """papermill's notebook client, asking the kernel before each tagged section."""

        async def _runs(self, tag: str) -> bool:
            msg_id = self.kc.execute(
                "pass", silent=True, store_history=False, user_expressions={"runs": probe(tag)}
            )
            reply = await self.async_wait_for_reply(msg_id)
            answer = ((reply or {}).get("content", {}).get("user_expressions") or {}).get("runs", {})
            if answer.get("status") != "ok":  # the cell runs, and says what is wrong
                _LOG.warning("could not ask the kernel about section %s: %s", tag, answer.get("evalue"))
                return True
            return bool(answer.get("data", {}).get("text/plain") == "True")

        async def async_execute_cell(self, cell: Any, cell_index: int, *args: Any, **kwargs: Any) -> Any:
            tag = tags.section_of(cell.metadata.get("tags", [])) if cell.cell_type == "code" else None
            if tag is None or await self._runs(tag):
                return await super().async_execute_cell(cell, cell_index, *args, **kwargs)
            own = cell.source
            cell.source = tags.skip_source(tag, own)
            try:
                return await super().async_execute_cell(cell, cell_index, *args, **kwargs)
            finally:
                cell.source = own

        execute_cell = run_sync(async_execute_cell)  # nbclient binds its own at class creation

    return SectionClient


def engine(base: type[Any]) -> type[Any]:
    """``base`` (an nbclient engine of papermill's) executing with a client that skips the tagged
    sections that cannot run here."""
    from papermill.engines import logger
    from papermill.utils import merge_kwargs, remove_args

    client = _client()

    class Engine(base):  # type: ignore[misc, valid-type]
        @classmethod
        def execute_managed_notebook(  # papermill's NBClientEngine's, with this client
            cls,
            nb_man: Any,
            kernel_name: str,
            log_output: bool = False,
            stdout_file: Any = None,
            stderr_file: Any = None,
            start_timeout: int = 60,
            execution_timeout: float | None = None,
            **kwargs: Any,
        ) -> Any:
            kwargs = remove_args(["input_path"], **kwargs)
            final = merge_kwargs(
                remove_args(["timeout", "startup_timeout"], **kwargs),
                timeout=execution_timeout or kwargs.get("timeout"),
                startup_timeout=start_timeout,
                kernel_name=kernel_name,
                log=logger,
                log_output=log_output,
                stdout_file=stdout_file,
                stderr_file=stderr_file,
            )
            return client(nb_man, **final).execute()

    return Engine
