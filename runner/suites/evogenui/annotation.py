"""EvoGenUI-Bench's codebook for the annotation page's slot mode (runner/validity/annotate.py): the §4.2 dimensions
on Appendix C.1's 1-5 scale and the §6.1 failure mechanisms, in the paper's order."""

from __future__ import annotations

from runner.suites.evogenui.passing import DIMENSIONS, SCORE_RANGE
from runner.suites.evogenui.taxonomy import Mechanism
from runner.validity.labels import Codebook

CODEBOOK = Codebook(dimensions=DIMENSIONS, score_range=SCORE_RANGE,
                    mechanisms=tuple(mechanism.value for mechanism in Mechanism))
