"""Build the Debian docs web: the Debian web's project pages plus the HTML documentation Debian ships.

The Debian web (``focuscrawl.webs.debian``) has many small sites and no large one. The web users crawl is
full of large self-similar sites whose pages carry a topic's words without being what the topic is about:
generated API pages, reference manuals, class indexes. This builder adds such sites from Debian's own
``-doc`` packages: each chosen package's HTML tree under ``/usr/share/doc`` becomes the project's
documentation site (``docs.PROJECTHOST/PROJECTPATH/...``), with the HTML's own links between its pages, a
link from the project page to the documentation's index and one back. Documentation pages are labelled by
kind (``kind.doc``, and ``kind.reference`` for generated API/reference pages), never by topic: a topic's
pages are its projects (docs/web-format.md, "Debian docs web").

The packages are a fixed list (``DOC_PACKAGES``), chosen from bookworm's ``Contents-all`` by how many HTML
files they ship and how near they are to a suite topic; ``--download`` fetches their ``.deb`` files from the
pool, checks each against the SHA256 the Packages index gives, and stops adding packages at a size cap. The
large reference sites the documentation links to (``focuscrawl.webs.debian_reference_sites``) go to the upstream
roots those links use.
"""

from __future__ import annotations

import hashlib
import io
import posixpath
import re
import tarfile
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from focuscrawl.html import decode_html, parse_document
from focuscrawl.urls import normalize_url
from focuscrawl.webs.debian import MIRROR, Package, _find, _get, build_debian, project_url, read_text, stanzas
from focuscrawl.webs.debian_docs_links import (
    SiteTree,
    UpstreamLinks,
    learn_upstream_roots,
    related_projects,
    relation_indexes,
)
from focuscrawl.webs.debian_reference_sites import (
    DEFAULT_MAX_PAGES_PER_REFERENCE_SITE,
    REFERENCE_SITES,
    ReferenceSite,
    reference_site,
)
from focuscrawl.webs.store import WebWriter

POOL = MIRROR.removesuffix("/dists")
DEBS = "debs"  # the folder under SRC that holds the downloaded .deb files
DOC_ROOT = "usr/share/doc/"
DEFAULT_MAX_DOWNLOAD_MB = 350
DEFAULT_MAX_PAGES_PER_SITE = 4000
# Chosen from bookworm's main/Contents-all (HTML files under usr/share/doc per package; docs/web-format.md has
# the command) for large generated sites near the suite's topics, and large ones far from all of them.
# Downloaded in this order until the size cap; (package, why) pairs, the why only documents the choice.
DOC_PACKAGES = (
    ("libbiojava-java-doc", "biology: Javadoc API of BioJava, ~5,000 pages"),
    ("seqan3-doc", "biology: Doxygen API of SeqAn3 (sequence analysis), ~2,200 pages"),
    ("libpwiz-doc", "biology: Doxygen API of ProteoWizard (proteomics), ~2,700 pages"),
    ("libsbml5-doc", "biology: API of libSBML (systems biology markup), ~2,800 pages"),
    ("python-skbio-doc", "biology: Sphinx API of scikit-bio, ~840 pages"),
    ("libstatgen-doc", "biology: Doxygen API of libStatGen (genetics), ~830 pages"),
    ("python-statsmodels-doc", "statistics: Sphinx API of statsmodels, ~6,200 pages"),
    ("python-scipy-doc", "mathematics: Sphinx reference of SciPy, ~4,300 pages"),
    ("liblapack-doc", "mathematics: Doxygen API of LAPACK, ~3,600 pages"),
    ("octave-doc", "mathematics: GNU Octave's manual and function reference, ~2,900 pages"),
    ("libcommons-math3-java-doc", "mathematics: Javadoc API of Commons Math, ~2,200 pages"),
    ("libeigen3-doc", "mathematics: Doxygen API of Eigen (linear algebra), ~1,500 pages"),
    ("casacore-doc", "astronomy: Doxygen API of casacore (radio astronomy), ~6,800 pages"),
    ("python-astropy-doc", "astronomy: Sphinx API of Astropy, ~1,600 pages"),
    ("starlink-ttools-java-doc", "astronomy: Javadoc of STILTS (astronomical tables), ~1,100 pages"),
    ("python-astroquery-doc", "astronomy: Sphinx API of astroquery, ~380 pages"),
    ("libball1.5-doc", "chemistry: Doxygen API of BALL (biochemical algorithms), ~4,800 pages"),
    ("rdkit-doc", "chemistry: API of RDKit (cheminformatics), ~2,700 pages"),
    ("libjmol-java-doc", "chemistry: Javadoc of Jmol (molecule viewer), ~1,200 pages"),
    ("grass-dev-doc", "geography: programmer's manual of GRASS GIS, ~1,700 pages"),
    ("libgeos-doc", "geography: Doxygen API of GEOS (geometry engine), ~1,400 pages"),
    ("geographiclib-doc", "geography: GeographicLib's API, ~400 pages"),
    ("libboost1.81-doc", "no topic: Boost's C++ library docs, ~3,900 pages"),
    ("libstdc++-12-doc", "no topic: Doxygen API of the GNU C++ library, ~3,900 pages"),
    ("apache2-doc", "no topic: Apache HTTP Server manual, ~2,700 pages"),
    ("postgresql-doc-15", "no topic: PostgreSQL manual, ~1,200 pages"),
    ("python-django-doc", "no topic: Django's documentation, ~700 pages"),
)
# A documentation page whose path says it is generated API/reference matter (Doxygen, Javadoc, Sphinx
# autodoc, Texinfo indexes). The rest of a documentation site is kind.guide (manuals, tutorials, overviews).
REFERENCE_PATH = re.compile(
    r"(^|/)(class|struct|union|namespace|interface|group__|dir_|globals|functions|files|annotated|hierarchy)"
    r"|_8(h|hpp|cpp|c|cc|java|py)|(^|/)(api|apidocs|reference|generated|_modules|modules|javadoc|refman)(/|$)"
    r"|(^|/)(package-summary|package-tree|package-frame|allclasses|index-all|constant-values|genindex|py-modindex)"
    r"|(^|/)[A-Z][A-Za-z0-9]+(\.[A-Za-z0-9]+)*\.html?$")

ABSOLUTE_HREF = re.compile(rb"""href\s*=\s*["']?((?:https?:)?//[^"'\s>]+)""", re.IGNORECASE)


DOCS_SOURCE = (
    " Plus documentation sites: the HTML under /usr/share/doc of Debian documentation packages (.deb from the "
    "pool, SHA256 checked against Packages), each at docs.PROJECTHOST/PROJECTPATH/ with its own links, linked "
    "both ways with its project page; labelled kind.doc and kind.reference (generated API pages) or "
    "kind.guide, never with a topic: a topic's pages are its projects."
)


REFERENCE_SOURCE = (
    " Reference sites: the HTML of packages of large reference sites the documentation links to (the Java SE "
    "API, cppreference, Python's documentation), each at the upstream root those links use (a fact of the "
    "package, focuscrawl.webs.debian_reference_sites), labelled as the documentation sites."
)


ENTRY_SOURCE = (
    " Entry links: a documentation page's external link to a project's Homepage goes to its project page, and "
    "one into a documentation site's upstream location (learned from the links) to the web's copy of the page; "
    "project pages of packages Debian relates to a documentation package (same source, a relation to it or to "
    "a binary it documents) link to its site."
)


class DocsBuildError(ValueError):
    """A documentation package that cannot be used: a bad .deb, a SHA256 that does not match, ..."""


@dataclass(frozen=True)
class DebInfo:
    """What the Packages index says of one binary package's .deb."""

    name: str
    source: str
    filename: str  # path under the pool's root: pool/main/...
    sha256: str
    size: int


def deb_index(src: Path, names: set[str] | None = None) -> dict[str, DebInfo]:
    """Filename, SHA256 and size of the binaries in ``src``'s Packages index (only ``names``, when given)."""
    found: dict[str, DebInfo] = {}
    for record in stanzas(read_text(_find(Path(src), "Packages"))):
        name = record.get("Package", "")
        if not name or name in found or (names is not None and name not in names):
            continue
        try:
            size = int(record.get("Size", "0"))
        except ValueError:
            size = 0
        found[name] = DebInfo(name, record.get("Source", name).split()[0], record.get("Filename", ""),
                              record.get("SHA256", "").lower(), size)
    return found


def download_docs(src: Path, packages: list[str] | tuple[str, ...] | None = None, *,
                  max_mb: float = DEFAULT_MAX_DOWNLOAD_MB, timeout: float = 120.0, get=_get,
                  say: Callable[[str], None] = lambda line: None, reference_sites: bool = True) -> list[Path]:
    """Fetch the .deb files of ``packages`` (default ``DOC_PACKAGES``, then, with ``reference_sites``, the
    packages of ``REFERENCE_SITES``) from the Debian pool into ``src/debs``,
    in order, stopping before the one that would take the total over ``max_mb`` megabytes. Each is checked
    against the SHA256 of ``src``'s Packages index; a file already there with that SHA256 is not fetched again.
    Returns the .deb files kept, in order."""
    if max_mb <= 0:
        raise ValueError("the download cap must be above 0 MB")
    wanted = list(packages) if packages is not None else [name for name, _ in DOC_PACKAGES] + (
        [site.package for site in REFERENCE_SITES] if reference_sites else [])
    index = deb_index(src, set(wanted))
    missing = [name for name in wanted if name not in index]
    if missing:
        raise DocsBuildError(f"{_find(Path(src), 'Packages')}: no package {', '.join(missing)} in this index")
    folder = Path(src) / DEBS
    folder.mkdir(parents=True, exist_ok=True)
    kept, total = [], 0
    for name in wanted:
        info = index[name]
        if not re.fullmatch(r"pool/[A-Za-z0-9+._~/-]+\.deb", info.filename) or not info.sha256:
            raise DocsBuildError(f"Packages: {name} has no usable Filename/SHA256 ({info.filename!r})")
        if total + info.size > max_mb * 1e6:
            say(f"skipped {name} ({info.size / 1e6:.1f} MB): over the {max_mb:g} MB cap")
            continue
        path = folder / posixpath.basename(info.filename)
        if not (path.is_file() and _file_sha256(path) == info.sha256):
            data = get(f"{POOL}/{info.filename}", timeout)
            digest = hashlib.sha256(data).hexdigest()
            if digest != info.sha256:
                raise DocsBuildError(f"{POOL}/{info.filename}: SHA256 {digest} is not the Packages index's "
                                     f"{info.sha256}")
            path.with_suffix(".part").write_bytes(data)
            path.with_suffix(".part").replace(path)
            say(f"fetched {name} ({info.size / 1e6:.1f} MB)")
        kept.append(path)
        total += info.size
    return kept


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def ar_members(data: bytes, origin: str = ".deb") -> dict[str, bytes]:
    """The members of an ``ar`` archive (a .deb is one: debian-binary, control.tar.*, data.tar.*)."""
    if not data.startswith(b"!<arch>\n"):
        raise DocsBuildError(f"{origin}: not a .deb (no ar archive header)")
    members, offset = {}, 8
    while offset + 60 <= len(data):
        header = data[offset:offset + 60]
        if header[58:60] != b"`\n":
            raise DocsBuildError(f"{origin}: damaged ar member header at byte {offset}")
        name = header[:16].decode("ascii", errors="replace").strip().rstrip("/")
        try:
            size = int(header[48:58].decode("ascii").strip())
        except ValueError:
            raise DocsBuildError(f"{origin}: damaged ar member size at byte {offset}") from None
        members[name] = data[offset + 60:offset + 60 + size]
        offset += 60 + size + (size % 2)  # members are padded to an even length
    return members


def deb_html_files(path: Path, folder: str = DOC_ROOT) -> dict[str, bytes]:
    """The HTML files a .deb ships under ``folder`` (/usr/share/doc): path inside the package
    (``usr/share/doc/...``) -> bytes. Symbolic links to other HTML files of the same package are followed;
    others are left out."""
    folder = folder.strip("/") + "/"
    members = ar_members(Path(path).read_bytes(), str(path))
    data_name = next((name for name in members if name.startswith("data.tar")), None)
    if data_name is None:
        raise DocsBuildError(f"{path}: a .deb without data.tar.*")
    if data_name.endswith(".zst"):
        raise DocsBuildError(f"{path}: data.tar.zst is not readable here (bookworm's packages use .xz)")
    try:
        archive = tarfile.open(fileobj=io.BytesIO(members[data_name]), mode="r:*")
    except tarfile.TarError as exc:
        raise DocsBuildError(f"{path}: {data_name} is not a readable tar archive ({exc})") from None
    files: dict[str, bytes] = {}
    links: dict[str, str] = {}
    with archive:
        for member in archive:
            name = posixpath.normpath(member.name.removeprefix("./"))
            if not name.startswith(folder) or not name.lower().endswith((".html", ".htm")):
                continue
            if member.isfile():
                stream = archive.extractfile(member)
                files[name] = stream.read() if stream is not None else b""
            elif member.issym():
                links[name] = posixpath.normpath(posixpath.join(posixpath.dirname(name), member.linkname))
    for name, target in links.items():
        if target in files:
            files[name] = files[target]
    return files


def doc_site_url(project: str) -> str:
    """The root of a project's documentation site: ``https://HOST/PATH`` -> ``https://docs.HOST/PATH/``, PATH
    cut before its first segment that is not a plain name (``/downloads.shtml``, ``/wiki/C++_Library``)."""
    parts = urlsplit(project)
    segments = []
    for segment in parts.path.split("/"):
        if not re.fullmatch(r"[A-Za-z0-9_-]+", segment):
            if segment:
                break
            continue
        segments.append(segment)
    return f"https://docs.{parts.hostname}/" + "".join(f"{segment}/" for segment in segments)


def page_kind(relative: str, reference_path: str = "") -> str:
    """``kind.reference`` for a generated API/reference page (by its path in the documentation, or by a
    reference site's own ``reference_path``), else ``kind.guide``."""
    reference = REFERENCE_PATH.search(relative) or (reference_path and re.search(reference_path, relative))
    return "kind.reference" if reference else "kind.guide"


def _html_folder(files: dict[str, bytes]) -> str:
    """The package's HTML folder: the deepest folder holding all its HTML files."""
    return posixpath.commonpath([posixpath.dirname(p) for p in files]) if files else ""


def _site_pages(files: dict[str, bytes], root: str, max_pages: int, base_dir: str) -> dict[str, str]:
    """The pages kept of one package's HTML files: path -> URL under ``root`` (the file's path below
    ``base_dir``), at most ``max_pages``, taken in breadth-first order of their links from the shallowest index
    page, so that what is kept hangs together."""
    url_of = {path: normalize_url(root + posixpath.relpath(path, base_dir)) or root for path in files}
    path_of = {url: path for path, url in url_of.items()}
    start = min(files, key=lambda p: (p.count("/"), not posixpath.basename(p).startswith("index"), p))
    order, seen, queue = [], {start}, deque([start])
    while queue and len(order) < max_pages:
        path = queue.popleft()
        order.append(path)
        for link in parse_document(decode_html(files[path]), url_of[path], max_links=5000).links:
            target = _page_path(link.url, path_of)
            if target is not None and target not in seen:
                seen.add(target)
                queue.append(target)
    rest = [p for p in sorted(files) if p not in seen]
    return {path: url_of[path] for path in (order + rest)[:max_pages]}


def _page_path(url: str, path_of: dict[str, str]) -> str | None:
    """The file a link within a documentation site names (a folder's link names its index.html)."""
    url = url.split("#", 1)[0]
    found = path_of.get(url)
    if found is None and url.endswith("/"):
        found = path_of.get(url + "index.html") or path_of.get(url + "index.htm")
    return found


@dataclass
class DocSite:
    """One documentation package as it went into the web."""

    package: str
    project: str
    root: str
    index: str
    files: int
    pages: int
    reference: int
    sha256: str
    matches_packages: bool
    # entry links (focuscrawl.webs.debian_docs_links): the upstream roots learned, the site's external links
    # mapped onto the web's pages, and the project pages that link in by a Debian relation, by relation
    upstream_roots: list[str] = field(default_factory=list)
    links_mapped: dict[str, int] = field(default_factory=dict)
    links_in_by_relation: dict[str, int] = field(default_factory=dict)


@dataclass
class _WrittenSite:
    """A site whose pages are written and whose links wait for every site to be known (the mapping of one
    site's external links needs all sites' upstream roots)."""

    tree: SiteTree
    title: str
    links: list[tuple[str, list[tuple[str, str, bool]]]]  # page URL -> its links: (URL, anchor, in the site)


def write_doc_pages(writer: WebWriter, package: str, source: str, files: dict[str, bytes], project: str,
                    project_title: str, max_pages: int,
                    placed: ReferenceSite | None = None) -> tuple[_WrittenSite, int]:
    """Add one package's HTML documentation as the pages of the site under ``doc_site_url(project)``, or, for
    a reference site (``placed``), under its root, its files' paths taken below its HTML folder. Returns the
    site with its pages' links still to write, and how many of its pages are reference pages."""
    root = placed.root if placed else doc_site_url(project)
    own_host = urlsplit(root).hostname
    base_dir = placed.html_folder.strip("/") if placed else _html_folder(files)
    kept = _site_pages(files, root, max_pages, base_dir)
    kept_urls = {url: path for path, url in kept.items()}
    tree = SiteTree(package, source, project, next(iter(kept.values())),
                    {posixpath.relpath(path, base_dir) for path in files},
                    {posixpath.relpath(path, base_dir): url for path, url in kept.items()},
                    tail_paths=bool(placed and placed.tail_paths))
    site, reference = _WrittenSite(tree, project_title, []), 0
    for path, url in kept.items():
        parsed = parse_document(decode_html(files[path]), url, max_links=5000)
        kind = page_kind(url.removeprefix(root), placed.reference_path if placed else "")
        reference += kind == "kind.reference"
        writer.add_page(url, title=parsed.title or posixpath.basename(path), text=parsed.text,
                        labels={"kind.doc", kind, f"docs.{package}"})
        links, absolute = [], None
        for link in parsed.links:
            target = _page_path(link.url, kept_urls)
            if target is not None:
                links.append((kept[target], link.anchor, True))
                continue
            target = link.url.split("#", 1)[0]
            if urlsplit(target).hostname == own_host:
                # on the site's own host: an upstream URL written out in full (docs.scipy.org/doc/scipy/...), or a
                # relative link to a file the site did not keep, which names no upstream page: dropped
                absolute = _absolute_hrefs(files[path]) if absolute is None else absolute
                if target not in absolute:
                    continue
            links.append((target, link.anchor, False))
        site.links.append((url, links))
    return site, reference


def _absolute_hrefs(html: bytes) -> set[str]:
    """The page's links written as absolute URLs (``https://...``, ``//host/...``), normalised, no fragment."""
    found = set()
    for href in ABSOLUTE_HREF.findall(html):
        url = normalize_url(href.decode("utf-8", errors="replace").replace("&amp;", "&"), "https://absolute.invalid/")
        if url is not None:
            found.add(url.split("#", 1)[0])
    return found


def write_doc_links(writer: WebWriter, site: _WrittenSite, upstream: UpstreamLinks | None) -> None:
    """Write a site's links: its own, then each external link onto the web's page for it (``upstream``), else
    as it is (a 404 dead end) unless it names the site's own host; and the links between index and project."""
    tree = site.tree
    own_host = urlsplit(tree.index).hostname
    for url, links in site.links:
        for target, anchor, internal in links:
            mapped = None if internal or upstream is None else upstream.target(target, tree)
            if internal or mapped is not None:
                writer.add_link(url, mapped or target, anchor)
            elif urlsplit(target).hostname != own_host:  # off-site: kept, a 404 if not in the web
                writer.add_link(url, target, anchor)
    writer.add_link(tree.index, tree.project, f"{site.title} home page")
    writer.add_link(tree.project, tree.index, f"{site.title} documentation")


def _project_of(package: str, source: str, projects: dict[str, list[str]], packages: dict[str, Package],
                placed: ReferenceSite | None = None) -> str | None:
    """The project page a documentation package belongs to: its own, else that of a binary of its source, else
    (a reference site's fact) the page of the Homepage its entry gives."""
    for url, names in projects.items():
        if package in names:
            return url
    for url, names in projects.items():
        if any(packages[name].source == source for name in names):
            return url
    given = project_url(placed.homepage) if placed and placed.homepage else None
    return given if given in projects else None


@dataclass(frozen=True)
class DocsPlan:
    """What a build puts in: page caps, the reference sites (``debian_reference_sites``) and entry links."""

    max_pages: int = DEFAULT_MAX_PAGES_PER_SITE
    entry_links: bool = True
    reference_sites: tuple[ReferenceSite, ...] = REFERENCE_SITES  # (): none, the builds before them
    max_reference_pages: int = DEFAULT_MAX_PAGES_PER_REFERENCE_SITE

    def skips(self, package: str) -> bool:
        """A known reference site's package the plan leaves out (its .deb may sit in a shared cache)."""
        return reference_site(package) is not None and reference_site(package, self.reference_sites) is None

    def meta(self, sites: list[DocSite]) -> dict:
        meta = {"max_pages_per_site": self.max_pages, "entry_links": self.entry_links,
                "sites": [vars(site) for site in sites], "pool": POOL}
        if self.reference_sites:  # only then: a build without them keeps the first builds' meta
            meta["max_pages_per_reference_site"] = self.max_reference_pages
            meta["reference_sites"] = [vars(site) for site in self.reference_sites]
        return meta


def _add_doc_sites(src: Path, plan: DocsPlan, sites: list[DocSite]):
    """The hook ``build_debian`` calls with its writer: adds every .deb under ``src/debs`` as a doc site (but a
    reference site's the plan leaves out)."""
    debs = [path for path in sorted((Path(src) / DEBS).glob("*.deb")) if not plan.skips(_deb_package(path))]
    if not debs:
        raise DocsBuildError(f"{Path(src) / DEBS}: no .deb files (fetch them with --download SUITE)")
    index = deb_index(src, {_deb_package(path) for path in debs})

    def add(writer: WebWriter, projects: dict[str, list[str]], packages: dict[str, Package]) -> None:
        written = [_add_doc_site(writer, path, index, plan, projects, packages, sites) for path in debs]
        _write_links(writer, written, sites, projects, packages, plan.entry_links)
        writer.set_meta("name", "debian-docs")
        writer.set_meta("builder", "focuscrawl.webs.debian_docs.build_debian_docs")
        writer.set_meta("source", writer.meta_value("source") + DOCS_SOURCE
                        + (REFERENCE_SOURCE if plan.reference_sites else "")
                        + (ENTRY_SOURCE if plan.entry_links else ""))
        writer.set_meta("docs", plan.meta(sites))

    return add


def _deb_package(path: Path) -> str:
    return path.name.split("_", 1)[0]


def _add_doc_site(writer: WebWriter, path: Path, index: dict[str, DebInfo], plan: DocsPlan,
                  projects: dict[str, list[str]], packages: dict[str, Package], sites: list[DocSite]) -> _WrittenSite:
    """Write one .deb's documentation site's pages; its record goes to ``sites``."""
    package = _deb_package(path)
    info = index.get(package)
    if info is None:
        raise DocsBuildError(f"{path}: package {package} is not in the Packages index")
    placed = reference_site(package, plan.reference_sites)
    project = _project_of(package, info.source, projects, packages, placed)
    folder = placed.html_folder if placed else DOC_ROOT
    files = deb_html_files(path, folder)
    if project is None:
        raise DocsBuildError(f"{path}: no project page for its source {info.source} (no Homepage)")
    if not files:
        raise DocsBuildError(f"{path}: no HTML under /{folder.strip('/')}/")
    title = packages[package].source if package in packages else info.source
    max_pages = plan.max_reference_pages if placed else plan.max_pages
    site, reference = write_doc_pages(writer, package, info.source, files, project, title, max_pages, placed)
    digest = _file_sha256(path)
    sites.append(DocSite(package, project, placed.root if placed else doc_site_url(project), site.tree.index,
                         len(files), len(site.tree.kept), reference, digest, digest == info.sha256))
    return site


def _write_links(writer: WebWriter, written: list[_WrittenSite], sites: list[DocSite],
                 projects: dict[str, list[str]], packages: dict[str, Package], entry_links: bool) -> None:
    """Every site's links; with ``entry_links``, external links mapped onto the web's pages and links in from
    the project pages Debian relates to each documentation package (``focuscrawl.webs.debian_docs_links``)."""
    upstream = None
    if entry_links:
        learn_upstream_roots([site.tree for site in written],
                             (target for site in written for _, links in site.links
                              for target, _, internal in links if not internal))
        upstream = UpstreamLinks([site.tree for site in written], projects)
    for site in written:
        write_doc_links(writer, site, upstream)
    if upstream is None:
        return
    named_by, by_source = relation_indexes(projects, packages)
    for site, record in zip(written, sites):
        record.upstream_roots = site.tree.roots
        record.links_mapped = vars(upstream.counts[site.tree.package])
        relations = related_projects(site.tree, projects, packages, named_by, by_source)
        for url in relations:
            writer.add_link(url, site.tree.index, f"{site.title} documentation")
        record.links_in_by_relation = dict(sorted(Counter(relations.values()).items()))


def build_debian_docs(src: Path, out: Path, overwrite: bool = False, *,
                      max_pages_per_site: int = DEFAULT_MAX_PAGES_PER_SITE, reverse_links: int = 20,
                      entry_links: bool = True, reference_sites: tuple[ReferenceSite, ...] = REFERENCE_SITES,
                      max_pages_per_reference_site: int = DEFAULT_MAX_PAGES_PER_REFERENCE_SITE) -> Path:
    """The Debian web of ``src``'s index plus a documentation site per .deb under ``src/debs``; with
    ``entry_links`` (the default), entered as the real data says (``focuscrawl.webs.debian_docs_links``),
    else only from its project page. The packages of ``reference_sites`` go to their upstream roots, with
    their own page cap; ``reference_sites=()`` builds the webs from before them (their .deb files skipped)."""
    if max_pages_per_site < 1 or max_pages_per_reference_site < 1:
        raise ValueError("max_pages_per_site and max_pages_per_reference_site must be 1 or more")
    plan = DocsPlan(max_pages_per_site, entry_links, tuple(reference_sites), max_pages_per_reference_site)
    return build_debian(src, out, overwrite, reverse_links=reverse_links,
                        extend=_add_doc_sites(Path(src), plan, []))
