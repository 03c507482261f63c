"""A local, read-only web dashboard for a crawl run folder (live while the crawl runs), a bench folder or a
suite folder: ``focuscrawl dashboard FOLDER``, or ``focuscrawl crawl ... --dashboard [PORT]``.

    from focuscrawl.dashboard import serve_dashboard

    with serve_dashboard("runs/birds", port=0) as server:   # serves in a daemon thread
        print(server.url)

It reads the run folder's store read-only beside the crawl that writes it (``dashboard.run``), renders its
charts as SVG on the server (``dashboard.charts``) and ships its few lines of CSS and JavaScript itself:
nothing is fetched from elsewhere.
"""

from focuscrawl.dashboard.server import (
    DEFAULT_PORT,
    Dashboard,
    DashboardError,
    DashboardServer,
    detect_kind,
    is_loopback,
    serve_dashboard,
)

__all__ = ["DEFAULT_PORT", "Dashboard", "DashboardError", "DashboardServer", "detect_kind", "is_loopback",
           "serve_dashboard"]
