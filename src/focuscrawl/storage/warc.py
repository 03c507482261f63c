"""The optional WARC of a run: a request and a response record per fetch, written with warcio.

Records are gzip members written and flushed *before* the step commits, and the step stores the file's
size after them (``warc_end``). On resume the file is truncated to the last committed step's end, which
drops the records of a fetch that never got committed; every member boundary is a valid end of a WARC.
With the HTTP fetcher, response records hold the final response's real headers and (decompressed)
body; for offline webs the body is the page's HTML (rendered when the web stores text only) under a
reconstructed status line and Content-Type. Content-Encoding is dropped as the body is stored decoded.
"""

from __future__ import annotations

import io
from http import HTTPStatus
from pathlib import Path
from urllib.parse import urlsplit

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from focuscrawl.html import render_html
from focuscrawl.types import Page

WARC_FILE = "crawl.warc.gz"


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


class WarcOutput:
    """Appends request/response pairs to ``crawl.warc.gz``; see ``truncate_to`` for crash repair."""

    def __init__(self, path: str | Path, software: str = "focuscrawl"):
        self.path = Path(path)
        fresh = not self.path.exists() or self.path.stat().st_size == 0
        self._fh = open(self.path, "ab")
        self._writer = WARCWriter(self._fh, gzip=True)
        self.info_end = 0
        if fresh:
            info = self._writer.create_warcinfo_record(self.path.name, {"software": software, "format": "WARC/1.0"})
            self._writer.write_record(info)
            self._fh.flush()
        self.info_end = self._fh.tell()

    @staticmethod
    def truncate_to(path: str | Path, end: int) -> int:
        """Cut the file back to ``end`` bytes (a committed record boundary). Returns the bytes dropped."""
        path = Path(path)
        if not path.exists():
            return 0
        size = path.stat().st_size
        if size <= end:
            return 0
        with open(path, "r+b") as fh:
            fh.truncate(end)
        return size - end

    def write(self, url: str, page: Page, result=None) -> int:
        """Write the request and response records of one fetch; returns the file size after them.

        ``result`` is the HTTP fetcher's ``FetchResult`` when there is one: its real response headers,
        body and peer address are archived. Without it (offline webs) headers and body are rebuilt.
        """
        target = page.final_url or url
        parts = urlsplit(target)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        request_headers = StatusAndHeaders(f"GET {path} HTTP/1.1", [("Host", parts.netloc),
                                                                   ("User-Agent", "focuscrawl")],
                                           is_http_request=True)
        request = self._writer.create_warc_record(target, "request", payload=io.BytesIO(b""),
                                                  http_headers=request_headers)
        if page.status == 0:
            # A refused or failed fetch has no response; archive the attempt as a metadata record instead.
            response = self._writer.create_warc_record(
                target, "metadata", payload=io.BytesIO(f"fetch-error: {page.error}\n".encode()),
                warc_content_type="application/warc-fields")
        else:
            if result is not None:
                payload = result.body
                headers = [(k, v) for k, v in result.headers
                           if k.lower() not in ("content-encoding", "transfer-encoding", "content-length")]
                headers.append(("Content-Length", str(len(payload))))
            else:
                body = page.html
                if body is None and (page.text or page.outlinks):
                    body = render_html(page.title, page.text, page.outlinks)
                payload = (body or "").encode("utf-8")
                headers = [("Content-Type", page.content_type or "text/html"), ("Content-Length", str(len(payload)))]
            response = self._writer.create_warc_record(
                target, "response", payload=io.BytesIO(payload),
                http_headers=StatusAndHeaders(f"{page.status} {_reason(page.status)}", headers, protocol="HTTP/1.1"))
            if result is not None and result.ip:
                response.rec_headers.add_header("WARC-IP-Address", result.ip)
        request.rec_headers.add_header("WARC-Concurrent-To", response.rec_headers.get_header("WARC-Record-ID"))
        self._writer.write_record(request)
        self._writer.write_record(response)
        self._fh.flush()
        return self._fh.tell()

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()
