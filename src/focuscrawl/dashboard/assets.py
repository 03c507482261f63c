"""The page's CSS and JavaScript, shipped in the package (no CDN, nothing fetched from elsewhere).

The script is small on purpose: the server renders every chart and table; the script only polls the
JSON endpoint (``data-api`` on <body>) and swaps the panels it sends back (``html``: element id -> markup).
It sends If-None-Match so an unchanged crawl costs a 304, and it pauses while the tab is hidden.
"""

CSS = """
:root { --fg:#1d2330; --muted:#5d6677; --line:#dde1e8; --bg:#f6f7f9; --card:#fff; --good:#2ca02c; --bad:#d62728;
        --accent:#1f77b4; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
       color:var(--fg); background:var(--bg); }
a { color:var(--accent); text-decoration:none; } a:hover { text-decoration:underline; }
header { padding:14px 22px 10px; background:var(--card); border-bottom:1px solid var(--line); }
header h1 { margin:0; font-size:20px; font-weight:600; display:flex; align-items:center; gap:10px; flex-wrap:wrap; }
header .sub { color:var(--muted); margin-top:4px; font-size:13px; }
main { padding:14px 22px 30px; }
.badge { font-size:12px; font-weight:600; padding:2px 9px; border-radius:10px; background:#e8eaee; color:var(--muted);
         text-transform:uppercase; letter-spacing:.04em; }
.badge.running, .badge.starting { background:#e2f3e2; color:#1d7a1d; }
.badge.running::before { content:""; display:inline-block; width:7px; height:7px; border-radius:50%;
         background:#2ca02c; margin-right:6px; vertical-align:1px; animation:pulse 1.4s infinite; }
@keyframes pulse { 50% { opacity:.25; } }
.badge.stopped, .badge.interrupted { background:#fdecea; color:#a3231b; }
.badge.finished { background:#e6eef8; color:#1f5f9a; }
.kpis { display:grid; grid-template-columns:repeat(auto-fit,minmax(150px,1fr)); gap:10px; margin-bottom:14px; }
.kpi { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:10px 12px; }
.kpi .k { color:var(--muted); font-size:12px; text-transform:uppercase; letter-spacing:.04em; }
.kpi .v { font-size:24px; font-weight:600; font-variant-numeric:tabular-nums; }
.kpi .s { color:var(--muted); font-size:12px; }
.bar { height:5px; background:#e8eaee; border-radius:3px; margin-top:6px; overflow:hidden; }
.bar > span { display:block; height:100%; background:var(--accent); }
.grid2 { display:grid; grid-template-columns:repeat(auto-fit,minmax(480px,1fr)); gap:12px; margin-bottom:14px; }
.grid3 { display:grid; grid-template-columns:repeat(auto-fit,minmax(330px,1fr)); gap:12px; margin-bottom:14px; }
.grid3 td:first-child { overflow-wrap:anywhere; }
#problems td:first-child { white-space:nowrap; overflow-wrap:normal; }
.url { overflow-wrap:anywhere; }
.panel { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:10px 12px; overflow:auto; }
.panel h2 { font-size:14px; margin:0 0 8px; font-weight:600; }
.panel .note { color:var(--muted); font-size:12px; margin:6px 0 0; }
svg.chart { width:100%; height:auto; display:block; }
svg.chart .legend-item { cursor:pointer; }
svg.chart .dim { opacity:.12; }
svg.chart polygon.band.focus { fill-opacity:.3; }
svg .chart-title { font-size:13px; font-weight:600; fill:var(--fg); }
svg .chart-empty { font-size:13px; fill:var(--muted); }
svg .tick { font-size:10.5px; fill:var(--muted); }
svg .label { font-size:11.5px; fill:var(--muted); }
svg .legend { font-size:11px; fill:var(--fg); }
svg .grid { stroke:#eceef2; stroke-width:1; }
svg .axis { stroke:#b9bec8; }
svg .frame { fill:none; stroke:#cfd3da; }
svg .median { stroke:var(--fg); stroke-width:2.5; }
table { border-collapse:collapse; width:100%; font-size:13px; }
th, td { text-align:left; padding:4px 8px; border-bottom:1px solid #eef0f3; vertical-align:top; }
th { color:var(--muted); font-weight:600; font-size:12px; white-space:nowrap; }
td.n, th.n { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
tr.oracle td { color:var(--muted); }
td .cellbar { display:inline-block; height:8px; background:#c9dcef; border-radius:2px; vertical-align:middle;
              margin-right:6px; }
.latest td.page { max-width:420px; }
.latest .title { font-weight:500; }
.latest .url { color:var(--muted); font-size:12px; }
.url { color:var(--muted); font-size:12px; }
.latest td.reason { color:#3a4254; font-size:12px; max-width:360px; }
.rel { display:inline-block; min-width:44px; padding:1px 6px; border-radius:4px; text-align:right;
       font-variant-numeric:tabular-nums; }
.rel.hi { background:#dff1df; color:#1d6b1d; } .rel.lo { background:#f1f2f4; color:#5d6677; }
.err { color:var(--bad); }
.win { color:var(--good); font-weight:600; } .loss { color:var(--bad); font-weight:600; }
pre.text { white-space:pre-wrap; word-wrap:break-word; background:var(--card); border:1px solid var(--line);
           border-radius:8px; padding:14px; font:13px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; }
dl.meta { display:grid; grid-template-columns:max-content 1fr; gap:3px 14px; margin:0 0 12px; }
dl.meta dt { color:var(--muted); } dl.meta dd { margin:0; word-break:break-all; }
.rowcharts { display:grid; grid-template-columns:repeat(auto-fit,minmax(380px,1fr)); gap:12px; }
.rowcharts img { width:100%; height:auto; background:#fff; border:1px solid var(--line); border-radius:8px; }
footer { color:var(--muted); font-size:12px; padding:0 22px 20px; }
body.offline header { background:#fff4e5; }
body.offline footer::after { content:" · the dashboard server does not answer"; color:var(--bad); }
"""

JS = """
(function () {
  // A click on a legend entry brings that series forward (and its band); a second click undoes it.
  var focus = {};
  function applyFocus(svg) {
    var key = svg.id || '', name = focus[key];
    Array.prototype.forEach.call(svg.querySelectorAll('[data-series]'), function (el) {
      var mine = el.getAttribute('data-series') === name;
      el.classList.toggle('dim', !!name && !mine);
      el.classList.toggle('focus', !!name && mine);
    });
  }
  document.addEventListener('click', function (ev) {
    var item = ev.target.closest ? ev.target.closest('svg.chart .legend-item') : null;
    if (!item) { return; }
    var svg = item.closest('svg.chart'), key = svg.id || '', name = item.getAttribute('data-series');
    focus[key] = focus[key] === name ? null : name;
    applyFocus(svg);
  });
  function refocus() { Array.prototype.forEach.call(document.querySelectorAll('svg.chart'), applyFocus); }
  var body = document.body, api = body.getAttribute('data-api');
  if (!api) { return; }
  var token = new URLSearchParams(location.search).get('token');
  var url = api + (api.indexOf('?') < 0 ? '?' : '&') + 'fragments=1' +
            (token ? '&token=' + encodeURIComponent(token) : '');
  var etag = null, polls = 0, timer = null;
  var live = function () { return ['running', 'starting', 'waiting'].indexOf(body.getAttribute('data-status')) >= 0; };
  function schedule(ms) { clearTimeout(timer); timer = setTimeout(poll, ms); }
  function poll() {
    if (document.hidden) { return; }  // resumed by visibilitychange
    var headers = etag ? {'If-None-Match': etag} : {};
    fetch(url, {cache: 'no-store', headers: headers, credentials: 'same-origin'}).then(function (r) {
      polls += 1;
      body.setAttribute('data-polls', String(polls));
      if (r.status === 304) { body.classList.remove('offline'); return null; }
      if (!r.ok) { throw new Error('HTTP ' + r.status); }
      etag = r.headers.get('ETag');
      return r.json();
    }).then(function (data) {
      if (data) {
        var html = data.html || {};
        Object.keys(html).forEach(function (id) {
          var el = document.getElementById(id);
          if (el) { el.innerHTML = html[id]; }
        });
        refocus();
        body.setAttribute('data-steps', String(data.totals.steps));
        body.setAttribute('data-status', data.status);
        body.setAttribute('data-updated', String(polls));
        if (data.title) { document.title = data.title; }
        body.classList.remove('offline');
      }
      schedule(live() ? 1500 : 5000);
    }).catch(function () {
      body.classList.add('offline');
      schedule(3000);
    });
  }
  document.addEventListener('visibilitychange', function () { if (!document.hidden) { schedule(100); } });
  schedule(1500);
})();
"""
