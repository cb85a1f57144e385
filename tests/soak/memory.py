"""Resident memory of a process and its children, and whether it keeps growing.

The server's RSS is read from ``/proc/<pid>/status`` (``VmRSS``) together with every process
whose parent it is (``kit serve``'s crypto workers). Growth is judged robustly: a Theil–Sen
line (the median of every pairwise slope, which a few outliers cannot tip) through the
samples after the warm-up, as a fraction of the memory at the start of that stretch; the
medians of the first and last fifth of the stretch are reported beside it.

    >>> growth([(0, 100.0), (1, 100.0), (2, 101.0), (3, 100.0), (4, 100.0)]).theil_sen
    0.0
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


def _rss_kib(pid: int) -> int:
    """VmRSS of one process in KiB (0 when it is gone or has none)."""
    try:
        for line in (PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (by ``/proc/*/stat``)."""
    found = []
    for entry in os.scandir(PROC):
        if not entry.name.isdigit():
            continue
        try:
            stat = (PROC / entry.name / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after it.
        fields = stat.rpartition(")")[2].split()
        if len(fields) > 1 and fields[1] == str(pid):
            found.append(int(entry.name))
    return sorted(found)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of one process so far (0 when it is gone)."""
    try:
        fields = (PROC / str(pid) / "stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


@dataclass(frozen=True)
class Sample:
    """One reading: after ``requests`` requests, the server's and its children's RSS (MiB)."""

    requests: int
    seconds: float
    server_mib: float
    children_mib: float
    processes: int

    @property
    def total_mib(self) -> float:
        return round(self.server_mib + self.children_mib, 2)


def sample(pid: int, requests: int, seconds: float) -> Sample:
    """Read the RSS of ``pid`` and of its children now."""
    kids = children(pid)
    return Sample(
        requests,
        round(seconds, 2),
        round(_rss_kib(pid) / 1024, 2),
        round(sum(_rss_kib(k) for k in kids) / 1024, 2),
        1 + len(kids),
    )


@dataclass(frozen=True)
class Growth:
    """Growth over a stretch of samples, as fractions of the memory at its start."""

    theil_sen: float  # the robust line's rise over the stretch
    windows: float  # median of the last fifth against median of the first fifth
    start_mib: float
    end_mib: float


def growth(points: list[tuple[float, float]]) -> Growth:
    """How much ``(x, mib)`` points rise from the first x to the last, robustly.

    Raises ValueError with fewer than five points.
    """
    if len(points) < 5:
        raise ValueError("at least five samples are needed to judge growth")
    points = sorted(points)
    slopes = [
        (y2 - y1) / (x2 - x1) for i, (x1, y1) in enumerate(points) for x2, y2 in points[i + 1 :] if x2 != x1
    ]
    slope = statistics.median(slopes) if slopes else 0.0
    fifth = max(1, len(points) // 5)
    start = statistics.median(y for _, y in points[:fifth])
    end = statistics.median(y for _, y in points[-fifth:])
    span = points[-1][0] - points[0][0]
    return Growth(
        theil_sen=round(slope * span / start, 4) if start else 0.0,
        windows=round((end - start) / start, 4) if start else 0.0,
        start_mib=round(start, 1),
        end_mib=round(end, 1),
    )
