"""Each rank's records its own series: where ranks print their own loss records (torchrun's
``[rank3]:`` prefixes) and disagree, the verdict reads a rank that shows the NaN.

Interleaved, the records of a rank whose loss stays NaN and of one that stays finite read as a
NaN that came and went (``healthy``).  So beside the whole log's trackers, ``RankSeries`` feeds
one ``Accumulator`` per rank (at most ``MAX_RANKS``): the rank's own events, the events that name
no rank, and the other ranks' events that are not loss records (scaler messages, skips, errors
and the stated precision concern every rank).  A rank seen first after other events gets the
ones kept so far replayed (at most ``MAX_CONTEXT``).

Ranks that each print their own loss can print losses of different sizes (each its data shard's:
Horovod's ``[1,0]<stderr>:`` lines, one rank near 3, the other near 4000).  Interleaved, they read
as a loss that exploded; where no rank's own series explodes, the verdict reads the first rank's
(``calm_apart``)."""

from __future__ import annotations

from fampnb.diagnose._accumulate import Accumulator
from fampnb.logs import Event

__all__ = ["RankSeries", "MAX_RANKS", "MAX_CONTEXT"]

MAX_RANKS = 64
MAX_CONTEXT = 512
_RECORDS = ("loss", "nan")


class RankSeries:
    """Per-rank accumulators of one log (see the module)."""

    def __init__(self) -> None:
        self.accs: dict[int, Accumulator] = {}
        self.context: list[Event] = []     # events every rank shares, for a rank seen later
        self.full = False                  # too many ranks: no per-rank series

    def feed(self, ev: Event) -> None:
        if self.full:
            return
        rank = ev.rank
        if rank is not None and rank not in self.accs and ev.kind in _RECORDS:
            if len(self.accs) >= MAX_RANKS:
                self.full, self.accs, self.context = True, {}, []
                return
            acc = Accumulator()
            for old in self.context:
                acc.feed(old)
            self.accs[rank] = acc
        shared = rank is None or ev.kind not in _RECORDS
        if shared:
            for r, acc in self.accs.items():
                if r != rank:
                    acc.feed(ev)
            if len(self.context) < MAX_CONTEXT:
                self.context.append(ev)
        if rank is not None and rank in self.accs:
            self.accs[rank].feed(ev)

    def disagree(self, whole: Accumulator) -> tuple[list[int], list[int]] | None:
        """``(bad, good)``: the ranks with and without a NaN loss, where both exist."""
        bad = sorted(r for r, b in whole.log.rank_nan.items() if b)
        if not bad or len(bad) == len(whole.log.rank_nan):
            return None
        return bad, sorted(r for r, b in whole.log.rank_nan.items() if not b)

    def calm_apart(self, whole: Accumulator) -> int | None:
        """The first rank, where the whole log's loss explodes (no NaN printed) only because two or
        more ranks' records are interleaved: none of their own series explodes."""
        if self.full or len(self.accs) < 2 or whole.nan.exploded is None:
            return None
        if any(acc.nan.exploded is not None for acc in self.accs.values()):
            return None
        return min(self.accs)

    def series(self, rank: int) -> Accumulator | None:
        """The accumulator of ``rank``'s own series (None when ranks were not kept apart)."""
        return None if self.full else self.accs.get(rank)
