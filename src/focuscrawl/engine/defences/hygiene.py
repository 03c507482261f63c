"""URL hygiene: tracking parameters and session ids leave every URL the crawl meets, so copies under them are one URL
(``focuscrawl.urls.strip_tracking_and_session``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from focuscrawl.engine.defences.pipeline import Defence
from focuscrawl.urls import strip_tracking_and_session


class UrlHygieneSettings(BaseModel):
    """Tracking parameters (utm_*, fbclid, gclid, ...) and session ids (;jsessionid=, sid, PHPSESSID) leave URLs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True


class UrlHygiene(Defence):
    name = "url_hygiene"

    def rewrite(self, url: str) -> str:
        return strip_tracking_and_session(url)
