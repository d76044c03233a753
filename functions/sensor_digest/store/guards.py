"""What a live write of a day item rests on, one guard per mode, each adding its own conditions and
the clauses they need to the update in the making (``apply``): ``Exists`` (a day begun under
markers; at least once's first update), ``Anyway`` (at least once's update after the insert race),
``Compact`` (the compact ledger: its page, its identities new and fitting, the day still *hashed*),
``AfterSequence`` (ordered mode: the group's first sequence number past the one applied). The
history import's guard is ``import_writes.Imported``. ``imports_as_read`` is the condition of a live
write whose reports name an ``event_id``: the day's imported rows are those its writer checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from sensor_digest.store import schema
from sensor_digest.store.day_view import DayView
from sensor_digest.store.expressions import (
    AFTER_APPLIED,
    IDS_FIT,
    IMPORT_SEQ_AS_READ,
    IMPORT_SEQ_NONE,
    ITEM_EXISTS,
    ON_FIRST_PAGE,
    ON_PAGE,
    STILL_HASHED,
    Parts,
    ids_new,
)
from sensor_digest.store.identities import DAY_IDS
from sensor_digest.store.tally import Tally


class Guard(Protocol):
    """What a write of a day item rests on: it adds its conditions, and the clauses they need, to
    ``parts`` (the update of ``tally``, whose count is ``:n``)."""

    def apply(self, parts: Parts, tally: Tally) -> None: ...


@dataclass(frozen=True)
class Exists:
    """The day item is there: a day begun under markers, or at least once's first update."""

    def apply(self, parts: Parts, tally: Tally) -> None:
        parts.names["#pk"] = schema.SENSOR_ID
        parts.conditions.append(ITEM_EXISTS)


@dataclass(frozen=True)
class Anyway:
    """No condition but the hours map's: at least once's update once the item was created."""

    def apply(self, parts: Parts, tally: Tally) -> None:
        return


@dataclass(frozen=True)
class Compact:
    """The compact ledger's: the day still on ``view``'s page and as hashed as ``view`` says, none of
    ``checked`` in its own identities, ``added`` (page 0's share) fitting there; ``advance``: the page
    the day moves on to (past pages found taken: ``SkippedPages`` grows)."""

    view: DayView
    checked: Sequence[bytes] = ()
    added: Sequence[bytes] = ()
    advance: int | None = None

    def apply(self, parts: Parts, tally: Tally) -> None:
        view, names, values = self.view, parts.names, parts.values
        names["#page"], names["#hashed"] = schema.ID_PAGE, schema.HASHED_COUNT
        values[":page"] = {"N": str(view.page)}
        parts.conditions.append(ON_PAGE if view.page else ON_FIRST_PAGE)
        parts.adds.append("#hashed :n")
        if view.hashed:
            parts.conditions.append(STILL_HASHED)
        if self.checked or self.added:
            names["#ids"] = schema.IDS
        parts.conditions += ids_new(self.checked, values, there=view.page > 0)
        if self.added:
            parts.adds.append("#ids :added")
            values[":added"] = {"BS": list(self.added)}
            values[":room"] = {"N": str(DAY_IDS - len(self.added))}
            parts.conditions.append(IDS_FIT)
        if self.advance is not None:
            parts.sets.append("#page = :next")
            values[":next"] = {"N": str(self.advance)}
            if self.advance > view.page + 1:  # past pages found taken: the day item was put back behind them
                names["#skipped"] = schema.SKIPPED_PAGES
                values[":skipped"] = {"N": str(self.advance - view.page - 1)}
                parts.adds.append("#skipped :skipped")


@dataclass(frozen=True)
class AfterSequence:
    """Ordered mode's: the group's first sequence number of queue ``source`` past the one applied;
    ``last`` is applied by the write."""

    source: str
    first: int
    last: int

    def apply(self, parts: Parts, tally: Tally) -> None:
        parts.names.update({"#pk": schema.SENSOR_ID, "#applied": schema.applied_sequence_name(self.source)})
        parts.values[":last"] = {"S": schema.sequence_text(self.last)}
        parts.values[":first"] = {"S": schema.sequence_text(self.first)}
        parts.sets.append("#applied = :last")
        parts.conditions += [ITEM_EXISTS, AFTER_APPLIED]


def imports_as_read(parts: Parts, seq: int) -> None:
    """The condition that the day's imported rows are those the writer checked: its ``ImportSeq`` is
    still ``seq`` (0: there is none)."""
    parts.names["#iseq"] = schema.IMPORT_SEQ
    if seq:
        parts.values[":iseq"] = {"N": str(seq)}
        parts.conditions.append(IMPORT_SEQ_AS_READ)
    else:
        parts.conditions.append(IMPORT_SEQ_NONE)
