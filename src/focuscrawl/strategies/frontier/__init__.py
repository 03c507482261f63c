"""Frontier code more than one strategy family uses, so that no family reads another's internals.

    graph         the crawled graph: URL ids, the frontier, Gouriten et al.'s neighbourhood sums
    ranking       the argmax of a score over the frontier, by a lazily invalidated heap
    link_context  the text around a link on its page
    spill         per-URL data written once and rarely read (URL strings, hashed words), moved to disk
                  past a threshold

``gouriten`` and ``adaptive`` build on all three. A family imports from here and from the layers below,
never from another family (tests/test_layers.py). It stays inside the strategies layer rather than below it:
only strategies keep a frontier (the engine counts URLs, it does not rank them), and CrawlGraph's sums are
evidence of a strategy's making, not a shared value type.
"""
