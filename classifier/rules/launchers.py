"""RF144: programs that install commands to run later (at, batch, crontab).

The launcher table itself (classifier/data_launch.py) is applied by the
analysis: what a launcher runs is judged and keyed like any command, and its
facts feed RF113, RF114, RF123, RF126 and RF129.
"""

from __future__ import annotations

from typing import Iterable

from .. import data
from . import Context, Hit, names


def scheduled(ctx: Context) -> Iterable[Hit]:
    for inv in ctx.invocations:
        info = data.SCHEDULERS.get(inv.name)
        if info is None or not inv.argv:
            continue
        if any(w.static and w.value in info for w in inv.argv[1:]):
            continue
        yield inv.argv[0].span, f"`{inv.name}` installs commands that run later, outside " \
                                "this session"


CHECKS = (
    ("RF144", scheduled, names(data.SCHEDULERS)),
)
