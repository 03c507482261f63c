"""The per-domain cap MAX of TRES section 3.5: at most MAX fetches per web site (host).

Specs: ``inf`` (no cap), an integer (``100``, ``10``, ``5``), or ``A-B`` for an adaptive cap that starts
at A and steps down by one, at equal fractions of the budget, until it reaches B (``5-2`` is the paper's
"5.2": 5 for the first quarter of the budget, then 4, 3 and 2 for the last quarter). The paper names the
schedule without its steps; this even staircase is our reading of it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

_ADAPTIVE = re.compile(r"^\s*(\d+)\s*[-.]\s*(\d+)\s*$")


@dataclass(frozen=True)
class DomainCap:
    start: float
    end: float

    @classmethod
    def parse(cls, spec: str | int | float | None) -> DomainCap:
        if spec is None:
            return cls(math.inf, math.inf)
        if isinstance(spec, (int, float)):
            value = float(spec)
            if value <= 0:
                raise ValueError(f"per-domain cap must be positive, got {spec}")
            return cls(value, value)
        text = str(spec).strip().lower()
        if text in ("", "inf", "infinity", "none", "unlimited"):
            return cls(math.inf, math.inf)
        match = _ADAPTIVE.match(text)
        if match:
            start, end = int(match.group(1)), int(match.group(2))
            if not 0 < end <= start:
                raise ValueError(f"adaptive cap {spec!r} must go down from a positive start, e.g. 5-2")
            return cls(float(start), float(end))
        try:
            return cls.parse(int(text))
        except ValueError:
            raise ValueError(f"bad per-domain cap {spec!r}: use inf, a positive integer, or A-B (e.g. 5-2)") from None

    @property
    def adaptive(self) -> bool:
        return self.start != self.end

    def limit(self, step: int, budget: int) -> float:
        """The cap in force before fetch number ``step`` (0-based) of a ``budget``-step crawl."""
        if not self.adaptive:
            return self.start
        stages = int(self.start - self.end) + 1
        stage = min(stages - 1, step * stages // max(budget, 1))
        return self.start - stage

    def __str__(self) -> str:
        if math.isinf(self.start):
            return "inf"
        if self.adaptive:
            return f"{int(self.start)}-{int(self.end)}"
        return str(int(self.start))
