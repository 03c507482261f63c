"""A crawl leaves the process as it found it: state one crawl changes must not change the next one's figures.

A suite runs many crawls in one interpreter; TRES once limited BLAS to one thread for the whole process, and a
logistic regression fitted later got other coefficients (by ~1e-15, enough to change a crawl's figures)."""

from __future__ import annotations

from conftest import tiny_crawl
from threadpoolctl import threadpool_info


def _blas_threads() -> dict[str, int]:
    return {lib["filepath"]: lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}


def test_tres_gives_blas_its_threads_back(tiny_web):
    before = _blas_threads()
    crawl, events, web = tiny_crawl(tiny_web, "tres", 20, explore_steps=3, batch_size=8)
    crawl.engine.run(web)
    assert len(events) == 20
    assert _blas_threads() == before


def test_tres_trains_on_one_blas_thread(tiny_web, monkeypatch):
    from focuscrawl.strategies.tres.ddqn import DDQN

    seen = []
    train = DDQN.step

    def step(self):
        seen.append(set(_blas_threads().values()))
        return train(self)

    monkeypatch.setattr(DDQN, "step", step)
    crawl, events, web = tiny_crawl(tiny_web, "tres", 12, explore_steps=3, batch_size=8)
    crawl.engine.run(web)
    assert len(seen) == 12 and all(threads == {1} for threads in seen)
