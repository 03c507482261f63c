"""Messy webs: an offline web with the real web's pathologies added, every one of them labelled.

``mess_web(WEB, OUT, profile, seed=...)`` writes a new offline web OUT holding every page, label and
stored body of WEB, plus what makes crawling the real web hard, materialised as ordinary pages, links and
redirects so that the benchmark (offline) and ``focuscrawl web serve`` (over HTTP) meet the same web:

- traps deep enough to be endless for any budget in use: event calendars, paginated listings, faceted
  search, each in sections on a web's own host or on hosts of their own, entered from a share of pages;
- copies of pages at other URLs: session ids (``;jsessionid=`` in the path, ``sid=`` in the query; all
  links inside a session keep its id), tracking parameters (``utm_*``, ``fbclid``, ``gclid``), host mirrors
  (``www.``/bare, ``http``/``https``; links inside a mirror stay in it), ``index.html``/trailing-slash
  twins, near-duplicates (the text with a changed banner, date or footer); some name the original with
  ``<link rel=canonical>``, some do not;
- redirect chains (2-4 hops) and loops; link farms (irrelevant pages stuffed, in text and anchors, with the
  most distinctive words of the pages that link to them); links that only a script adds;
- host behaviour (``focuscrawl.webs.behaviour``): soft-404 hosts, and hosts that fail (5xx, timeouts, slow
  bodies).

The crawler must meet them where it crawls, whatever topic a benchmark scores: a trap's pages borrow the
sentences of the page that links to them and of its neighbours, and a farm the words of its linking pages.
Copies *replace* a share of the links to their original, as on the real web, where the clean URL of a page
is often not linked at all; traps, farms, print versions, loops and broken links are *added* at the end of
a page's links; script-only links are *moved* out of a page's HTML links. Nothing else of WEB changes.

Ground truth: the ``injected`` table gives every URL the mess added or changed its kind (``KINDS``) and,
for a copy or a redirect, its original. Injected pages carry no labels: a copy of a relevant page is not a
second relevant page. Every random choice derives from the seed, most of them as a hash of the seed and
what they decide about (``seeded_unit``), so a change to one pathology's options leaves the others' choices
as they were; the same command gives the same web, table for table.

One module per pathology, planned in turn on one ``MessState`` (``state``: WEB read, the pages made so
far, the hosts taken, the seeded random choices): ``traps`` (what calendars, listings, facets and farms
share), ``calendars``, ``pagination``, ``facets``, ``farms``; ``sessions`` (sessions and mirrors), ``copies``
(tracking, twins, near-duplicates, and every copy's links), ``links`` (which links lead to a copy or a
redirect instead), ``redirects``, ``scripts``, ``hosts`` (soft-404 and failing hosts); ``build`` plans them
in order and ``write`` writes the result. Settings: ``profile``.
"""

from focuscrawl.webs.mess.build import MESS_VERSION, MessReport, mess_web
from focuscrawl.webs.mess.farms import SPAM_WORDS
from focuscrawl.webs.mess.profile import KINDS, PROFILES, MessProfile, make_profile

__all__ = ["KINDS", "MESS_VERSION", "PROFILES", "SPAM_WORDS", "MessProfile", "MessReport", "make_profile", "mess_web"]
