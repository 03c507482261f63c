"""Learning across the shards of a distributed crawl: what each shard learned, pooled, loaded back.

Pooled, not averaged: what each shard learned since the last pooling is added up, so that every shard continues
from the model one learner would have after all shards' samples. The evidence model's samples add up exactly in
least squares' information form; the link model's SGD steps are added as the sum of each shard's weight change
(as if the shards' steps had been taken one after another). Only the link weights a shard changed travel (a few
thousand of 2^18 between rounds), with the reference's value at each, and only the weights some shard changed
come back: the same pooled model as sending the whole vectors, at a fraction of the bytes. Rounds are numbered,
so a shard that missed one (it died while it was loaded) is brought up to date by the driver re-sending it, in
order.

A *reference* is what every shard started from at the last pooling (``unpooled`` before the first): the pooled
statistics, the link model, the round's number and the evidence model's sample count then.
"""

from __future__ import annotations

import numpy as np

from focuscrawl.strategies.adaptive.models import OnlineLeastSquares, OnlineLogistic

Parameters = dict[str, np.ndarray]


def unpooled(prior: np.ndarray, strength: float, forget: float, link_weights: int) -> Parameters:
    """The reference before any pooling: the prior, and an untrained link model."""
    information = np.eye(len(prior)) * strength
    return {"information": information, "moment": information @ prior, "link_w": np.zeros(link_weights),
            "link_bias": np.zeros(1), "link_trained": np.zeros(1), "forget": np.array([forget]),
            "samples": np.zeros(1), "round": np.zeros(1, dtype=np.int64)}


def changes(model: OnlineLeastSquares, link_model: OnlineLogistic, reference: Parameters,
            fetched: int) -> Parameters:
    """What a shard learned since ``reference``, and what it started from: the evidence model's statistics whole
    (a few numbers), the link weights it changed as indices and values; ``fetched``, its pages so far."""
    information, moment = model.statistics()
    since = model.samples - reference["samples"][0]
    decay = model.forget ** since  # what forgetting did to the reference while this shard learned
    ref_w = reference["link_w"]
    changed = np.flatnonzero(link_model.w != ref_w)  # the weights its SGD steps touched
    return {"information": information - decay * reference["information"],
            "moment": moment - decay * reference["moment"],
            "since": np.array([since]), "round": np.array([int(reference["round"][0])]),
            "link_index": changed.astype(np.int32), "link_change": link_model.w[changed] - ref_w[changed],
            "link_bias": np.array([link_model.bias - reference["link_bias"][0]]),
            "link_trained": np.array([link_model.trained - reference["link_trained"][0]]),
            "fetched": np.array([fetched]),
            "ref_link_value": ref_w[changed],
            **{f"ref_{name}": reference[name] for name in ("information", "moment", "link_bias", "link_trained",
                                                            "forget")}}


def combine(shared: list[tuple[int, Parameters]]) -> Parameters:
    """The shards' ``changes`` added to their common reference (the last pooling's result): the evidence model
    whole, the link weights at the indices some shard changed (``link_index``, ``link_value``)."""
    reported = [p for _, p in shared]
    latest = max(int(p["round"][0]) for p in reported)
    # the reference of the latest round (a shard that missed a round reports an older one)
    base = next(p for p in reported if int(p["round"][0]) == latest)
    ref = {name[4:]: value for name, value in base.items() if name.startswith("ref_")}
    total = sum(int(p["since"][0]) for p in reported)
    forget = float(ref["forget"][0])
    index = np.unique(np.concatenate([p["link_index"] for p in reported]))
    value = np.zeros(len(index))
    for p in sorted(reported, key=lambda p: int(p["round"][0])):  # the latest round's reference values last
        value[np.searchsorted(index, p["link_index"])] = p["ref_link_value"]
    change = np.zeros(len(index))
    for p in reported:  # in the shards' order, as the dense sum adds them
        change[np.searchsorted(index, p["link_index"])] += p["link_change"]
    return {"information": forget ** total * ref["information"] + sum(p["information"] for p in reported),
            "moment": forget ** total * ref["moment"] + sum(p["moment"] for p in reported),
            "link_index": index.astype(np.int32), "link_value": value + change,
            "link_bias": ref["link_bias"] + sum(p["link_bias"] for p in reported),
            "link_trained": ref["link_trained"] + sum(p["link_trained"] for p in reported),
            "fetched": sum(p["fetched"] for p in reported),
            "forget": ref["forget"], "round": np.array([latest + 1])}


def load(pooled: Parameters, model: OnlineLeastSquares, link_model: OnlineLogistic,
         reference: Parameters) -> Parameters:
    """Set both models to ``combine``'s result, ``pooled``; the new reference, from which the shard's sample count
    restarts. ``reference`` (the last one) is updated in place: it is the policy's own copy."""
    model.set_statistics(pooled["information"], pooled["moment"])
    if "link_w" in pooled:  # a whole vector: a round in an operation log written when they were sent whole
        ref_w = np.array(pooled["link_w"], dtype=np.float64)
    else:
        ref_w = reference["link_w"]
        ref_w[pooled["link_index"]] = pooled["link_value"]
    # what this shard learned since reporting is overwritten, as a whole vector would: every weight the
    # reference's, which differ from the last reference only where some shard changed them
    link_model.w = ref_w.copy()
    link_model.bias = float(pooled["link_bias"][0])
    link_model.trained = int(pooled["link_trained"][0])
    small = {k: np.array(v, copy=True) for k, v in pooled.items() if k not in ("link_w", "link_index", "link_value")}
    return {**small, "link_w": ref_w, "round": np.array([int(pooled.get("round", [0])[0])]),
            "samples": np.array([model.samples])}
