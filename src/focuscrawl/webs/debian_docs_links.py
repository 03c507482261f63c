"""The Debian docs web's entry points into its documentation sites, from real data only (issue 43).

A documentation site reached by one link from its project page is a site a crawl hardly meets; on the real
web, documentation sites are entered from many places. Two kinds of entry are taken here, each only where
real data names it, never invented:

- **the documentation's own external links** (``UpstreamLinks``): Sphinx, Doxygen and Javadoc pages link to
  other projects' home pages and documentation (intersphinx links, "home" and footer links). A link whose URL is
  a project's home page as the Debian web writes it (``project_url`` of its ``Homepage``) goes to that project's
  page; a link into a documentation site's upstream location goes to the web's copy of that page. A site's
  upstream location is not in Debian's metadata (the binary index has no Documentation or Vcs fields, and the
  HTML carries no canonical or base URL), so it is learned from the links themselves: ``learn_upstream_roots``.
- **Debian's relations** (``related_projects``): the project pages of packages that Debian relates to a
  documentation package link to its site: binaries of the same source, packages whose relations name the -doc
  package, and packages whose relations name a documented binary (a binary of the doc's source that names the
  -doc package, or that the -doc package names).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from focuscrawl.urls import site_of
from focuscrawl.webs.debian import Package, project_url

# An upstream root needs this many distinct pages of the site linked as ROOT + their path in the site ...
MIN_ROOT_PAGES = 3
# ... and at least this share of the distinct URLs linked under it naming a file the site has: boost.org/sgi/stl/
# shares 7 file names with Boost's concept pages (Assignable.html, ...) but 9 of its 16 linked pages are SGI
# STL pages Boost does not ship, so it is another site's tree, not Boost's.
MIN_ROOT_NAMED_SHARE = 2 / 3


@dataclass
class SiteTree:
    """One documentation site: where it hangs in the web and which files it has."""

    package: str
    source: str
    project: str  # the project page the site belongs to
    index: str  # the web's URL of the site's index
    files: set[str]  # every HTML file of the package, by its path below the package's HTML folder
    kept: dict[str, str]  # the pages kept in the web: path below the HTML folder -> web URL
    roots: list[str] = field(default_factory=list)  # upstream roots learned, "https://HOST/PATH/"
    # a URL below a root may name a file by the tail of its path (a reference site's fact: debian_reference_sites)
    tail_paths: bool = False
    _tails: dict[str, str | None] | None = field(default=None, repr=False)

    def file_named(self, rest: str, paths: set[str] | dict[str, str]) -> str | None:
        """The path of ``paths`` a URL's path below a root names: ``page_in``, else, with ``tail_paths``, the one
        file whose path ends in ``/`` + ``rest`` (a folder and a file at least)."""
        found = page_in(rest, paths)
        if found is not None or not self.tail_paths or "/" not in rest:
            return found
        if self._tails is None:
            self._tails = {}
            for path in self.files:
                segments = path.split("/")
                for cut in range(1, len(segments) - 1):
                    tail = "/".join(segments[cut:])
                    self._tails[tail] = None if tail in self._tails else path  # None: more than one file
        found = self._tails.get(rest)
        return found if found in paths else None


def page_in(rest: str, paths: set[str] | dict[str, str]) -> str | None:
    """The path of ``paths`` a URL's path below a root names: itself, or a folder's index.html (``units/``,
    ``units``, and the root's own ``""``)."""
    if rest in paths:
        return rest
    if rest and not rest.endswith("/"):
        if "." in posixpath.basename(rest):  # a file the site does not have
            return None
        rest += "/"
    for index in ("index.html", "index.htm"):
        if rest + index in paths:
            return rest + index
    return None


def _related(host: str, project_host: str) -> bool:
    """A host of the project: its own, or a subdomain (docs.scipy.org of scipy.org)."""
    return bool(project_host) and (host == project_host or host.endswith("." + project_host))


def learn_upstream_roots(sites: Iterable[SiteTree], urls: Iterable[str]) -> None:
    """Set each site's ``roots``: the upstream locations its pages are linked at in ``urls`` (the external
    links of all documentation pages). A candidate is a host of the site's project or of the site itself (a
    reference site's upstream host: docs.oracle.com) and a path prefix P such that a linked URL is P + a file's
    path in the site (the longest such suffix; with the site's ``tail_paths``, or P + the tail of one file's
    path); it is a root when at least ``MIN_ROOT_PAGES`` distinct files are linked that way and
    ``MIN_ROOT_NAMED_SHARE`` of the distinct URLs linked under P name a file the site has (its tree, not
    another site sharing a few file names)."""
    paths_by_host: dict[str, set[str]] = {}
    for url in urls:
        try:
            parts = urlsplit(url)
        except ValueError:
            continue
        if parts.scheme in ("http", "https") and parts.path:
            paths_by_host.setdefault(site_of(url), set()).add(parts.path)
    for site in sites:
        project_host, own_host = site_of(site.project), site_of(site.index)
        names = {posixpath.basename(path) for path in site.files}
        matched: dict[tuple[str, str], set[str]] = {}
        for host, paths in paths_by_host.items():
            if not (_related(host, project_host) or _related(host, own_host)):
                continue
            for path in paths:
                prefix, file = _longest_file_suffix(path, site)
                if file is not None:
                    matched.setdefault((host, prefix), set()).add(file)
        site.roots = []
        for (host, prefix), files in sorted(matched.items()):
            under = [path[len(prefix) + 1:] for path in paths_by_host[host] if path.startswith(prefix + "/")]
            named = sum(posixpath.basename(site.file_named(rest, site.files) or rest) in names for rest in under)
            if len(files) >= MIN_ROOT_PAGES and named >= MIN_ROOT_NAMED_SHARE * len(under):
                site.roots.append(f"https://{host}{prefix}/")


def _longest_file_suffix(path: str, site: SiteTree) -> tuple[str, str | None]:
    """(prefix, file) where ``path`` is prefix + "/" + what names a file of ``site`` (``SiteTree.file_named``),
    the longest such. A bare index.html names no tree (every site has one), so it needs a folder above it."""
    segments = path.split("/")
    for cut in range(1, len(segments)):
        file = site.file_named("/".join(segments[cut:]), site.files)
        if file is not None and ("/" in file or not file.startswith("index.")):
            return "/".join(segments[:cut]), file
    return path, None


@dataclass
class MappedCounts:
    """Links of one site's pages that the mapping sent into the web, by where they went."""

    own_site: int = 0  # absolute upstream links to the site's own pages
    other_sites: int = 0  # to another documentation site's pages
    own_project: int = 0  # to the site's project page
    other_projects: int = 0  # to another project's page


class UpstreamLinks:
    """Maps an external URL of a documentation page onto the web's page for it, if the web has one."""

    def __init__(self, sites: Iterable[SiteTree], projects: Iterable[str]):
        self._sites = list(sites)
        self._projects = set(projects)
        self._roots: dict[str, list[tuple[str, SiteTree]]] = {}  # host -> (path prefix, site), longest first
        for site in self._sites:
            for root in site.roots:
                parts = urlsplit(root)
                self._roots.setdefault(site_of(root), []).append((parts.path.rstrip("/"), site))
        for entries in self._roots.values():
            entries.sort(key=lambda entry: -len(entry[0]))
        self.counts = {site.package: MappedCounts() for site in self._sites}

    def target(self, url: str, source: SiteTree) -> str | None:
        """The web's page ``url`` (a link on a page of ``source``) names, or None; counts what it maps."""
        try:
            parts = urlsplit(url)
        except ValueError:
            return None
        for prefix, site in self._roots.get(site_of(url), ()):
            if parts.path.startswith(prefix + "/"):
                found = site.file_named(parts.path[len(prefix) + 1:], site.kept)
                if found is not None:
                    counts = self.counts[source.package]
                    if site is source:
                        counts.own_site += 1
                    else:
                        counts.other_sites += 1
                    return site.kept[found]
        page = project_url(url)
        if page is not None and page in self._projects:
            counts = self.counts[source.package]
            if page == source.project:
                counts.own_project += 1
            else:
                counts.other_projects += 1
            return page
        return None


def related_projects(site: SiteTree, projects: dict[str, list[str]], packages: dict[str, Package],
                     named_by: dict[str, set[str]], by_source: dict[str, set[str]]) -> dict[str, str]:
    """The project pages (other than the site's own, in the web's page order) that Debian's data relates to the
    site's documentation package, each with its relation: ``same_source`` (a binary of the doc's source),
    ``names_package`` (a binary whose relations name the -doc package) or ``uses_documented`` (one whose
    relations name a documented binary). ``named_by``: package -> project pages whose binaries' relations name
    it; ``by_source``: source -> project pages holding a binary of it (``relation_indexes``)."""
    doc = packages.get(site.package)
    documented = [name for name in source_binaries(site.source, packages)
                  if name != site.package and (site.package in packages[name].relations
                                               or (doc is not None and name in doc.relations))]
    found: dict[str, str] = {}
    for binary in documented:  # the weakest relation first: a stronger one overwrites it
        found.update(dict.fromkeys(named_by.get(binary, ()), "uses_documented"))
    found.update(dict.fromkeys(named_by.get(site.package, ()), "names_package"))
    found.update(dict.fromkeys(by_source.get(site.source, ()), "same_source"))
    found.pop(site.project, None)
    return {url: found[url] for url in projects if url in found}


def source_binaries(source: str, packages: dict[str, Package]) -> list[str]:
    return [name for name, pkg in packages.items() if pkg.source == source]


def relation_indexes(projects: dict[str, list[str]], packages: dict[str, Package],
                     ) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(package -> project pages whose binaries' relations name it, source -> project pages holding a binary of
    it), the relations as the Debian web reads them (first alternatives of Pre-Depends ... Enhances)."""
    named_by: dict[str, set[str]] = {}
    by_source: dict[str, set[str]] = {}
    for url, names in projects.items():
        for name in names:
            by_source.setdefault(packages[name].source, set()).add(url)
            for related in packages[name].relations:
                named_by.setdefault(related, set()).add(url)
    return named_by, by_source
