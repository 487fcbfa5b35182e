"""Which pair a rater sees next, and recording a decision (FlowEval §4: same prompt, different models).

Every pair of sites for the same prompt from two different models is a comparison. The queue is shuffled and
each pair's left/right order drawn with one seeded generator, so the same run dirs and seed give the same
queue: a rater who comes back continues with the first pair they have not labelled yet (labels name the
sites compared, `site_a` / `site_b`). A skipped pair goes to the back of this session's queue; a skip is not a
decision and is not written, so a restart shows the pair in its place again.
"""

from __future__ import annotations

import hashlib
import itertools
import random
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from runner.suites.floweval.pair_labels import PairwiseLabel, Winner, append_label, read_labels
from runner.suites.floweval.arena.sites import ArenaSite


@dataclass(frozen=True)
class ArenaPair:
    left: ArenaSite  # shown as A
    right: ArenaSite  # shown as B

    @property
    def key(self) -> frozenset[str]:
        return frozenset((self.left.site_id, self.right.site_id))

    @property
    def token(self) -> str:
        """What the page sends back with a decision: names this pair and side order only, so a stale page cannot
        decide another pair; opaque, because a site id holds its run dir's path, which may name the model."""
        both = f"{self.left.site_id}||{self.right.site_id}".encode()
        return hashlib.sha256(both).hexdigest()[:20]


def build_pairs(sites: list[ArenaSite], *, seed: int = 0) -> list[ArenaPair]:
    rng = random.Random(seed)
    pairs = []
    by_prompt: dict[str, list[ArenaSite]] = {}
    for site in sites:
        by_prompt.setdefault(site.task_id, []).append(site)
    for prompt in sorted(by_prompt):
        for first, second in itertools.combinations(by_prompt[prompt], 2):
            if first.model == second.model:
                continue
            pairs.append(ArenaPair(first, second) if rng.random() < 0.5 else ArenaPair(second, first))
    rng.shuffle(pairs)
    return pairs


class Arena:
    """The queue of one rater and the labels file the decisions go to."""

    def __init__(self, pairs: list[ArenaPair], labels_path: Path, rater: str) -> None:
        if not rater:
            raise ValueError("the arena needs a rater id")
        self.pairs = pairs
        self.labels_path = Path(labels_path)
        self.rater = rater
        self._lock = threading.Lock()
        self._done: set[frozenset[str]] = set()
        self._skipped: list[frozenset[str]] = []  # this session's skips, oldest first
        if self.labels_path.is_file():
            self._done = {frozenset((label.site_a, label.site_b)) for label in read_labels(self.labels_path)
                          if label.rater == rater}

    @property
    def decided(self) -> int:
        return sum(1 for pair in self.pairs if pair.key in self._done)

    def next_pair(self) -> ArenaPair | None:
        """The first undecided pair not skipped; when only skipped ones are left, the one skipped longest ago."""
        with self._lock:
            open_pairs = [pair for pair in self.pairs if pair.key not in self._done]
            fresh = next((pair for pair in open_pairs if pair.key not in self._skipped), None)
            if fresh is not None or not open_pairs:
                return fresh
            return min(open_pairs, key=lambda pair: self._skipped.index(pair.key))

    def skip(self, token: str) -> None:
        """Put the pair `token` names at the back of this session's queue (nothing is written)."""
        with self._lock:
            pair = self._pair(token)
            if pair.key in self._skipped:
                self._skipped.remove(pair.key)
            self._skipped.append(pair.key)

    def _pair(self, token: str) -> ArenaPair:
        pair = next((p for p in self.pairs if p.token == token), None)
        if pair is None:
            raise KeyError(f"no pair {token!r} in this arena")
        return pair

    def decide(self, token: str, winner: Winner) -> PairwiseLabel:
        """Record the rater's decision on the pair `token` names (A: left, B: right, as shown)."""
        with self._lock:
            pair = self._pair(token)
            if pair.key in self._done:
                raise ValueError("this pair is already decided")
            label = PairwiseLabel(
                prompt_id=pair.left.task_id, model_a=pair.left.model, model_b=pair.right.model, winner=winner,
                rater=self.rater, site_a=pair.left.site_id, site_b=pair.right.site_id,
                decided_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            )
            append_label(self.labels_path, label)
            self._done.add(pair.key)
            return label
