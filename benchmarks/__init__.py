"""Benchmark scripts behind docs/results.md that are not a ``focuscrawl`` command.

Run each from the repository root as ``python -m benchmarks.NAME`` (``--help`` for its options); its docstring
has the command and what it prints. Scripts import each other as ``benchmarks.NAME``. This file imports
nothing: ``scrapy_rate`` runs in an environment without focuscrawl.

adaptive_grid          ``adaptive`` with one option changed, as ``benchmarks.adaptive_grid:NAME`` strategies for bench
classifier_on_web      each reward classifier's precision, recall and AUC on a whole offline web, pages and anchors
checkpoint_cost        CPU time of one engine checkpoint after a crawl of N pages, offline
crawl_hashes           SHA-256 of each strategy's fetched URL sequence, to show that a change alters no crawl
crawl_profile          a crawl's cProfile statistics as CPU per page by component (fetch, parse, store, WARC, ...)
dashboard_overhead     pages/s of the same crawl with and without a polled dashboard
ddqn_update            TRES's Double-DQN update on its own, and a numba kernel of its target
distributed_costs      a distributed crawl's central costs: messages per page, Ray round trips, the lease
distributed_policy_rate  pages/s of ``crawl --workers N`` when the policy bounds it (a 1M-URL frontier, offline)
distributed_quality    AUC/oracle of distributed crawls against the single-process one on an offline web
distributed_rate       pages/s of ``crawl --workers N`` over a loopback-served synthetic web
fetch_rate             pages/s of focuscrawl's fetcher against a loopback-served web (fetch_vs_scrapy.sh: vs Scrapy)
full_crawl_vs_scrapy   the whole polite crawl (policy, store, WARC) of a served 2,000-host web against Scrapy's
gym_actions            which candidates a trained gym agent takes, and what it finds against the first candidate
gym_dqn                Stable-Baselines3's DQN trained in focuscrawl/Crawl-v0 on one topic, saved for ``gym-agent``
gym_steps              steps/s of focuscrawl/Crawl-v0, beside the same crawls by the engine alone
keywords_served        a crawl over HTTP from a topic of a few words against the same crawl from example pages
main_text              Resiliparse, trafilatura and whole-page text: extraction speed and classifier quality
page_encoder_choice    ranking AUC of ways to combine the static vectors with the MiniLM transformer
policy_step_sections   where a TRES step spends its time, by section timers around the policy's methods
rank_probe             ``adaptive`` logging where it ranks one URL (a strategy for distributed_quality), and its table
reward_transfer        whether a reward classifier trained on one university recognises the topic at the others
reward_vs_score        what the agent's reward saw against what the benchmark scored, crawl by crawl
scrapy_rate            the crawl of fetch_rate done by Scrapy (in its own environment)
scrapy_focused         a spider run by focuscrawl.scrapy against focuscrawl crawl and Scrapy's default scheduler
seed_reach             pages each run's seeds can reach, before and after the benchmark's seed rule
served                 a helper, not a benchmark: ``focuscrawl web serve`` in a subprocess, for the served crawls
suite_gaps             where a strategy trails another on a suite's rows, with paired-bootstrap intervals
suite_ratio            two runs of a suite, row by row: a strategy's mean AUC/oracle in one over the other
tres_hosts             TRES's time per decision against the number of hosts, and its host-feature refresh
zero_shot              how well a topic's keywords alone rank a web's pages, before and after self-training

fetch_vs_scrapy.sh runs fetch_rate and scrapy_rate on the same web (``benchmarks/fetch_vs_scrapy.sh [WEB_DIR]``).
"""
