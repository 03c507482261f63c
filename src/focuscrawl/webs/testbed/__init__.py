"""A test bed of real web software beside an offline web: Trac (a wiki with history and diffs, an issue tracker with a
timeline, queries and reports), Datasette (a data browser with facets, sorting and row pages over a large table),
Pelican (a blog with tags, categories, archives and feeds) and django-scheduler (a calendar with day to year views,
in four languages), filled with the web's texts and, a third of them, Debian's package descriptions in German,
French and Spanish (``translations``), served on loopback as their own servers, every URL they generate labelled by
kind from their URL schemes (``labels``). ``build`` writes one, ``serve`` runs one; ``benchmarks/testbed.py``
crawls it."""

from focuscrawl.webs.testbed.build import build_testbed
from focuscrawl.webs.testbed.labels import KINDS, UrlLabeller
from focuscrawl.webs.testbed.serve import read_manifest, serve_testbed

__all__ = ["KINDS", "UrlLabeller", "build_testbed", "read_manifest", "serve_testbed"]
