"""The dashboard's HTML: the crawl page (its panels are re-sent by the JSON endpoint), a page's text, the
bench page and the suite page. Everything a crawl brought back (titles, URLs, reasons, text) is escaped.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from html import escape
from typing import Any
from urllib.parse import urlsplit

from focuscrawl.dashboard.assets import CSS, JS
from focuscrawl.dashboard.charts import Line, colour, line_chart, nice_ceiling, settled_max, strip_chart

Link = Callable[[str], str]  # a path -> the same path with the token the page was opened with


# -- small formatting helpers ----------------------------------------------------------------------------
def num(value: Any, fmt: str = "{:,}") -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    try:
        return fmt.format(value)
    except (ValueError, TypeError):
        return escape(str(value))


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    seconds = max(0.0, float(seconds))
    if seconds < 60:
        return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def clock(timestamp: float | None) -> str:
    return "–" if not timestamp else time.strftime("%H:%M:%S", time.localtime(timestamp))


def outbound(url: str, text: str | None = None) -> str:
    """A link to a crawled URL: http(s) only, no referrer (the token must not travel with it)."""
    label = escape(text if text is not None else url)
    if urlsplit(url).scheme not in ("http", "https"):
        return label
    return f'<a href="{escape(url)}" rel="noopener noreferrer nofollow" target="_blank">{label}</a>'


def document(title: str, body: str, *, nonce: str, api: str = "", status: str = "", steps: int | None = None,
             kind: str = "") -> str:
    attrs = f' data-kind="{escape(kind)}"' if kind else ""
    if api:
        attrs += f' data-api="{escape(api)}" data-status="{escape(status)}" data-polls="0"'
    if steps is not None:
        attrs += f' data-steps="{steps}"'
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta name="referrer" content="no-referrer"><title>{escape(title)}</title>'
            f'<style nonce="{nonce}">{CSS}</style></head><body{attrs}>{body}'
            f'<script nonce="{nonce}">{JS}</script></body></html>')


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, numeric: Sequence[int] = (), cls: str = "",
          row_classes: Sequence[str] | None = None) -> str:
    head = "".join(f'<th class="n">{escape(h)}</th>' if i in numeric else f"<th>{escape(h)}</th>"
                   for i, h in enumerate(headers))
    body = []
    for r, row in enumerate(rows):
        rc = f' class="{row_classes[r]}"' if row_classes and row_classes[r] else ""
        body.append(f"<tr{rc}>" + "".join(f'<td class="n">{cell}</td>' if i in numeric else f"<td>{cell}</td>"
                                          for i, cell in enumerate(row)) + "</tr>")
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


# -- the crawl page ----------------------------------------------------------------------------------------
STATUS_TEXT = {
    "running": "running", "starting": "starting", "finished": "finished", "interrupted": "interrupted",
    "stopped": "stopped (killed?)", "waiting": "waiting for a crawl",
}


def crawl_title(snap: dict) -> str:
    return f"{snap['totals']['steps']:,} pages · {snap['name']} · focuscrawl"


def crawl_fragments(snap: dict, link: Link) -> dict[str, str]:
    """The crawl page's panels by element id; the page polls them (``/api/run?fragments=1``)."""
    return {"head": _head(snap), "kpis": _kpis(snap), "charts": _charts(snap), "problems": _problems(snap, link),
            "busiest": _busiest(snap), "relevant-hosts": _relevant_hosts(snap), "latest": _latest(snap, link)}


def crawl_page(snap: dict, link: Link, *, nonce: str) -> str:
    parts = crawl_fragments(snap, link)
    body = (f'<header id="head">{parts["head"]}</header><main>'
            f'<section id="kpis" class="kpis">{parts["kpis"]}</section>'
            f'<section id="charts" class="grid2">{parts["charts"]}</section>'
            f'<section class="grid3"><div id="problems" class="panel">{parts["problems"]}</div>'
            f'<div id="busiest" class="panel">{parts["busiest"]}</div>'
            f'<div id="relevant-hosts" class="panel">{parts["relevant-hosts"]}</div></section>'
            f'<section id="latest" class="panel latest">{parts["latest"]}</section></main>'
            f'<footer>focuscrawl dashboard · read-only · {escape(snap["folder"])} · '
            f'<a href="{link("/api/run")}">JSON</a></footer>')
    return document(crawl_title(snap), body, nonce=nonce, api=link("/api/run").split("?")[0],
                    status=snap["status"], steps=snap["totals"]["steps"], kind="crawl")


def _head(snap: dict) -> str:
    status = snap["status"]
    bits = [f"strategy <b>{escape(str(snap['strategy'] or '?'))}</b>"]
    if snap.get("topic"):
        bits.append(f"topic {escape(str(snap['topic']).rstrip('/').rsplit('/', 1)[-1])}")
    if snap.get("budget"):
        bits.append(f"budget {num(snap['budget'])}")
    bits.append(f"crawling {escape(str(snap['source']))}")
    if snap.get("created"):
        bits.append(f"started {time.strftime('%Y-%m-%d %H:%M', time.localtime(snap['created']))}")
    bits.append(f"updated {clock(snap['now'])}")
    warn = f'<div class="sub err">{escape(snap["read_error"])}</div>' if snap.get("read_error") else ""
    return (f'<h1>focuscrawl · {escape(snap["name"])} <span class="badge {status}" id="status">'
            f'{escape(STATUS_TEXT.get(status, status))}</span></h1><div class="sub">{" · ".join(bits)}</div>{warn}')


def _kpi(key: str, value: str, sub: str = "", bar: float | None = None) -> str:
    bar_html = (f'<div class="bar"><span style="width:{max(0.0, min(bar, 1.0)) * 100:.1f}%"></span></div>'
                if bar is not None else "")
    return (f'<div class="kpi"><div class="k">{key}</div><div class="v">{value}</div><div class="s">{sub}</div>'
            f"{bar_html}</div>")


def _kpis(snap: dict) -> str:
    t = snap["totals"]
    budget = snap.get("budget")
    live = snap["status"] in ("running", "starting")
    last = (f"last page {duration(t['since_last_s'])} ago" if live and t["since_last_s"] is not None
            else f"last page {clock(t['last_fetch'])}")
    return "".join([
        _kpi("pages", num(t["steps"]), f"of {num(budget)} budget" if budget else "", t["steps"] / budget
             if budget else None),
        _kpi("relevant", num(t["relevant"]), f"harvest rate {t['harvest_rate']:.3f} · last {min(t['steps'], 100)}: "
             f"{t['recent_harvest_rate']:.3f}"),
        _kpi("relevant domains", num(t["relevant_domains"]), f"of {num(t['hosts'])} hosts fetched"),
        _kpi("frontier", num(t["frontier_size"]), "URLs waiting"),
        _kpi("pages/s", f"{t['pages_per_s']:.1f}", f"{last} · crawl time {duration(t['crawl_s'])}"),
        _kpi("errors", f'<span class="{"err" if t["errors"] else ""}">{num(t["errors"])}</span>',
             f"{t['error_rate'] * 100:.1f}% of pages"),
    ])


def _charts(snap: dict) -> str:
    s = snap["series"]
    x = s["fetched"]
    rate_x = [xi for xi, v in zip(x, s["pages_per_s"]) if v is not None]
    rate_y = [v for v in s["pages_per_s"] if v is not None]
    # Scales fitted to the crawl once it settles: its first pages swing (harvest 1.0 after one page).
    harvest_top = settled_max(x, [max(a, b) for a, b in zip(s["harvest_rate"], s["recent_harvest_rate"])])
    harvest_max = 1.0 if harvest_top is None else min(1.0, nice_ceiling(harvest_top * 1.1))
    rate_top = settled_max(rate_x, rate_y)
    rate_max = None if rate_top is None else nice_ceiling(rate_top * 1.1)
    charts = [
        line_chart([Line("relevant pages", x, s["relevant"], colour(0)),
                    Line("relevant domains (right)", x, s["relevant_domains"], colour(2), axis="right")],
                   title="Relevant pages and relevant domains", x_label="pages fetched", y_label="relevant pages",
                   right_label="relevant domains", chart_id="chart-relevant"),
        line_chart([Line("harvest rate", x, s["harvest_rate"], colour(1)),
                    Line(f"last {100} pages", x, s["recent_harvest_rate"], colour(1), width=1.0, opacity=0.45)],
                   title="Harvest rate", x_label="pages fetched", y_label="relevant / fetched", y_max=harvest_max,
                   chart_id="chart-harvest"),
        line_chart([Line("frontier size", x, s["frontier_size"], colour(4))], title="Frontier",
                   x_label="pages fetched", y_label="URLs in the frontier", chart_id="chart-frontier"),
        line_chart([Line("pages/s", rate_x, rate_y, colour(9))], title="Fetch rate", x_label="pages fetched",
                   y_label="pages per second", y_max=rate_max, chart_id="chart-rate"),
    ]
    return "".join(f'<div class="panel">{chart}</div>' for chart in charts)


def _page_link(link: Link, step: int, text: str) -> str:
    return f'<a href="{link(f"/page/{step}")}">{text}</a>'


def _problems(snap: dict, link: Link) -> str:
    t = snap["totals"]
    problems = snap["problems"]
    if not problems:
        return "<h2>Errors by kind</h2><p class=\"note\">no errors so far</p>" + _defences(snap, link)
    rows = []
    for p in problems:
        share = p["count"] / t["steps"] if t["steps"] else 0.0
        kind = escape(p["kind"]) + ("" if p["error"] else ' <span class="note">(not an error)</span>')
        example = _page_link(link, p["last_step"], f"step {p['last_step']}")
        detail = escape((p.get("last_message") or p.get("last_url") or "")[:90])
        rows.append([f'<span class="{"err" if p["error"] else ""}">{kind}</span>', num(p["count"]),
                     f"{share * 100:.1f}%", f'{example} <span class="url">{detail}</span>'])
    return ("<h2>Errors by kind</h2>" + table(["kind", "pages", "share", "latest"], rows, numeric=(1, 2))
            + f'<p class="note">{num(t["errors"])} errors: HTTP status &ge; 400, robots.txt, refused addresses '
              "and URLs, timeouts and failed connections</p>" + _defences(snap, link))


def _defences(snap: dict, link: Link) -> str:
    """What the engine's defences caught: pages fetched and given no reward, URLs kept out of the frontier."""
    caught = snap.get("defences") or []
    if not caught:
        return "<h2>Caught by the defences</h2><p class=\"note\">nothing so far</p>"
    rows = []
    for d in caught:
        latest = _page_link(link, d["last_step"], f"step {d['last_step']}") if "last_step" in d else "–"
        detail = escape((d.get("last_verdict") or d.get("last_url") or "")[:90])
        rows.append([escape(d["kind"]), num(d["pages"]), num(d["skipped"]),
                     f'{latest} <span class="url">{detail}</span>'])
    return ("<h2>Caught by the defences</h2>" + table(["why", "pages", "URLs skipped", "latest"], rows,
                                                     numeric=(1, 2))
            + '<p class="note">pages: fetched, then given no reward and no links; URLs skipped: kept out of the '
              "frontier, each listed in pages.jsonl with the step that skipped it</p>")


def _host_rows(rows: list[dict], key: str) -> list[list[str]]:
    top = max((r[key] for r in rows), default=1) or 1
    return [[escape(r["host"]),
             f'<span class="cellbar" style="width:{36 * r[key] / top:.0f}px"></span>{num(r[key])}',
             num(r["relevant"] if key == "pages" else r["pages"]), f"{r['harvest_rate']:.2f}",
             f'<span class="{"err" if r["errors"] else ""}">{num(r["errors"])}</span>'] for r in rows]


def _busiest(snap: dict) -> str:
    rows = snap["hosts"]["busiest"]
    body = table(["host", "pages", "relevant", "harvest", "errors"], _host_rows(rows, "pages"),
                 numeric=(1, 2, 3, 4)) if rows else '<p class="note">none yet</p>'
    return f"<h2>Busiest hosts</h2>{body}"


def _relevant_hosts(snap: dict) -> str:
    rows = snap["hosts"]["most_relevant"]
    body = table(["host", "relevant", "pages", "harvest", "errors"], _host_rows(rows, "relevant"),
                 numeric=(1, 2, 3, 4)) if rows else '<p class="note">no relevant page yet</p>'
    return f"<h2>Most relevant hosts</h2>{body}"


def _relevance(value: float, reward: float | None) -> str:
    # coloured by the crawl's own verdict (a reward, as harvest.csv counts it), not by 0.5: a calibrated judge
    # decides where its threshold lies (types.decision_point), often below 0.5
    return f'<span class="rel {"hi" if (reward or 0) > 0 else "lo"}">{value:.2f}</span>'


def _latest(snap: dict, link: Link) -> str:
    rows = []
    for p in snap["latest"]:
        title = escape(p["title"] or "(no title)")
        status = (f'<span class="err">{p["status"] or "–"}</span>' if p["problem"] and (p["status"] == 0 or
                                                                                          p["status"] >= 400)
                  else str(p["status"]))
        problem = f'<div class="url err">{escape(p["error"][:120])}</div>' if p["error"] else ""
        if p.get("verdict"):
            problem += f'<div class="url err">{escape(p["verdict"][:120])}</div>'
        rows.append([
            num(p["step"]), clock(p["fetched_at"]),
            f'<div class="title">{_page_link(link, p["step"], title)}</div>'
            f'<div class="url">{outbound(p["url"])}</div>{problem}',
            _relevance(p["relevance"], p["reward"]), "–" if p["score"] is None else f"{p['score']:.3g}",
            escape(p["reason"] or "–"), num(p["depth"]), status,
        ])
    body = table(["step", "time", "page (its text as the crawler saw it)", "relevance", "score",
                  "why it was chosen", "depth", "status"], rows, numeric=(0, 3, 4, 6)) if rows else \
        '<p class="note">no page fetched yet</p>'
    return f"<h2>Latest pages</h2>{body}"


# -- one page's text -------------------------------------------------------------------------------------------
def page_view(record: dict, link: Link, *, nonce: str, parent_step: int | None, last_step: int) -> str:
    step = record["step"]
    nav = [f'<a href="{link("/")}">dashboard</a>']
    if step > 0:
        nav.append(_page_link(link, step - 1, "&larr; previous"))
    if step < last_step:
        nav.append(_page_link(link, step + 1, "next &rarr;"))
    parent = record.get("parent")
    parent_html = "–"
    if parent:
        parent_html = outbound(parent)
        if parent_step is not None:
            parent_html += f" ({_page_link(link, parent_step, f'step {parent_step}')})"
    fields = [
        ("URL", outbound(record["url"])),
        ("final URL", outbound(record["final_url"]) if record.get("final_url") != record["url"] else "same"),
        ("status", f"{record.get('status')} {escape(record.get('content_type') or '')}"),
        ("error", f'<span class="err">{escape(record["error"])}</span>' if record.get("error") else "–"),
        ("relevance", f"{_relevance(record.get('relevance') or 0.0, record.get('reward'))} "
                      f"reward {num(record.get('reward'))}"),
        ("score", num(record.get("score"), "{:.4g}")),
        ("why it was chosen", escape(record.get("reason") or "–")),
        ("depth", num(record.get("depth"))), ("parent", parent_html),
        ("fetched", f"{clock(record.get('fetched_at'))} in {num(record.get('fetch_ms'))} ms"),
        ("outlinks", num(record.get("outlinks"))), ("strategy", escape(str(record.get("strategy") or "–"))),
        ("read from", escape(record.get("source", ""))),
    ]
    meta = "".join(f"<dt>{escape(k)}</dt><dd>{v}</dd>" for k, v in fields)
    text = record.get("text") or ""
    body = (f'<header><h1>{escape(record.get("title") or "(no title)")}</h1><div class="sub">step {step} · '
            f'{" · ".join(nav)}</div></header><main><dl class="meta">{meta}</dl>'
            f'<h2>Text as the crawler saw it ({len(text):,} characters)</h2>'
            f'<pre class="text" id="text">{escape(text) or "(empty)"}</pre></main>')
    return document(f"step {step}: {record.get('title') or record['url']}", body, nonce=nonce, kind="page")


def message_page(title: str, message: str, *, nonce: str) -> str:
    return document(title, f"<header><h1>{escape(title)}</h1></header><main><p>{escape(message)}</p></main>",
                    nonce=nonce)


# -- bench -------------------------------------------------------------------------------------------------------
BANDS = {"range": "min to max", "std": "mean ± 1 std", "none": "none"}


def bench_chart(data: dict, *, width: int = 760, height: int = 380, chart_id: str = "chart-bench",
                title: str | None = None, band: str = "range") -> str:
    """Every strategy's mean harvest curve over runs, with its spread over runs as a band."""
    lines = []
    for i, name in enumerate(data["order"]):
        curve = data["curves"].get(name)
        if not curve or not curve["fetched"]:
            continue
        if band == "std":
            low = [m - d for m, d in zip(curve["mean"], curve["std"])]
            high = [m + d for m, d in zip(curve["mean"], curve["std"])]
        elif band == "none":
            low = high = None
        else:
            low, high = curve["min"], curve["max"]
        lines.append(Line(f"{name} ({data['runs'].get(name, 0)} runs)", curve["fetched"], curve["mean"], colour(i),
                          dashed="oracle" in name, low=low, high=high))
    spread = "" if band == "none" else f", band = {BANDS.get(band, BANDS['range'])}"
    return line_chart(lines, title=title or f"Harvest: mean over runs{spread}", x_label="pages fetched",
                      y_label="relevant pages (ground truth)", width=width, height=height, chart_id=chart_id,
                      empty="no runs recorded (runs.jsonl missing)", band_opacity=0.09)


def bench_table(data: dict) -> str:
    from focuscrawl.bench.report import COLUMNS

    summary = data["summary"]
    rows, classes = [], []
    for entry in summary["strategies"]:
        cells = []
        for key, _, fmt in COLUMNS:
            value = entry.get(key)
            cells.append(escape(str(value)) if key == "strategy" else num(value, fmt))
        rows.append(cells)
        classes.append("oracle" if "oracle" in str(entry.get("strategy")) else "")
    return table([title for _, title, _ in COLUMNS], rows, numeric=tuple(range(1, len(COLUMNS))),
                 row_classes=classes)


def bench_settings(summary: dict) -> str:
    bits = [f"budget {num(summary.get('budget'))}", f"{num(summary.get('runs'))} runs",
            f"{num(summary.get('seeds_per_run'))} seed(s) per run", f"MAX per domain {summary.get('max_per_domain')}",
            f"{num(summary.get('relevant_total'))} relevant pages in the web", f"seed {summary.get('seed')}"]
    if summary.get("keywords"):
        bits.append("keywords: " + ", ".join(map(str, summary["keywords"][:12])))
    if summary.get("options"):
        bits.append(f"options {summary['options']}")
    return escape(" · ".join(bits))


def bench_page(data: dict | None, name: str, link: Link, *, nonce: str, back: str | None = None,
               here: str = "/", band: str = "range") -> str:
    nav = f' · <a href="{link(back)}">suite</a>' if back else ""
    if data is None:
        return message_page(f"{name}: no results yet", "This folder holds no summary.json yet: the benchmark has "
                            "not finished (reload later).", nonce=nonce)
    summary = data["summary"]
    bands = " · ".join(f"<b>{escape(text)}</b>" if key == band else
                       f'<a href="{link(here)}{"&" if "?" in link(here) else "?"}band={key}">{escape(text)}</a>'
                       for key, text in BANDS.items())
    body = (f'<header><h1>bench · {escape(str(summary.get("web")))} / {escape(str(summary.get("topic")))}</h1>'
            f'<div class="sub">{bench_settings(summary)}{nav}</div></header><main>'
            f'<div class="panel">{bench_chart(data, band=band)}<p class="note">spread over runs: {bands} · a '
            "click on a strategy in the legend brings it forward</p></div>"
            f'<div class="panel" style="margin-top:12px"><h2>Summary (means over runs)</h2>{bench_table(data)}'
            f'<p class="note">AUC/oracle: area under the harvest curve over the oracle\'s; pages/oracle: relevant '
            f"pages over the oracle's. The oracle reads ground truth: a reference, not a crawler.</p></div></main>"
            f'<footer>focuscrawl dashboard · read-only · {escape(name)} · <a href="{link("/api/bench")}">JSON</a>'
            f"</footer>")
    return document(f"bench {summary.get('web')}/{summary.get('topic')} · focuscrawl", body, nonce=nonce,
                    kind="bench")


# -- suite -------------------------------------------------------------------------------------------------------
def suite_page(suite: dict | None, rows: list[dict], name: str, link: Link, *, nonce: str) -> str:
    strategies = (suite or {}).get("strategies") or list(dict.fromkeys(s for row in rows for s in row["auc"]))
    oracles = set((suite or {}).get("oracles", [])) or {s for s in strategies if "oracle" in s}
    title = f"suite · {(suite or {}).get('suite', name)}"
    parts = [f'<header><h1>{escape(title)}</h1><div class="sub">{len(rows)} rows · '
             f'{len(strategies)} strategies' + (f" · {escape(suite['note'])}" if suite and suite.get("note") else "")
             + "</div></header><main>"]
    if suite and suite.get("description"):
        parts.append(f'<p class="panel">{escape(suite["description"])}</p>')
    if suite is None:
        parts.append('<p class="panel note">suite.json is not written yet (the suite is still running?): the rows '
                     "below are those finished so far.</p>")
    crawlers = [s for s in strategies if s not in oracles]
    points = [(s, row["label"], row["auc"].get(s), row["half"] or "rows") for row in rows for s in crawlers
              if isinstance(row["auc"].get(s), (int, float))]
    chart = strip_chart(crawlers, points, title="AUC/oracle per row (dots) and median (bar)",
                        y_label="mean AUC/oracle", chart_id="chart-suite")
    parts.append(f'<div class="panel">{chart}</div>')
    if suite and suite.get("tables"):
        try:
            from focuscrawl.bench.suite import TABLE_HEADERS, table_cells, table_title

            for scope, summary_table in suite["tables"].items():
                cells = [[escape(c) for c in row] for row in table_cells(summary_table)]
                classes = ["oracle" if e.get("oracle") else "" for e in summary_table["strategies"]]
                parts.append(f'<div class="panel" style="margin-top:12px"><h2>{escape(table_title(suite, scope))}</h2>'
                             + table(TABLE_HEADERS, cells, numeric=tuple(range(1, 8)), row_classes=classes)
                             + "</div>")
        except (KeyError, TypeError, ValueError):
            parts.append('<p class="panel note">the suite tables of suite.json could not be read by this version</p>')
    baseline = (suite or {}).get("baseline", "best-first")
    cells = []
    for row in rows:
        values = []
        for s in strategies:
            value = row["auc"].get(s)
            mark = {"win": ' <span class="win">&#9650;</span>', "loss": ' <span class="loss">&#9660;</span>'}.get(
                row["outcome"].get(s), "")
            values.append(num(value, "{:.3f}") + mark)
        cells.append([f'<a href="{link("/row/" + row["slug"])}">{escape(row["label"])}</a>',
                      escape(row["half"] or "–"), num(row["budget"]), num(row["runs"]), *values])
    parts.append('<div class="panel" style="margin-top:12px"><h2>Rows: mean AUC/oracle</h2>'
                 + table(["row", "half", "T", "runs", *strategies], cells, numeric=tuple(range(2, 4 + len(strategies))))
                 + f'<p class="note">&#9650; / &#9660;: a win / loss against {escape(baseline)} (95% paired bootstrap '
                 "over runs). Each row links to its harvest curves and summary.</p></div>")
    images = "".join(f'<a href="{link("/row/" + row["slug"])}"><img loading="lazy" alt="harvest curves of '
                     f'{escape(row["label"])}" src="{link("/row/" + row["slug"] + "/harvest.svg")}"></a>'
                     for row in rows)
    parts.append(f'<h2 style="margin:16px 0 8px">Harvest curves per row</h2><div class="rowcharts">{images}</div>')
    parts.append(f'</main><footer>focuscrawl dashboard · read-only · {escape(name)} · '
                 f'<a href="{link("/api/suite")}">JSON</a></footer>')
    return document(f"{title} · focuscrawl", "".join(parts), nonce=nonce, kind="suite")
