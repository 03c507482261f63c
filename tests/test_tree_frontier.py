"""Tree-Frontier: split arithmetic (equation 4), routing, removal bookkeeping, sampling, determinism."""

from __future__ import annotations

import numpy as np
import pytest

from focuscrawl.strategies.tres.features import bucket
from focuscrawl.strategies.tres.tree_frontier import TreeFrontier


def _tree(n_features=2, seed=0, **kwargs) -> TreeFrontier:
    kwargs.setdefault("min_samples_leaf", 1)
    kwargs.setdefault("min_samples_split", 2)
    return TreeFrontier(n_features, np.random.default_rng(seed), capacity=4, **kwargs)


def _var(values):
    values = np.asarray(values, dtype=float)
    return float(((values - values.mean()) ** 2).mean())


def test_best_split_matches_hand_computed_variance_reduction():
    tree = _tree(max_depth=0)  # depth 0: experiences accumulate without splitting; we query best_split
    samples = [((0.1, 0.0), 0.0), ((0.2, 1.0), 0.0), ((0.3, 0.0), 1.0), ((0.7, 1.0), 1.0), ((0.9, 1.0), 1.0)]
    for x, r in samples:
        tree.add_experience(np.array(x, dtype=np.float32), r)
    tree.max_depth = 18
    gain, feature, threshold = tree.best_split(0)
    # Feature 0 at c = 0.25: L = {0, 0} (var 0), R = {1, 1, 1} (var 0): VR = V(P) = 0.24.
    rewards = [r for _, r in samples]
    assert _var(rewards) == pytest.approx(0.24)
    assert gain == pytest.approx(_var(rewards) - 2 / 5 * _var([0, 0]) - 3 / 5 * _var([1, 1, 1]))
    assert feature == 0 and threshold == pytest.approx(0.25)
    # Feature 1's only split (0 | 1): L = {0, 1}, R = {0, 1, 1}: VR = 0.24 - 2/5*0.25 - 3/5*(2/9)
    only_f1 = _tree(max_depth=0)
    for (a, b), r in samples:
        only_f1.add_experience(np.array([0.5, b], dtype=np.float32), r)
    only_f1.max_depth = 18
    gain1, feature1, threshold1 = only_f1.best_split(0)
    assert feature1 == 1 and threshold1 == pytest.approx(0.5)
    assert gain1 == pytest.approx(0.24 - 2 / 5 * 0.25 - 3 / 5 * (2 / 9))


def test_no_split_without_variance_reduction_or_enough_samples():
    tree = _tree(min_samples_leaf=2)
    for v in (0.1, 0.2, 0.3, 0.4):
        assert not tree.add_experience(np.array([v, 0.0], dtype=np.float32), 1.0)  # constant reward: VR = 0
    assert tree.n_leaves == 1
    small = _tree(min_samples_leaf=3)
    for v, r in ((0.1, 0.0), (0.2, 0.0), (0.8, 1.0), (0.9, 1.0)):
        small.add_experience(np.array([v, 0.0], dtype=np.float32), r)
    assert small.n_leaves == 1, "children would hold fewer than min_samples_leaf experiences"


def test_the_authors_split_rule_five_in_the_parent_any_child():
    """The authors' code (the TRES default): a leaf splits once it holds 5 experience samples, however unequal
    the children; with 4 it waits."""
    samples = [(0.1, 1.0), (0.2, 0.0), (0.3, 0.0), (0.4, 0.0), (0.5, 0.0)]
    tree = TreeFrontier(2, np.random.default_rng(0), capacity=4)  # the defaults: split 5, leaf 1
    splits = [tree.add_experience(np.array([v, 0.0], dtype=np.float32), r) for v, r in samples]
    assert splits == [False, False, False, False, True]
    assert sorted(len(e) for e in tree.leaf_experience.values()) == [1, 4]


def test_split_in_the_receiving_leaf_and_frontier_samples_follow_the_rules():
    tree = _tree()
    tree.add([f"http://a.test/{i}" for i in range(6)],
             np.array([[0.0, 0], [0.1, 1], [0.5, 0], [0.6, 1], [0.9, 0], [1.0, 1]], dtype=np.float32),
             ["a.test"] * 6, [0] * 6)
    tree.add_experience(np.array([0.2, 0.0], dtype=np.float32), 0.0)
    assert tree.add_experience(np.array([0.8, 0.0], dtype=np.float32), 1.0)
    assert tree.n_leaves == 2 and tree.node_feature[0] == 0 and tree.node_threshold[0] == pytest.approx(0.5)
    left, right = tree.node_left[0], tree.node_right[0]
    members = {leaf: sorted(tree.url_of[i] for i in tree.members(leaf).tolist()) for leaf in tree.leaves().tolist()}
    assert members[left] == ["http://a.test/0", "http://a.test/1"]
    assert members[right] == ["http://a.test/2", "http://a.test/3", "http://a.test/4", "http://a.test/5"]
    # New frontier samples are routed by the same rule.
    tree.add(["http://a.test/new"], np.array([[0.49, 0]], dtype=np.float32), ["a.test"], [0])
    assert tree.leaf_of[tree.get("http://a.test/new")] == left
    # The next experience lands in the right leaf and splits it (on feature 1), not the left one.
    assert not tree.add_experience(np.array([0.8, 0.0], dtype=np.float32), 1.0)  # no variance yet
    assert tree.add_experience(np.array([0.8, 1.0], dtype=np.float32), 0.0)
    assert tree.node_feature[right] == 1 and tree.node_feature[left] == -1
    tree.check()


def test_removal_keeps_every_index_consistent():
    rng = np.random.default_rng(3)
    tree = _tree(n_features=3, seed=3)
    urls = [f"http://h{i % 7}.test/p{i}" for i in range(500)]
    tree.add(urls, rng.random((500, 3), dtype=np.float32), [u.split("/")[2] for u in urls], list(range(500)))
    for _ in range(200):
        x = rng.random(3, dtype=np.float32)
        tree.add_experience(x, float(x[0] > 0.5))
    assert tree.n_leaves > 1
    tree.check()
    for url in urls[::3]:
        assert tree.remove(url)
    assert not tree.remove(urls[0])
    tree.check()
    removed = tree.remove_host("h2.test")
    assert removed == sum(1 for i, u in enumerate(urls) if i % 3 and i % 7 == 2)
    assert not any(u.startswith("http://h2.test/") for u in tree.id_of_url)
    tree.check()
    # Freed rows are reused: adding as many URLs again does not grow the store.
    capacity = len(tree.leaf_of)
    more = [f"http://h9.test/q{i}" for i in range(len(urls) - len(tree))]
    tree.add(more, rng.random((len(more), 3), dtype=np.float32), ["h9.test"] * len(more), [0] * len(more))
    assert len(tree.leaf_of) == capacity
    tree.check()


def test_update_host_reroutes_changed_samples():
    tree = _tree()
    tree.add(["http://a.test/1", "http://b.test/1"], np.array([[0.2, 0.0], [0.2, 0.0]], dtype=np.float32),
             ["a.test", "b.test"], [0, 0])
    tree.add_experience(np.array([0.1, 0.0], dtype=np.float32), 0.0)
    tree.add_experience(np.array([0.1, 1.0], dtype=np.float32), 1.0)
    assert tree.node_feature[0] == 1
    moved = tree.update_host("a.test", slice(1, 2), [1.0])
    assert moved == 1
    assert tree.leaf_of[tree.get("http://a.test/1")] == tree.node_right[0]
    assert tree.leaf_of[tree.get("http://b.test/1")] == tree.node_left[0]
    tree.check()


def test_one_representative_per_nonempty_leaf_and_determinism():
    def build(seed):
        rng = np.random.default_rng(11)
        tree = _tree(n_features=2, seed=seed)
        urls = [f"http://a.test/{i}" for i in range(300)]
        tree.add(urls, rng.random((300, 2), dtype=np.float32), ["a.test"] * 300, [0] * 300)
        for _ in range(120):
            x = rng.random(2, dtype=np.float32)
            tree.add_experience(x, float(x[1] > 0.3))
        return tree

    tree = build(5)
    reps = tree.representatives()
    nonempty = [leaf for leaf in tree.leaves().tolist() if tree.members(leaf).size]
    assert len(reps) == len(nonempty) and sorted(tree.leaf_of[reps].tolist()) == sorted(nonempty)
    assert len(set(reps.tolist())) == len(reps)
    again = build(5)
    assert again.representatives().tolist() == reps.tolist()
    assert [again.random_sample() for _ in range(5)] == [tree.random_sample() for _ in range(5)]
    assert again.node_threshold == tree.node_threshold


def test_small_and_batched_routing_agree_on_a_deep_tree():
    rng = np.random.default_rng(3)
    tree = _tree(n_features=3, seed=1)
    for _ in range(400):
        x = rng.random(3, dtype=np.float32)
        tree.add_experience(x, float(x[0] + 0.5 * x[2] > 0.7) + float(x[1] > 0.5))
    assert tree.n_leaves > 8
    X = rng.random((500, 3), dtype=np.float32)
    X[:50] = np.asarray(tree.node_threshold[:50] * 3, dtype=np.float32).reshape(50, 3)  # rows on thresholds
    batched = tree.route(X)  # more rows than SMALL_BATCH: level-by-level numpy descent
    one_by_one = np.concatenate([tree.route(X[i:i + 7]) for i in range(0, len(X), 7)])
    assert batched.tolist() == one_by_one.tolist() == [tree.route_one(x) for x in X]


def test_bucketing():
    assert bucket([0.0, 0.05, 0.1, 0.29999, 0.3, 2 / 3, 0.99, 1.0]).tolist() == pytest.approx(
        [0.0, 0.01, 0.1, 0.2, 0.3, 0.6, 0.9, 1.0])


def test_leaf_blocks_survive_churn_growth_and_compaction():
    """Inserts, removals, host re-routing and splits in random order: every index stays consistent and the
    id pool is compacted instead of growing without bound."""
    rng = np.random.default_rng(11)
    tree = _tree(n_features=3, seed=2, min_samples_leaf=2)
    hosts = [f"h{k}.test" for k in range(7)]
    live: set[str] = set()
    counter = 0
    for step in range(600):
        n = int(rng.integers(0, 12))
        urls = [f"http://x.test/{counter + k}" for k in range(n)]
        counter += n
        tree.add(urls, rng.random((n, 3), dtype=np.float32), [hosts[int(h)] for h in rng.integers(0, 7, n)], [0] * n)
        live.update(urls)
        for url in rng.choice(sorted(live), size=min(len(live), int(rng.integers(0, 8))), replace=False).tolist():
            assert tree.remove(url)
            live.discard(url)
        x = rng.random(3, dtype=np.float32)
        tree.add_experience(x, float(rng.random() < x[0]))
        if step % 10 == 0:
            tree.update_host(hosts[int(rng.integers(0, 7))], slice(2, 3), [float(rng.random())])
        if step % 50 == 0:
            tree.check()
            reps = tree.representatives()
            assert all(tree.url_of[i] in live for i in reps.tolist())
    tree.check()
    assert tree.splits > 10 and len(tree) == len(live)
    assert tree.pool_end <= 4 * len(tree) + 64 * tree.n_leaves  # garbage is reclaimed


def test_a_restored_frontier_drops_a_host_as_the_live_one():
    """A set's iteration order depends on its history, and a set restored from a checkpoint (pickle) has
    another history: removing a capped host's samples must not follow it, or a resumed crawl diverges."""
    import pickle

    tree = _tree()
    urls = [f"http://a/{i}" for i in range(300)] + ["http://b/0"]
    tree.add(urls, np.random.default_rng(1).random((len(urls), 2)), ["a"] * 300 + ["b"], [0] * len(urls))
    for i in range(300):
        if i not in (3, 17, 260):
            tree.remove(f"http://a/{i}")
    restored = pickle.loads(pickle.dumps(tree))
    tree.remove_host("a")
    restored.remove_host("a")
    assert tree.free == restored.free
    more = [f"http://c/{i}" for i in range(5)]
    for t in (tree, restored):
        t.add(more, np.full((5, 2), 0.5), ["c"] * 5, [0] * 5)
    assert [tree.get(u) for u in more] == [restored.get(u) for u in more]
