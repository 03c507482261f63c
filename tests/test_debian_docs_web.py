"""The Debian docs builder (``focuscrawl web build debian-docs``) on a tiny index and .deb files made here:
no network."""

from __future__ import annotations

import hashlib
import io
import lzma
import tarfile
from pathlib import Path

import pytest

from focuscrawl.bench.suite import SuiteError, find_suite, load_suite, plan_rows
from focuscrawl.cli.main import main
from focuscrawl.webs.debian_docs import (
    DEBS,
    DocsBuildError,
    ar_members,
    build_debian_docs,
    deb_html_files,
    doc_site_url,
    download_docs,
    page_kind,
)
from focuscrawl.webs.debian_docs_links import SiteTree
from focuscrawl.webs.store import OfflineWeb

PROJECT = "https://biotool.org/"
DOCS = "https://docs.biotool.org/"
INDEX = DOCS + "index.html"
OTHER = "https://webkit.example/"

BIOTOOL_DOCS = {
    "index.html": '<title>BioTool docs</title><body><p>BioTool sequence alignment documentation.</p>'
                  '<a href="guide/">Guide</a> <a href="classAligner.html#details">Aligner class</a> '
                  '<a href="style.css">style</a> <a href="https://biopython.org/wiki">elsewhere</a>'
                  '<a href="missing.html">gone</a></body>',
    "guide/index.html": '<title>Tutorial</title><body>Align two protein sequences. '
                        '<a href="../classAligner.html">Aligner</a> <a href="../index.html">home</a></body>',
    "classAligner.html": '<title>Aligner Class Reference</title><body>Aligner: sequence, genome, protein. '
                         '<a href="classScore.html">Score</a></body>',
    "classScore.html": '<title>Score Class Reference</title><body>Score of an alignment of sequences.</body>',
}
WEBKIT_DOCS = {f"api/Widget{i}.html": f"<title>Widget{i}</title><body>Widget {i}. "
               f'<a href="Widget{i + 1}.html">next</a></body>' for i in range(6)}
# links of the real kinds: into BioTool's upstream manual (a folder's link to its index, a file it does not
# have), into a mirror that shares three file names but is another tree, and BioTool's home page
UPSTREAM = "https://www.biotool.org/manual/"
MIRROR_LINKS = [f"https://biotool.org/mirror/{name}" for name in
                ("classAligner.html", "classScore.html", "guide/index.html", "a.html", "b.html", "c.html")]
WEBKIT_DOCS["api/Widget5.html"] = "<title>Widget5</title><body>Widget 5. " + "".join(
    f'<a href="{url}">x</a>' for url in [UPSTREAM + "classAligner.html", UPSTREAM + "classScore.html",
                                         UPSTREAM + "guide/", UPSTREAM, UPSTREAM + "missing.html",
                                         *MIRROR_LINKS, "http://www.biotool.org"]) + "</body>"
# WebKit's upstream documentation lives on the web's own documentation host, under en/stable/ (as SciPy's and
# Astropy's do): its pages' absolute links there are links within the site; relative links to files the package
# does not have are no upstream URLs, even when three of them end in its files' paths
WEBKIT_DOCS["index.html"] = '<title>WebKit</title><body><a href="api/Widget0.html">API</a>' + "".join(
    f'<a href="https://docs.webkit.example/en/stable/api/Widget{i}.html">v{i}</a>' for i in (1, 2, 3)) + "</body>"
WEBKIT_DOCS["api/Widget4.html"] = "<title>Widget4</title><body>Widget 4. " + "".join(
    f'<a href="../gone/api/Widget{i}.html">old {i}</a>' for i in (1, 2, 3)) + "</body>"


def _tar_xz(files: dict[str, bytes], symlinks: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:xz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo("./" + name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for name, target in (symlinks or {}).items():
            info = tarfile.TarInfo("./" + name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            archive.addfile(info)
    return buffer.getvalue()


def _ar(members: dict[str, bytes]) -> bytes:
    out = b"!<arch>\n"
    for name, data in members.items():
        out += f"{name:<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(data):<10}`\n".encode() + data
        out += b"\n" if len(data) % 2 else b""
    return out


def make_deb(package: str, pages: dict[str, str], symlinks: dict[str, str] | None = None) -> bytes:
    """A .deb whose data holds ``pages`` under usr/share/doc/PACKAGE/html/, plus a stylesheet."""
    base = f"usr/share/doc/{package}/html/"
    files = {base + name: html.encode() for name, html in pages.items()}
    files[base + "style.css"] = b"body {}"
    links = {base + name: target for name, target in (symlinks or {}).items()}
    return _ar({"debian-binary": b"2.0\n", "control.tar.xz": _tar_xz({"control": b"Package: x\n"}),
                "data.tar.xz": _tar_xz(files, links)})


DEBS_MADE = {"biotool-doc": make_deb("biotool-doc", BIOTOOL_DOCS, {"latest.html": "index.html"}),
             "webkit-doc": make_deb("webkit-doc", WEBKIT_DOCS)}

# reference sites (focuscrawl.webs.debian_reference_sites), laid out as the real packages are: the Java SE 17
# API in openjdk-17-jre-headless's folder (the -doc package's own folder holds a symbolic link into it), and
# Python's documentation, whose package has no Homepage (python3-doc, which depends on it, has one)
JAVA = "https://docs.oracle.com/en/java/javase/17/docs/"
JAVA8 = "https://docs.oracle.com/javase/8/docs/api/"
JAVA_CLASSES = ("java.base/java/lang/String", "java.base/java/lang/Object", "java.base/java/util/List",
                "java.desktop/java/awt/Frame")
JAVA_DOCS = {"index.html": '<title>JDK 17</title><body><a href="api/index.html">API</a></body>',
             "api/index.html": "<title>Java SE 17 API</title><body>" + "".join(
                 f'<a href="{name}.html">{name}</a>' for name in JAVA_CLASSES) + "</body>",
             **{f"api/{name}.html": f"<title>{name}</title><body>Class {name}.</body>" for name in JAVA_CLASSES}}
PYTHON = "https://docs.python.org/3/"
PYTHON_DOCS = {"index.html": '<title>Python 3.11</title><body><a href="library/index.html">Library</a> '
                             '<a href="tutorial/index.html">Tutorial</a></body>',
               "library/index.html": '<title>Library</title><body><a href="os.html">os</a> <a href="re.html">re'
                                     '</a> <a href="csv.html">csv</a></body>',
               "tutorial/index.html": "<title>Tutorial</title><body>Start here.</body>",
               **{f"library/{name}.html": f"<title>{name}</title><body>{name}</body>" for name in ("os", "re", "csv")}}
# a documentation site linking to the Java SE 8 API (a class Debian's 17 API lacks too) and to Python's docs
PLUGIN_DOCS = {"index.html": "<title>Plugin</title><body>" + "".join(f'<a href="{url}">x</a>' for url in [
    JAVA8 + "java/lang/String.html", JAVA8 + "java/lang/Object.html", JAVA8 + "java/util/List.html?is-external=true",
    JAVA8 + "java/lang/Gone.html", JAVA8.replace("https:", "http:") + "java/awt/Frame.html",
    "http://docs.python.org/dev/library/os.html", "http://docs.python.org/dev/library/re.html",
    "http://docs.python.org/dev/library/csv.html", PYTHON + "library/os.html#os.path"]) + "</body>"}


def make_deb_at(folder: str, pages: dict[str, str], symlinks: dict[str, str] | None = None) -> bytes:
    """A .deb whose data holds ``pages`` under ``folder`` (and ``symlinks``: path in the package -> target)."""
    files = {f"{folder}/{name}": html.encode() for name, html in pages.items()}
    return _ar({"debian-binary": b"2.0\n", "control.tar.xz": _tar_xz({"control": b"Package: x\n"}),
                "data.tar.xz": _tar_xz(files, symlinks)})


REFERENCE_DEBS = {
    "openjdk-17-doc": make_deb_at("usr/share/doc/openjdk-17-jre-headless", JAVA_DOCS, {
        "usr/share/doc/openjdk-17-doc/index.html": "../openjdk-17-jre-headless/index.html"}),
    "python3.11-doc": make_deb_at("usr/share/doc/python3.11/html", PYTHON_DOCS),
    "plugin-doc": make_deb("plugin-doc", PLUGIN_DOCS),
}


def _stanza(name: str, homepage: str, source: str = "", tags: str = "", deb: bytes | None = None,
            relations: str = "") -> tuple[str, str]:
    md5 = hashlib.md5(name.encode()).hexdigest()
    lines = [f"Package: {name}", f"Source: {source or name}", "Version: 1.0-1", "Architecture: all",
             f"Description: the {name} package", f"Description-md5: {md5}"]
    lines += [f"Homepage: {homepage}"] if homepage else []
    lines += [f"Tag: {tags}"] if tags else []
    lines += [relations] if relations else []
    if deb is not None:
        lines += [f"Filename: pool/main/{name[0]}/{source or name}/{name}_1.0-1_all.deb", f"Size: {len(deb)}",
                  f"SHA256: {hashlib.sha256(deb).hexdigest()}"]
    return "\n".join(lines) + "\n", f"Package: {name}\nDescription-md5: {md5}\nDescription-en: the {name}\n x\n"


STANZAS = [
    _stanza("biotool", PROJECT, tags="field::biology", relations="Suggests: biotool-doc"),
    _stanza("biotool-doc", PROJECT, source="biotool", deb=DEBS_MADE["biotool-doc"]),
    _stanza("webkit", OTHER),
    _stanza("webkit-doc", "", source="webkit", deb=DEBS_MADE["webkit-doc"]),
    # project pages Debian relates to biotool-doc: a binary of its source with a homepage of its own, one that
    # suggests the -doc package, one that depends on biotool (which names biotool-doc); and one that is not
    _stanza("biotool-extras", "https://extras.biotool.org/", source="biotool"),
    _stanza("notes", "https://notes.example/", relations="Suggests: biotool-doc"),
    _stanza("aligngui", "https://aligngui.org/", relations="Depends: biotool (>= 1.0) | other, libc6"),
    _stanza("unrelated", "https://unrelated.example/", relations="Depends: webkit"),
    _stanza("openjdk-17-jre-headless", "https://openjdk.java.net/", source="openjdk-17"),
    _stanza("openjdk-17-doc", "https://openjdk.java.net/", source="openjdk-17", deb=REFERENCE_DEBS["openjdk-17-doc"]),
    _stanza("python3.11-doc", "", source="python3.11", deb=REFERENCE_DEBS["python3.11-doc"]),
    _stanza("python3-doc", "https://www.python.org/", source="python3-defaults", relations="Depends: python3.11-doc"),
    _stanza("plugin-doc", "https://plugin.example/", deb=REFERENCE_DEBS["plugin-doc"]),
]


def write_src(folder: Path, debs: dict[str, bytes] | None = DEBS_MADE) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Packages.xz").write_bytes(lzma.compress("\n".join(p for p, _ in STANZAS).encode()))
    (folder / "Translation-en.xz").write_bytes(lzma.compress("\n".join(t for _, t in STANZAS).encode()))
    if debs:
        (folder / DEBS).mkdir(exist_ok=True)
        for name, data in debs.items():
            (folder / DEBS / f"{name}_1.0-1_all.deb").write_bytes(data)
    return folder


@pytest.fixture(scope="module")
def web(tmp_path_factory) -> OfflineWeb:
    src = write_src(tmp_path_factory.mktemp("src"))
    return OfflineWeb(build_debian_docs(src, tmp_path_factory.mktemp("web") / "debian-docs"))


def test_deb_html_files_follow_symlinks_and_skip_other_files(tmp_path: Path) -> None:
    path = tmp_path / "biotool-doc_1.0-1_all.deb"
    path.write_bytes(DEBS_MADE["biotool-doc"])
    files = deb_html_files(path)
    base = "usr/share/doc/biotool-doc/html/"
    assert set(files) == {base + name for name in [*BIOTOOL_DOCS, "latest.html"]}
    assert files[base + "latest.html"] == files[base + "index.html"]


def test_doc_pages_are_a_site_of_the_project_linked_both_ways(web: OfflineWeb) -> None:
    project = web.fetch(PROJECT)
    assert INDEX in [link.url for link in project.outlinks]
    index = web.fetch(INDEX)
    assert index.title == "BioTool docs" and "sequence alignment documentation" in index.text
    targets = [link.url for link in index.outlinks]
    # the HTML's own links, resolved in the tree (a folder's link to its index.html, a fragment dropped); a
    # stylesheet and a missing file are no pages; an off-site link is kept; the link home is last
    assert targets == [DOCS + "guide/index.html", DOCS + "classAligner.html", "https://biopython.org/wiki", PROJECT]
    assert [link.url for link in web.fetch(DOCS + "classAligner.html").outlinks] == [DOCS + "classScore.html"]
    # webkit-doc has no homepage of its own: its documentation is that of its source's project
    assert "https://docs.webkit.example/index.html" in [link.url for link in web.fetch(OTHER).outlinks]


def test_labels_kind_never_topic(web: OfflineWeb) -> None:
    labels = web.labels()
    assert "topic.biology" in labels[PROJECT].split(",")
    assert set(labels[INDEX].split(",")) == {"kind.doc", "kind.guide", "docs.biotool-doc"}
    assert set(labels[DOCS + "classAligner.html"].split(",")) == {"kind.doc", "kind.reference", "docs.biotool-doc"}
    assert "kind.reference" in labels["https://docs.webkit.example/api/Widget3.html"]
    doc_urls = [url for url in labels if "docs." in url]
    assert len(doc_urls) == len(BIOTOOL_DOCS) + 1 + len(WEBKIT_DOCS)  # latest.html too
    assert not any("topic." in labels[url] for url in doc_urls)


def test_meta_names_the_sites(web: OfflineWeb) -> None:
    meta = web.meta
    assert meta["name"] == "debian-docs" and "documentation sites" in meta["source"]
    sites = {site["package"]: site for site in meta["docs"]["sites"]}
    assert sites["biotool-doc"]["project"] == PROJECT and sites["biotool-doc"]["index"] == INDEX
    assert sites["biotool-doc"]["pages"] == 5 and sites["biotool-doc"]["reference"] == 2
    assert sites["webkit-doc"]["matches_packages"] is True


def test_page_cap_keeps_what_the_index_reaches_first(tmp_path: Path) -> None:
    src = write_src(tmp_path / "src")
    web = OfflineWeb(build_debian_docs(src, tmp_path / "web", max_pages_per_site=3))
    kept = {url for url in web.labels() if url.startswith("https://docs.webkit.example/")}
    assert kept == {"https://docs.webkit.example/index.html", "https://docs.webkit.example/api/Widget0.html",
                    "https://docs.webkit.example/api/Widget1.html"}


def test_page_kind_and_site_url() -> None:
    assert doc_site_url("https://casacore.github.io/casacore") == "https://docs.casacore.github.io/casacore/"
    assert doc_site_url("https://x.sourceforge.net/downloads.shtml") == "https://docs.x.sourceforge.net/"
    assert doc_site_url("https://genome.org/wiki/C++_Library:_libStatGen") == "https://docs.genome.org/wiki/"
    assert page_kind("html/classcasacore_1_1Table.html") == "kind.reference"
    assert page_kind("reference/generated/scipy.stats.norm.html") == "kind.reference"
    assert page_kind("org/biojava/nbio/core/Sequence.html") == "kind.reference"
    assert page_kind("tutorial/intro.html") == "kind.guide"


def test_download_checks_sha256_caches_and_caps(tmp_path: Path) -> None:
    src = write_src(tmp_path / "src", debs=None)
    asked: list[str] = []

    def get(url: str, timeout: float) -> bytes:
        asked.append(url)
        return DEBS_MADE[url.rsplit("/", 1)[1].split("_")[0]]

    kept = download_docs(src, ["biotool-doc", "webkit-doc"], max_mb=1, get=get)
    assert [p.name for p in kept] == ["biotool-doc_1.0-1_all.deb", "webkit-doc_1.0-1_all.deb"]
    assert asked[0] == "https://deb.debian.org/debian/pool/main/b/biotool/biotool-doc_1.0-1_all.deb"
    download_docs(src, ["biotool-doc", "webkit-doc"], max_mb=1, get=get)
    assert len(asked) == 2  # cached: both files have the index's SHA256
    capped = download_docs(src, ["biotool-doc", "webkit-doc"], max_mb=len(DEBS_MADE["biotool-doc"]) / 1e6, get=get)
    assert [p.name for p in capped] == ["biotool-doc_1.0-1_all.deb"]
    (src / DEBS / "webkit-doc_1.0-1_all.deb").unlink()
    with pytest.raises(DocsBuildError, match="SHA256"):
        download_docs(src, ["webkit-doc"], get=lambda url, timeout: b"tampered")
    assert not (src / DEBS / "webkit-doc_1.0-1_all.deb").exists()
    with pytest.raises(DocsBuildError, match="no package nosuch-doc"):
        download_docs(src, ["nosuch-doc"], get=get)


def test_cli_builds(tmp_path: Path, capsys) -> None:
    src = write_src(tmp_path / "src")
    assert main(["web", "build", "debian-docs", str(src), str(tmp_path / "web"), "--max-pages-per-site", "2"]) == 0
    out, err = capsys.readouterr()
    assert "debian-docs" in out and "kind.reference" in out and "Traceback" not in out + err
    sites = OfflineWeb(tmp_path / "web").meta["docs"]["sites"]
    assert [site["pages"] for site in sites] == [2, 2]


def test_not_a_deb() -> None:
    with pytest.raises(DocsBuildError, match="not a .deb"):
        ar_members(b"PK\x03\x04 a zip file")


@pytest.mark.parametrize("debs, message", [
    (None, "no .deb files (fetch them with --download SUITE)"),
    ({"biotool-doc": b"!<arch>\nnonsense that is no header at all, sixty bytes long or more....."},
     "damaged ar member header"),
    ({"nosuch-doc": DEBS_MADE["webkit-doc"]}, "package nosuch-doc is not in the Packages index"),
])
def test_build_errors_are_one_line(tmp_path: Path, capsys, debs, message: str) -> None:
    src = write_src(tmp_path / "src", debs=debs)
    assert main(["web", "build", "debian-docs", str(src), str(tmp_path / "web")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "web" / "web.sqlite").exists()


def test_many_sites_suite_crawls_the_docs_web(tmp_path: Path) -> None:
    suite = load_suite(find_suite("many-sites"))
    assert suite.webs == ["debian-docs"]
    halves = {row.topic: row.half for row in suite.rows}
    assert halves == {"topic.biology": "tuning", "topic.geography": "tuning", "topic.mathematics": "held-out",
                      "topic.astronomy": "held-out", "topic.chemistry": "held-out"}
    assert suite.defaults["budget"] == 2000 and suite.defaults["seeds_per_run"] == 5
    with pytest.raises(SuiteError, match=f"web build debian-docs --download bookworm SRC {tmp_path}/debian-docs"):
        plan_rows(suite, webs=tmp_path, out=tmp_path)


WIDGET5 = "https://docs.webkit.example/api/Widget5.html"


def test_external_links_go_to_the_webs_page_for_them(web: OfflineWeb) -> None:
    # the upstream manual's tree is learned from the links (3+ of BioTool's files linked under it, and most
    # URLs under it name files BioTool has); the mirror shares three file names but is another tree
    assert [link.url for link in web.fetch(WIDGET5).outlinks] == [
        DOCS + "classAligner.html", DOCS + "classScore.html", DOCS + "guide/index.html", INDEX,
        UPSTREAM + "missing.html", *MIRROR_LINKS, PROJECT]
    assert web.fetch(UPSTREAM + "missing.html").status == 404
    sites = {site["package"]: site for site in web.meta["docs"]["sites"]}
    assert sites["biotool-doc"]["upstream_roots"] == ["https://biotool.org/manual/"]
    assert sites["webkit-doc"]["upstream_roots"] == ["https://docs.webkit.example/en/stable/"]
    assert sites["webkit-doc"]["links_mapped"] == {"own_site": 3, "other_sites": 4, "own_project": 0,
                                                   "other_projects": 1}
    assert [link.url for link in web.fetch("https://docs.webkit.example/index.html").outlinks] == [
        f"https://docs.webkit.example/api/Widget{i}.html" for i in range(4)] + [OTHER]
    assert web.fetch("https://docs.webkit.example/api/Widget4.html").outlinks == []


def test_related_project_pages_link_to_the_docs(web: OfflineWeb) -> None:
    def links_to_index(url: str) -> list[str]:
        return [link.anchor for link in web.fetch(url).outlinks if link.url == INDEX]

    for url in ("https://extras.biotool.org/", "https://notes.example/", "https://aligngui.org/"):
        assert links_to_index(url) == ["biotool documentation"]
    assert links_to_index(PROJECT) == ["biotool documentation"]  # its own link, once
    assert not any("docs.webkit.example" in link.url for link in web.fetch("https://unrelated.example/").outlinks)
    sites = {site["package"]: site for site in web.meta["docs"]["sites"]}
    assert sites["biotool-doc"]["links_in_by_relation"] == {"names_package": 1, "same_source": 1,
                                                            "uses_documented": 1}
    assert sites["webkit-doc"]["links_in_by_relation"] == {}


def test_without_entry_links_the_sites_hang_on_their_project_pages_only(tmp_path: Path) -> None:
    assert main(["web", "build", "debian-docs", str(write_src(tmp_path / "src")), str(tmp_path / "web"),
                 "--no-entry-links"]) == 0
    web = OfflineWeb(tmp_path / "web")
    assert [link.url for link in web.fetch(WIDGET5).outlinks] == [
        UPSTREAM + "classAligner.html", UPSTREAM + "classScore.html", UPSTREAM + "guide/", UPSTREAM,
        UPSTREAM + "missing.html", *MIRROR_LINKS, "http://www.biotool.org/"]
    assert INDEX not in [link.url for link in web.fetch("https://aligngui.org/").outlinks]
    assert web.meta["docs"]["entry_links"] is False


@pytest.fixture(scope="module")
def reference_web(tmp_path_factory) -> OfflineWeb:
    src = write_src(tmp_path_factory.mktemp("src"), {**DEBS_MADE, **REFERENCE_DEBS})
    return OfflineWeb(build_debian_docs(src, tmp_path_factory.mktemp("web") / "debian-docs"))


def test_reference_sites_sit_at_their_upstream_roots(reference_web: OfflineWeb) -> None:
    labels = reference_web.labels()
    java = {url for url in labels if url.startswith(JAVA)}
    assert java == {JAVA + "index.html", JAVA + "api/index.html", *(f"{JAVA}api/{n}.html" for n in JAVA_CLASSES)}
    assert set(labels[JAVA + "api/java.base/java/lang/String.html"].split(",")) == {
        "kind.doc", "kind.reference", "docs.openjdk-17-doc"}
    # Python's site: its library by its own reference_path, the tutorial a guide; hung on python3-doc's project
    assert "kind.reference" in labels[PYTHON + "library/os.html"]
    assert "kind.guide" in labels[PYTHON + "tutorial/index.html"]
    assert not any("topic." in labels[url] for url in labels if url.startswith((JAVA, PYTHON)))
    assert PYTHON + "index.html" in [link.url for link in reference_web.fetch("https://python.org/").outlinks]
    assert "https://python.org/" in [link.url for link in reference_web.fetch(PYTHON + "index.html").outlinks]
    sites = {site["package"]: site for site in reference_web.meta["docs"]["sites"]}
    assert sites["openjdk-17-doc"]["root"] == JAVA and sites["openjdk-17-doc"]["project"] == "https://openjdk.java.net/"
    assert sites["python3.11-doc"]["project"] == "https://python.org/"
    assert reference_web.meta["docs"]["max_pages_per_reference_site"] == 12000
    assert [site["package"] for site in reference_web.meta["docs"]["reference_sites"]] == [
        "openjdk-17-doc", "cppreference-doc-en-html", "python3.11-doc"]


def test_links_to_older_java_apis_name_the_17_api_by_tail(reference_web: OfflineWeb) -> None:
    # the Java SE 8 root is learned on the site's own host (docs.oracle.com, no host of openjdk.java.net); its
    # class URLs name 17's pages below their module's folder; a class 17 lacks stays a dead end; Python's
    # /dev/ root is learned on docs.python.org, and a link to its /3/ pages is a link to the page itself
    assert [link.url for link in reference_web.fetch("https://docs.plugin.example/index.html").outlinks] == [
        *(f"{JAVA}api/{name}.html" for name in JAVA_CLASSES[:3]), JAVA8 + "java/lang/Gone.html",
        JAVA + "api/java.desktop/java/awt/Frame.html",
        *(f"{PYTHON}library/{name}.html" for name in ("os", "re", "csv", "os")), "https://plugin.example/"]
    assert reference_web.fetch(JAVA8 + "java/lang/Gone.html").status == 404
    sites = {site["package"]: site for site in reference_web.meta["docs"]["sites"]}
    assert sites["openjdk-17-doc"]["upstream_roots"] == [JAVA8]
    assert sites["python3.11-doc"]["upstream_roots"] == ["https://docs.python.org/dev/"]
    assert sites["plugin-doc"]["links_mapped"]["other_sites"] == 7


def test_tail_names_only_one_file() -> None:
    tree = SiteTree("x-doc", "x", "https://x.org/", "https://docs.x.org/index.html",
                    {"api/m1/a/B.html", "api/m1/a/C.html", "api/m2/a/C.html", "index.html"},
                    {"api/m1/a/B.html": "u1", "api/m1/a/C.html": "u2"}, tail_paths=True)
    assert tree.file_named("a/B.html", tree.kept) == "api/m1/a/B.html"
    assert tree.file_named("a/C.html", tree.files) is None  # two modules have it
    assert tree.file_named("B.html", tree.files) is None  # a file name alone names no tree
    assert SiteTree(**{**vars(tree), "tail_paths": False, "_tails": None}).file_named("a/B.html", tree.kept) is None


def test_without_reference_sites_the_web_is_the_one_before(tmp_path: Path) -> None:
    plain = {**DEBS_MADE, "plugin-doc": REFERENCE_DEBS["plugin-doc"]}
    before = build_debian_docs(write_src(tmp_path / "before", plain), tmp_path / "web-before", reference_sites=())
    # the reference sites' .deb files in the cache are skipped: the same pages, links and meta
    assert main(["web", "build", "debian-docs", str(write_src(tmp_path / "cache", {**DEBS_MADE, **REFERENCE_DEBS})),
                 str(tmp_path / "web-after"), "--no-reference-sites"]) == 0
    old, new = OfflineWeb(before), OfflineWeb(tmp_path / "web-after")
    assert new.labels() == old.labels() and not any(url.startswith((JAVA, PYTHON)) for url in new.labels())
    assert all(new.fetch(url).outlinks == old.fetch(url).outlinks for url in old.labels())
    assert new.meta == old.meta and "reference_sites" not in new.meta["docs"]


def test_reference_sites_have_their_own_page_cap(tmp_path: Path) -> None:
    src = write_src(tmp_path / "src", {**DEBS_MADE, **REFERENCE_DEBS})
    assert main(["web", "build", "debian-docs", str(src), str(tmp_path / "web"), "--max-pages-per-site", "2",
                 "--max-pages-per-reference-site", "3"]) == 0
    pages = {site["package"]: site["pages"] for site in OfflineWeb(tmp_path / "web").meta["docs"]["sites"]}
    assert pages == {"biotool-doc": 2, "webkit-doc": 2, "plugin-doc": 1, "openjdk-17-doc": 3, "python3.11-doc": 3}


def test_a_reference_site_without_its_project_is_one_error_line(tmp_path: Path, capsys) -> None:
    src = write_src(tmp_path / "src", {"python3.11-doc": REFERENCE_DEBS["python3.11-doc"]})
    index = lzma.decompress((src / "Packages.xz").read_bytes()).decode()
    (src / "Packages.xz").write_bytes(lzma.compress(index.replace("https://www.python.org/", "").encode()))
    assert main(["web", "build", "debian-docs", str(src), str(tmp_path / "web")]) == 2
    err = capsys.readouterr().err.strip()
    assert "no project page for its source python3.11" in err and len(err.splitlines()) == 1
