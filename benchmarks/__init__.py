"""Benchmark scripts behind docs/results.md that are not a ``focuscrawl`` command.

Run each from the repository root as ``python -m benchmarks.NAME`` (``--help`` for its options); its docstring
has the command and what it prints. Scripts import each other as ``benchmarks.NAME``. This file imports
nothing: ``scrapy_rate`` runs in an environment without focuscrawl.

adaptive_grid          ``adaptive`` with one option changed, as ``benchmarks.adaptive_grid:NAME`` strategies for bench
barren_hosts           the largest share of a crawl one host took that holds no relevant page (issue 43's capture)
checkpoint_cost        CPU time of one engine checkpoint after a crawl of N pages, offline
classifier_on_web      each reward classifier's precision, recall and AUC on a whole offline web, pages and anchors
crawl_hashes           SHA-256 of each strategy's fetched URL sequence, to show that a change alters no crawl
crawl_probe            a look inside single crawls of one suite row: what each fetched, where, what ``adaptive`` learned
crawl_profile          a crawl's cProfile statistics as CPU per page by component (fetch, parse, store, WARC, ...)
crawl_seed_spread      how far one suite row's figure moves by the crawl's own seed alone, defences on and off
dashboard_overhead     pages/s of the same crawl with and without a polled dashboard
ddqn_update            TRES's Double-DQN update on its own, and a numba kernel of its target
defences_cost          CPU time the engine's defences cost an offline crawl, on and off, interleaved
defences_halves        the defences by half on both test beds, real web software and the messy suite, with the targets
defences_on_clean      whether the URL-alias and link-farm defences can act on a clean web at all
defences_parts         what each part of the engine's defences costs a page, measured alone
distributed_costs      a distributed crawl's central costs: messages per page, Ray round trips, the lease
distributed_policy_rate  pages/s of ``crawl --workers N`` when the policy bounds it (a 1M-URL frontier, offline)
distributed_quality    AUC/oracle of distributed crawls against the single-process one on an offline web
distributed_rate       pages/s of ``crawl --workers N`` over a loopback-served synthetic web
distributed_relay      what a distributed crawl costs centrally per N, two source trees interleaved
export_language        the corpus export's language identifier: Resiliparse's against py3langid
export_speed           what a corpus export costs: seconds per 10,000 pages and the size it writes
fetch_rate             pages/s of focuscrawl's fetcher against a loopback-served web (fetch_vs_scrapy.sh: vs Scrapy)
full_crawl_vs_scrapy   the whole polite crawl (policy, store, WARC) of a served 2,000-host web against Scrapy's
gym_actions            which candidates a trained gym agent takes, and what it finds against the first candidate
gym_dqn                Stable-Baselines3's DQN trained in focuscrawl/Crawl-v0 on one topic, saved for ``gym-agent``
gym_steps              steps/s of focuscrawl/Crawl-v0, beside the same crawls by the engine alone
judge_calibration      the crawl's judge against the labels of the pages a crawl fetched: reliability, ECE, P/R at 0.5
judge_recalibration    label-free recalibrations, self-training and a sentence-vector judge, scored against labels
keywords_served        a crawl over HTTP from a topic of a few words against the same crawl from example pages
link_evidence_speed    per-link cost of ``adaptive``'s evidence for a page's new links, link by link or per page
main_text              Resiliparse, trafilatura and whole-page text: extraction speed and classifier quality
mess_table             the dev suite on its messy version against the clean one, with and without the defences
page_encoder_choice    ranking AUC of ways to combine the static vectors with the MiniLM transformer
policy_step_sections   where a TRES step spends its time, by section timers around the policy's methods
politeness_ip          what one server gets from a crawl under ``--politeness host`` and ``--politeness ip``
rank_probe             ``adaptive`` logging where it ranks one URL (a strategy for distributed_quality), and its table
render_cost            what ``--render auto`` finds and costs on a served messy web
reward_transfer        whether a reward classifier trained on one university recognises the topic at the others
reward_vs_score        what the agent's reward saw against what the benchmark scored, crawl by crawl
row_args               a helper, not a benchmark: the command line of a benchmark of one suite row
scrapy_focused         a spider run by focuscrawl.scrapy against focuscrawl crawl and Scrapy's default scheduler
scrapy_rate            the crawl of fetch_rate done by Scrapy (in its own environment)
seed_reach             pages each run's seeds can reach, before and after the benchmark's seed rule
served                 a helper, not a benchmark: ``focuscrawl web serve`` in a subprocess, for the served crawls
served_mess            a served messy web crawled by focuscrawl's strategies, by Scrapy and by Crawl4AI
served_repeat          the same crawl of a served web repeated, to see how far its runs swing
soft404_probes         what the soft-404 defence's probing rule costs on clean webs and catches on messy ones
suite_gaps             where a strategy trails another on a suite's rows, with paired-bootstrap intervals
suite_merge            a suite's table with one strategy's rows taken from other runs of it (a changed default)
suite_ratio            two runs of a suite, row by row: a strategy's mean AUC/oracle in one over the other
testbed                crawls of a test bed of real web applications over HTTP, and what each spent on each kind of URL
tres_hosts             TRES's time per decision against the number of hosts, and its host-feature refresh
zero_shot              how well a topic's keywords alone rank a web's pages, before and after self-training

fetch_vs_scrapy.sh runs fetch_rate and scrapy_rate on the same web (``benchmarks/fetch_vs_scrapy.sh [WEB_DIR]``).
"""
