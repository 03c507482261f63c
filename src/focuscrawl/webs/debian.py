"""Build a many-site offline web from Debian's package index (``Packages`` and ``Translation-en`` of main).

A page is one upstream project: a distinct ``Homepage:`` URL, merging the binary packages that share it;
its text is their descriptions. Its host is the homepage's host, except on code-hosting sites, which are
split per owner the way their page sites are (``github.com/OWNER/REPO`` -> ``OWNER.github.io/repo``), so
that 12,000 projects are not one host. Links are the binaries' relations (Pre-Depends, Depends, Recommends,
Suggests, Enhances; first alternative) and, capped per page, the reverse "used by" relations: relations
alone point down to libraries and a crawl exhausts them. A relation to a package without a Homepage is a
404 dead end. Labels (ground truth only) are debtags ``field::*`` facets and the Debian Blends task lists,
both curated by people: the task metapackages that define them are never pages, and links to them are
dropped, since their Depends would be perfect topic hubs (docs/history/many-site-web-data.md).
"""

from __future__ import annotations

import gzip
import hashlib
import lzma
import re
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from focuscrawl.urls import normalize_url
from focuscrawl.webs.store import WebWriter

MIRROR = "https://deb.debian.org/debian/dists"
MIRROR_HOST = "deb.debian.org"
DEFAULT_SUITE = "bookworm"
# What --download fetches, relative to dists/SUITE/ (Release names the other two with their SHA256).
INDEX_FILES = ("Release", "main/binary-amd64/Packages.xz", "main/i18n/Translation-en.xz")
RELATIONS = ("Pre-Depends", "Depends", "Recommends", "Suggests", "Enhances")
# Source packages of the Debian Blends: their binaries are task metapackages (and a few config/logo
# packages). Their members are the labels; they are never pages.
BLENDS = ("debian-astro", "debian-design", "debian-edu", "debian-games", "debian-gis", "debian-hamradio",
          "debian-junior", "debian-med", "debian-multimedia", "debian-pan", "debian-parl", "debian-science",
          "debichem")
# Blend binaries that list infrastructure, not a topic's software.
NOT_TASKS = re.compile(r"-(tasks|config|common|logo)$")
# Code-hosting hosts split per owner, as their page sites are: github.com/OWNER -> OWNER.github.io.
CODE_HOSTS = {"github.com": "github.io", "gitlab.com": "gitlab.io", "bitbucket.org": "bitbucket.io",
              "codeberg.org": "codeberg.page", "salsa.debian.org": "pages.debian.net"}
# Topic rows: (debtags facets, blend tasks or task prefixes ending in '-'). The first five were measured in
# the spike; the others are candidates.
TOPICS = {
    "biology": (("field::biology",), ("med-bio", "med-bio-dev", "med-phylogeny", "science-biology")),
    "mathematics": (("field::mathematics", "field::statistics"),
                    ("science-mathematics", "science-numericalcomputation", "science-statistics")),
    "astronomy": (("field::astronomy",), ("astro-",)),
    "chemistry": (("field::chemistry",), ("debichem-", "science-chemistry")),
    "geography": (("field::geography",), ("gis-", "science-geography")),
    "medicine": (("field::medicine",), ("med-imaging", "med-imaging-dev", "med-practice", "med-physics",
                                        "med-psychology", "med-statistics", "med-epi", "med-his", "med-dental",
                                        "med-oncology", "med-pharmacy", "med-laboratory", "med-data")),
    "physics": (("field::physics",), ("science-physics", "science-highenergy-physics",
                                      "science-nanoscale-physics")),
    "linguistics": (("field::linguistics",), ("science-linguistics",)),
    "electronics": (("field::electronics",), ("science-electronics",)),
}
SOURCE = (
    "Debian's package index (main, amd64: Packages and Translation-en) from deb.debian.org. Page = one upstream "
    "project (a distinct Homepage, its binary packages merged), text = their Debian descriptions. Hosts on "
    "code-hosting sites are constructed per owner ({split}); hub hosts, if any, are constructed too. Links = "
    "package relations (first alternative) plus up to {reverse} reverse 'used by' relations a page; relations "
    "to packages without a Homepage answer 404. Labels: debtags field::* and the Debian Blends task lists "
    "(the task metapackages are not pages)."
)


@dataclass
class Package:
    name: str
    source: str
    homepage: str
    short: str
    md5: str
    maintainer: str
    tags: list[str]
    relations: list[str]  # first alternatives, in field order
    members: list[str] = field(default_factory=list)  # a task metapackage's listed packages, all alternatives


def read_text(path: Path) -> str:
    """A file's text, decompressed by its suffix (.xz, .gz or none)."""
    raw = path.read_bytes()
    try:
        if path.suffix == ".xz":
            raw = lzma.decompress(raw)
        elif path.suffix == ".gz":
            raw = gzip.decompress(raw)
    except (lzma.LZMAError, EOFError, gzip.BadGzipFile) as exc:
        raise ValueError(f"{path}: not a readable {path.suffix} file ({exc})") from exc
    return raw.decode("utf-8", errors="replace")


def stanzas(text: str) -> Iterator[dict[str, str]]:
    """The RFC 822-style stanzas of a Debian index: field name -> value, continuation lines joined by newlines."""
    record: dict[str, str] = {}
    key = None
    for line in text.splitlines():
        if not line.strip():
            if record:
                yield record
            record, key = {}, None
        elif line[0] in " \t":
            if key is not None:
                record[key] += "\n" + line[1:]
        else:
            key, _, value = line.partition(":")
            record[key] = value.strip()
    if record:
        yield record


def relation_names(value: str, all_alternatives: bool = False) -> list[str]:
    """Package names of a relation field (``a (>= 1) | b, c:any``): the first alternative of each, or all."""
    names = []
    for group in value.split(","):
        for alternative in group.split("|"):
            name = re.split(r"[\s(\[:<]", alternative.strip(), maxsplit=1)[0]
            if name:
                names.append(name)
            if not all_alternatives:
                break
    return names


def long_description(text: str) -> list[str]:
    """Paragraphs of a Description-en's extended part (its first line is the short description)."""
    paragraphs, current = [], []
    for line in text.split("\n")[1:]:
        if line.strip() == ".":
            if current:
                paragraphs.append(" ".join(current))
            current = []
        elif line.strip():
            current.append(line.strip())
    if current:
        paragraphs.append(" ".join(current))
    return paragraphs


def project_url(homepage: str, split_code_hosts: bool = True) -> str | None:
    """A homepage's page URL, or None when it is unusable: https, no ``www.``, no trailing slash, and on
    code-hosting sites the owner's page site (``github.com/Owner/Repo.git`` -> ``owner.github.io/repo``)."""
    url = normalize_url(homepage)
    if url is None:
        return None
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    host = host[4:] if host.startswith("www.") else host
    path = parts.path.rstrip("/")
    segments = [s for s in path.split("/") if s]
    if split_code_hosts and host in CODE_HOSTS and segments:
        rest = "/".join(segments[1:]).lower()
        host, path = f"{segments[0].lower()}.{CODE_HOSTS[host]}", "/" + rest.removesuffix(".git")
    elif split_code_hosts and host == "sourceforge.net" and len(segments) >= 2 and segments[0] in ("projects", "p"):
        host, path = f"{segments[1].lower()}.sourceforge.io", "/" + "/".join(segments[2:])
    query = f"?{parts.query}" if parts.query else ""
    return normalize_url(f"https://{host}{path.rstrip('/') or '/'}{query}")


def _dead_end_url(name: str, codename: str) -> str:
    return f"https://packages.debian.org/{codename}/{name}"


def _find(src: Path, name: str) -> Path:
    for suffix in (".xz", ".gz", ""):  # what --download writes first, so that it wins over an older copy
        path = src / f"{name}{suffix}"
        if path.is_file():
            return path
    raise FileNotFoundError(f"{src}: no {name}, {name}.xz or {name}.gz (Debian's index of main; "
                            "fetch it with --download SUITE)")


def read_release(src: Path) -> dict[str, str]:
    """The fields of ``src/Release`` (or an InRelease's signed text), empty when there is none."""
    for name in ("Release", "InRelease"):
        path = src / name
        if path.is_file():
            for record in stanzas(path.read_text(encoding="utf-8", errors="replace")):
                if "Suite" in record or "Codename" in record:
                    return record
    return {}


def release_hashes(release: dict[str, str]) -> dict[str, str]:
    """SHA256 of each file a Release lists, by its path under dists/SUITE/."""
    hashes = {}
    for line in release.get("SHA256", "").splitlines():
        fields = line.split()
        if len(fields) == 3:
            hashes[fields[2]] = fields[0]
    return hashes


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_packages(src: Path) -> tuple[dict[str, Package], dict[str, str], dict[str, dict]]:
    """The binary packages of ``src``'s Packages, the long descriptions by Description-md5, and file provenance."""
    src = Path(src)
    if not src.is_dir():
        raise FileNotFoundError(f"{src}: not a folder (expected one holding Packages and Translation-en)")
    packages_path, translation_path = _find(src, "Packages"), _find(src, "Translation-en")
    packages: dict[str, Package] = {}
    for record in stanzas(read_text(packages_path)):
        name = record.get("Package", "")
        if not name or name in packages:
            continue
        relations = []
        for key in RELATIONS:
            relations += relation_names(record.get(key, ""))
        source = record.get("Source", name).split()[0]
        members = []
        if source in BLENDS:
            for key in ("Depends", "Recommends", "Suggests"):
                members += relation_names(record.get(key, ""), all_alternatives=True)
        tags = [t.strip() for t in record.get("Tag", "").replace("\n", " ").split(",") if t.strip()]
        packages[name] = Package(name, source, record.get("Homepage", "").strip(),
                                 record.get("Description", "").split("\n")[0].strip(),
                                 record.get("Description-md5", ""), record.get("Maintainer", ""),
                                 tags, list(dict.fromkeys(relations)), members)
    if not packages:
        raise ValueError(f"{packages_path}: no package stanzas (not a Debian Packages index?)")
    descriptions = {r["Description-md5"]: r.get("Description-en", "")
                    for r in stanzas(read_text(translation_path)) if "Description-md5" in r}
    if not descriptions:
        raise ValueError(f"{translation_path}: no Description-en stanzas (not a Debian Translation-en index?)")
    files = {p.name: {"sha256": _sha256(p), "bytes": p.stat().st_size} for p in (packages_path, translation_path)}
    return packages, descriptions, files


def package_labels(packages: dict[str, Package]) -> dict[str, set[str]]:
    """Ground-truth labels of each labelled package: debtags facets, blend tasks and the topic union."""
    tasks: dict[str, list[str]] = {}  # member package -> tasks listing it
    for pkg in packages.values():
        if pkg.source in BLENDS and not NOT_TASKS.search(pkg.name):
            for member in pkg.members:
                tasks.setdefault(member, []).append(pkg.name)
    task_source = {p.name: p.source for p in packages.values() if p.source in BLENDS}
    labels: dict[str, set[str]] = {}
    for pkg in packages.values():
        facets = [t for t in pkg.tags if t.startswith("field::") and len(t) > len("field::")]
        mine = tasks.get(pkg.name, [])
        if not facets and not mine:
            continue
        found = {"debtags." + t.replace("::", ".").replace(":", ".") for t in facets}
        found |= {f"blends.{task_source[t]}.{t}" for t in mine}
        for topic, (topic_facets, topic_tasks) in TOPICS.items():
            if any(f == x or f.startswith(x + ":") for f in facets for x in topic_facets) or any(
                    t == x or (x.endswith("-") and t.startswith(x)) for t in mine for x in topic_tasks):
                found.add(f"topic.{topic}")
        labels[pkg.name] = found
    return labels


def _main_binary(names: list[str], packages: dict[str, Package]) -> str:
    # The binary named after its source, else the shortest name that is not a library or -dev/-doc/-data.
    def rank(name: str) -> tuple:
        pkg = packages[name]
        minor = name.startswith("lib") or name.endswith(("-dev", "-doc", "-data", "-common"))
        return (name != pkg.source, minor, len(name), name)

    return min(names, key=rank)


def _hub_slug(maintainer: str) -> str:
    match = re.search(r"<([^>]+)>", maintainer)
    address = (match.group(1) if match else maintainer).lower()
    return re.sub(r"[^a-z0-9]+", "-", address).strip("-")[:60] or "unknown"


def build_debian(src: Path, out: Path, overwrite: bool = False, *, reverse_links: int = 20, hubs: bool = False,
                 split_code_hosts: bool = True, hub_page_size: int = 25,
                 extend: Callable[[WebWriter, dict[str, list[str]], dict[str, Package]], None] | None = None) -> Path:
    """Convert Debian's index at ``src`` (Packages, Translation-en, optionally Release) into an offline web.

    ``extend`` is called last with the writer, the project pages (URL -> binaries) and the packages: a web
    built on this one adds its pages there (``focuscrawl.webs.debian_docs``)."""
    if reverse_links < 0:
        raise ValueError("reverse_links must be 0 or more")
    packages, descriptions, files = load_packages(src)
    release = read_release(Path(src))
    _check_against_release(files, release)
    codename = release.get("Codename") or release.get("Suite") or "stable"
    labels = package_labels(packages)
    projects = _projects(packages, split_code_hosts)
    forward, used_by = _relation_links(packages, projects, codename)
    meta = _meta(release, files, reverse_links=reverse_links, hubs=hubs, split_code_hosts=split_code_hosts)
    hub_members: dict[str, list[str]] = {}
    with WebWriter(out, meta, overwrite=overwrite) as writer:
        for url, names in projects.items():
            ordered = _write_project(writer, url, names, packages, descriptions, labels)
            for dst, text in forward[url]:
                writer.add_link(url, dst, text)
            referrers = used_by.get(url, {})
            ranked = sorted(referrers, key=lambda r: hashlib.sha1(f"{url} {r}".encode()).digest())
            for src_url in ranked[:reverse_links]:
                writer.add_link(url, src_url, f"used by {referrers[src_url]}")
            if hubs:
                for maintainer in dict.fromkeys(packages[n].maintainer for n in ordered if packages[n].maintainer):
                    hub_members.setdefault(maintainer, []).append(url)
        if hubs:
            _write_hubs(writer, hub_members, projects, packages, hub_page_size)
        if extend is not None:
            extend(writer, projects, packages)
    return out


def _check_against_release(files: dict[str, dict], release: dict[str, str]) -> None:
    """Note in each index file's record whether its SHA256 is the one the Release lists (None: not listed)."""
    listed = release_hashes(release)
    for name, info in files.items():
        # main's amd64 index: the Release lists every component's and architecture's under the same file names
        expected = listed.get(f"main/{'binary-amd64' if name.startswith('Packages') else 'i18n'}/{name}")
        info["matches_release"] = None if expected is None else expected == info["sha256"]


def _projects(packages: dict[str, Package], split_code_hosts: bool) -> dict[str, list[str]]:
    """Pages: binaries grouped by their homepage's page URL. Blend metapackages are never pages."""
    projects: dict[str, list[str]] = {}
    for name in sorted(packages):
        pkg = packages[name]
        if pkg.source in BLENDS or name.endswith(("-dbg", "-dbgsym")) or not pkg.homepage:
            continue
        url = project_url(pkg.homepage, split_code_hosts)
        if url is not None:
            projects.setdefault(url, []).append(name)
    return projects


def _anchor(packages: dict[str, Package], name: str) -> str:
    short = packages[name].short
    return f"{name}: {short}" if short else name


def _relation_links(packages: dict[str, Package], projects: dict[str, list[str]], codename: str,
                    ) -> tuple[dict[str, list[tuple[str, str]]], dict[str, dict[str, str]]]:
    """Each page's links along its binaries' relations (URL, anchor), main binary's first; and for each page,
    the pages that relate to it with the anchor a "used by" link back to them takes."""
    page_of = {name: url for url, names in projects.items() for name in names}

    def target(name: str) -> str | None:
        pkg = packages.get(name)
        if pkg is None or pkg.source in BLENDS:  # a virtual package, or a label-defining metapackage
            return None
        return page_of.get(name) or _dead_end_url(name, codename)

    forward: dict[str, list[tuple[str, str]]] = {}
    used_by: dict[str, dict[str, str]] = {}
    for url, names in projects.items():
        main = _main_binary(names, packages)
        seen = {url}
        links = forward[url] = []
        for name in [main] + names:
            for rel in packages[name].relations:
                dst = target(rel)
                if dst is not None and dst not in seen:
                    seen.add(dst)
                    links.append((dst, _anchor(packages, rel)))
                    if dst in projects:
                        used_by.setdefault(dst, {}).setdefault(url, _anchor(packages, main))
    return forward, used_by


def _meta(release: dict[str, str], files: dict[str, dict], *, reverse_links: int, hubs: bool,
          split_code_hosts: bool) -> dict:
    split = (", ".join(f"{k}/OWNER -> OWNER.{v}" for k, v in CODE_HOSTS.items())
             + ", sourceforge.net/projects/X -> X.sourceforge.io" if split_code_hosts else "not split")
    return {
        "name": "debian",
        "builder": "focuscrawl.webs.debian.build_debian",
        "source": SOURCE.format(split=split, reverse=reverse_links),
        "debian": {
            "mirror": MIRROR,
            "suite": release.get("Suite"), "codename": release.get("Codename"), "version": release.get("Version"),
            "release_date": release.get("Date"),
            "files": files,
            "options": {"reverse_links": reverse_links, "hubs": hubs, "split_code_hosts": split_code_hosts},
            "topics": {f"topic.{t}": {"debtags": list(f), "tasks": list(k)} for t, (f, k) in TOPICS.items()},
        },
    }


def _write_project(writer: WebWriter, url: str, names: list[str], packages: dict[str, Package],
                   descriptions: dict[str, str], labels: dict[str, set[str]]) -> list[str]:
    """A project's page: its binaries' descriptions, main binary's first, each paragraph once. Returns the
    binaries in that order."""
    main = _main_binary(names, packages)
    ordered = [main] + [n for n in names if n != main]
    seen_paragraphs: set[str] = set()
    parts = []
    for name in ordered:
        pkg = packages[name]
        paragraphs = [p for p in long_description(descriptions.get(pkg.md5, "")) if p not in seen_paragraphs]
        seen_paragraphs.update(paragraphs)
        parts.append("\n\n".join([_anchor(packages, name) + "."] + paragraphs))
    page_labels = set().union(*(labels.get(n, set()) for n in names))
    writer.add_page(url, title=f"{packages[main].source}: {packages[main].short}", text="\n\n".join(parts),
                    labels=page_labels)
    return ordered


def _hub_url(maintainer: str, page: int) -> str:
    base = f"https://{_hub_slug(maintainer)}.maintainers.debian.net/"
    return base if page == 0 else f"{base}page/{page + 1}"


def _write_hubs(writer: WebWriter, members: dict[str, list[str]], projects: dict[str, list[str]],
                packages: dict[str, Package], page_size: int) -> None:
    """One constructed site per maintainer (or team) listing its projects, paginated; each project links to it."""
    for maintainer, urls in sorted(members.items()):
        name = re.sub(r"\s*<[^>]*>", "", maintainer).strip() or maintainer
        pages = [urls[i:i + page_size] for i in range(0, len(urls), page_size)]
        for index, chunk in enumerate(pages):
            hub = _hub_url(maintainer, index)
            shorts = []
            for url in chunk:
                main = _main_binary(projects[url], packages)
                shorts.append(f"{main}: {packages[main].short}")
            writer.add_page(hub, title=f"Packages maintained by {name} ({index + 1}/{len(pages)})",
                            text="\n\n".join(shorts))
            for url, text in zip(chunk, shorts):
                writer.add_link(hub, url, text)
            if index + 1 < len(pages):
                writer.add_link(hub, _hub_url(maintainer, index + 1), "next page")
        for url in urls:
            writer.add_link(url, _hub_url(maintainer, 0), f"maintained by {name}")


class _SameHostRedirects(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only within deb.debian.org: the download contacts no other host."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if urlsplit(newurl).hostname != MIRROR_HOST or urlsplit(newurl).scheme != "https":
            raise OSError(f"{req.full_url} redirects to {newurl}, outside https://{MIRROR_HOST}; not followed")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _get(url: str, timeout: float) -> bytes:
    if urlsplit(url).hostname != MIRROR_HOST:  # never anything but the Debian mirror
        raise ValueError(f"{url}: only https://{MIRROR_HOST} is fetched")
    opener = urllib.request.build_opener(_SameHostRedirects)
    request = urllib.request.Request(url, headers={"User-Agent": "focuscrawl (web build debian --download)"})
    with opener.open(request, timeout=timeout) as response:
        return response.read()


def download_index(suite: str, dest: Path, *, timeout: float = 60.0, get=_get) -> list[Path]:
    """Fetch Release, main's Packages.xz and Translation-en.xz of ``suite`` from deb.debian.org into ``dest``,
    checking both index files against the SHA256 the Release lists. Three HTTPS requests, about 15 MB."""
    if not re.fullmatch(r"[a-z][a-z0-9-]*", suite):
        raise ValueError(f"{suite!r} is not a Debian suite name (e.g. bookworm, trixie, stable)")
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    release_raw = get(f"{MIRROR}/{suite}/Release", timeout)
    release = next((r for r in stanzas(release_raw.decode("utf-8", errors="replace"))
                    if "Suite" in r or "Codename" in r), {})
    expected = release_hashes(release)
    written = []
    for relative in INDEX_FILES[1:]:
        if relative not in expected:
            raise ValueError(f"{MIRROR}/{suite}/Release lists no {relative}")
        data = get(f"{MIRROR}/{suite}/{relative}", timeout)
        digest = hashlib.sha256(data).hexdigest()
        if digest != expected[relative]:
            raise ValueError(f"{MIRROR}/{suite}/{relative}: SHA256 {digest} is not the Release's {expected[relative]}")
        path = dest / Path(relative).name
        path.with_suffix(".part").write_bytes(data)
        path.with_suffix(".part").replace(path)
        written.append(path)
    (dest / "Release").write_bytes(release_raw)
    return [dest / "Release", *written]
