"""Where `adaptive` ranks one URL when it learns of another page: a probe strategy for diagnosing a crawl.

    python -m benchmarks.distributed_quality webs/webkb student --seeds 10 --budget 1000 \
        --strategy benchmarks.rank_probe:RankProbe --runs "0 4" --protocol-runs 2 --crawl-seeds 0,1,2 --out DIR \
        -s 'options={"benchmarks.rank_probe:RankProbe": {log: DIR/probe.jsonl}}'
    python -m benchmarks.rank_probe DIR/probe.jsonl

(From the repository root, which ``python -m`` puts on the path, the Ray shards' too. The option is given as
a mapping because the strategy's name has a dot: ``-s options.benchmarks.rank_probe:RankProbe.log=...`` would
be read as keys ``benchmarks`` > ``rank_probe:RankProbe`` > ``log`` and miss it.)

`RankProbe` is `adaptive` with its default options, crawling exactly as `adaptive` does; after each page whose
URL is ``after`` (default: Texas's page of personal pages, which links the graduate students' index), it
appends to ``log`` one JSON line: the pages this process (or shard) has fetched, the model's prediction for
``target`` (default: that index, www.cs.utexas.edu/docs/grad.html) and how many frontier URLs it ranks above
it, the model's weights and the evidence of ``target`` and of the three best-ranked URLs. In a distributed
crawl each shard owning ``after`` writes its own line. Run as a script, it prints the log as a table.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

from focuscrawl.strategies.adaptive import EVIDENCE, AdaptivePolicy
from focuscrawl.types import Observation


class RankProbe(AdaptivePolicy):
    def __init__(self, *, target: str = "http://www.cs.utexas.edu/docs/grad.html",
                 after: str = "http://www.cs.utexas.edu/docs/personal.html", log: str = "rank-probe.jsonl"):
        super().__init__()
        self.target, self.after, self.log = target, after, log

    def observe(self, observation: Observation) -> None:
        super().observe(observation)
        graph = self.graph
        if observation.url != self.after or self.target not in graph.ids:
            return
        frontier = graph.frontier()
        predictions = self._predict(frontier)
        i = graph.ids[self.target]
        mine = float(self._predict(np.array([i]))[0])

        def evidence(j: int) -> dict[str, float]:
            return {name: round(float(v), 3) for name, v in zip(EVIDENCE, self.evidence.rows(np.array([j]))[0])}

        record = {"pid": os.getpid(), "fetched": self.hosts.fetched_total,
                  "crawl_fetched": self.hosts.fetched_total + self.hosts.others_fetched, "frontier": len(frontier),
                  "prediction": round(mine, 4), "ranked_above": int((predictions > mine).sum()),
                  "weights": {name: round(float(w), 3) for name, w in zip([*EVIDENCE, "bias"], self.model.w)},
                  "evidence": evidence(i),
                  "top": [{"url": graph.urls[j], "prediction": round(float(p), 4), "evidence": evidence(j)}
                          for j, p in zip(frontier[np.argsort(-predictions)[:3]].tolist(),
                                          np.sort(predictions)[::-1][:3].tolist())]}
        with open(self.log, "a") as f:
            f.write(json.dumps(record) + "\n")


def main() -> None:
    for line in open(sys.argv[1]):
        r = json.loads(line)
        print(f"fetched {r['fetched']} (crawl {r['crawl_fetched']}), frontier {r['frontier']}: target predicted "
              f"{r['prediction']:.3f}, {r['ranked_above']} URLs above it")
        print("   weights  " + " ".join(f"{k} {v:+.2f}" for k, v in r["weights"].items()))
        print("   target   " + " ".join(f"{k} {v:.2f}" for k, v in r["evidence"].items()))
        for t in r["top"]:
            print(f"   {t['prediction']:.3f} {t['url']}")
            print("            " + " ".join(f"{k} {v:.2f}" for k, v in t["evidence"].items()))


if __name__ == "__main__":
    main()
