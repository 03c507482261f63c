"""The Debian builder (``focuscrawl web build debian``) on a small index written here: no network."""

from __future__ import annotations

import hashlib
import lzma
from pathlib import Path

import pytest

from focuscrawl.cli.main import main
from focuscrawl.urls import site_of
from focuscrawl.webs import debian
from focuscrawl.webs.debian import build_debian, download_index, project_url
from focuscrawl.webs.store import OfflineWeb

FILLERS = 120  # packages that all depend on libfoo1: more referrers than a page keeps "used by" links


def _stanza(name: str, *, homepage: str = "", source: str = "", short: str = "", tags: str = "",
            **relations: str) -> tuple[str, str]:
    """A Packages stanza and its Translation-en stanza."""
    short = short or f"the {name} package"
    md5 = hashlib.md5(name.encode()).hexdigest()
    lines = [f"Package: {name}"] + ([f"Source: {source}"] if source else []) + ["Version: 1.0-1",
             "Maintainer: Jane Doe <jane@example.org>", "Architecture: amd64"]
    lines += [f"{key.replace('_', '-')}: {value}" for key, value in relations.items()]
    lines += [f"Description: {short}", f"Description-md5: {md5}"]
    lines += [f"Homepage: {homepage}"] if homepage else []
    lines += [f"Tag: {tags}"] if tags else []
    long = (f"Package: {name}\nDescription-md5: {md5}\nDescription-en: {short}\n"
            f" The {name} long description, first paragraph.\n .\n Shared second paragraph of every package.\n")
    return "\n".join(lines) + "\n", long


STANZAS = [
    # one upstream project, two binaries, two spellings of the same homepage
    _stanza("astrotool", homepage="https://github.com/StarOrg/AstroTool", short="sky survey tool",
            tags="field::astronomy, role::program", Depends="libfoo1 (>= 1.2), python3 | python3-minimal, "
            "nohome-data, virtual-thing", Suggests="med-bio"),
    _stanza("python3-astrotool", source="astrotool", homepage="http://www.github.com/starorg/astrotool/",
            short="sky survey tool (Python 3)", Depends="python3"),
    _stanza("libfoo1", source="foo", homepage="https://www.foo.org/", short="foo library"),
    _stanza("libfoo-dev", source="foo", homepage="https://foo.org", Depends="libfoo1 (= 1.0-1)"),
    _stanza("python3", homepage="https://www.python.org/", short="interactive high-level language"),
    _stanza("nohome-data", short="data without a homepage"),
    _stanza("biotool", homepage="https://sourceforge.net/projects/BioTool/", short="sequence aligner",
            Depends="libfoo1"),
    _stanza("gistool", homepage="https://gitlab.com/mapper/gistool", short="map maker", Depends="libfoo1",
            tags="field::geography"),
    _stanza("debtool", homepage="https://salsa.debian.org/dev-team/debtool", short="packaging helper"),
    # Blends task metapackages: labels, never pages
    _stanza("med-bio", source="debian-med", homepage="https://www.debian.org/devel/debian-med",
            short="Debian Med bioinformatics packages", tags="field::biology, role::metapackage",
            Depends="med-config", Recommends="biotool, other-bio | python3-astrotool"),
    _stanza("med-config", source="debian-med", homepage="https://www.debian.org/devel/debian-med",
            Depends="libfoo1"),
    _stanza("astro-tools", source="debian-astro", homepage="https://blends.debian.org/astro",
            short="Debian Astro tools", Depends="astrotool"),
    _stanza("gis-workstation", source="debian-gis", short="GIS workstation", Recommends="gistool"),
] + [_stanza(f"filler{i}", homepage=f"https://{'gitlab.com/owner' if i % 2 else f'site{i}.example'}/filler{i}",
             Depends="libfoo1", Recommends="astrotool" if i < 3 else "") for i in range(FILLERS)]

ASTRO = "https://starorg.github.io/astrotool"
FOO = "https://foo.org/"
DEAD = "https://packages.debian.org/bookworm/nohome-data"


def _write(folder: Path, compress: bool = False, release: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    files = {"Packages": "\n".join(p for p, _ in STANZAS), "Translation-en": "\n".join(t for _, t in STANZAS)}
    hashes = [f" {'0' * 64} 10 contrib/binary-amd64/Packages", f" {'0' * 64} 10 contrib/i18n/Translation-en"]
    for name, text in files.items():
        data = lzma.compress(text.encode()) if compress else text.encode()
        path = folder / (name + (".xz" if compress else ""))
        path.write_bytes(data)
        where = "binary-amd64" if name == "Packages" else "i18n"
        hashes.append(f" {hashlib.sha256(data).hexdigest()} {len(data)} main/{where}/{path.name}")
    if release:
        (folder / "Release").write_text("Origin: Debian\nSuite: oldstable\nVersion: 12.15\nCodename: bookworm\n"
                                        "Date: Sat, 11 Jul 2026 10:16:37 UTC\nSHA256:\n" + "\n".join(hashes) + "\n")
    return folder


@pytest.fixture(scope="module")
def web(tmp_path_factory) -> OfflineWeb:
    src = _write(tmp_path_factory.mktemp("src"))
    return OfflineWeb(build_debian(src, tmp_path_factory.mktemp("web") / "debian"))


def test_project_urls_split_code_hosts() -> None:
    assert project_url("https://github.com/StarOrg/AstroTool.git/") == ASTRO
    assert project_url("https://github.com/StarOrg/AstroTool", split_code_hosts=False) == \
        "https://github.com/StarOrg/AstroTool"
    assert project_url("https://gitlab.com/mapper/gis/tool") == "https://mapper.gitlab.io/gis/tool"
    assert project_url("http://sourceforge.net/projects/BioTool/files") == "https://biotool.sourceforge.io/files"
    assert project_url("https://salsa.debian.org/dev-team/x") == "https://dev-team.pages.debian.net/x"
    assert project_url("http://WWW.Example.org/a/") == "https://example.org/a"
    assert project_url("ftp://example.org/") is None and project_url("not a url") is None


def test_binaries_sharing_a_homepage_are_one_page(web: OfflineWeb) -> None:
    page = web.fetch(ASTRO)
    assert page.status == 200 and page.title == "astrotool: sky survey tool"
    assert "astrotool: sky survey tool." in page.text and "python3-astrotool: sky survey tool (Python 3)" in page.text
    assert page.text.count("Shared second paragraph") == 1  # paragraphs repeated across binaries are kept once
    urls = {r.url for r in web.records()}
    assert FOO in urls and "https://foo.org" not in urls  # libfoo1 and libfoo-dev: one page
    assert "https://python.org/" in urls
    # pages: astrotool, foo, python3, biotool, gistool, debtool and the fillers
    assert web.stats()["pages"] == 6 + FILLERS


def test_hosts_split_per_owner(web: OfflineWeb) -> None:
    hosts = {r.host for r in web.records() if r.status == 200}
    assert {"starorg.github.io", "biotool.sourceforge.io", "mapper.gitlab.io", "dev-team.pages.debian.net",
            "owner.gitlab.io", "foo.org"} <= hosts
    assert not hosts & {"github.com", "gitlab.com", "sourceforge.net", "salsa.debian.org"}
    assert sum(1 for r in web.records() if r.host == "owner.gitlab.io") == FILLERS // 2


def test_links_cross_hosts_with_used_by_capped(web: OfflineWeb) -> None:
    links = web.fetch(ASTRO).outlinks
    targets = [link.url for link in links]
    assert targets[:3] == [FOO, "https://python.org/", DEAD]  # relation order, first alternative, virtual dropped
    assert links[0].anchor == "libfoo1: foo library"
    assert all(site_of(t) != "starorg.github.io" for t in targets)
    used_by = [link for link in links if link.anchor.startswith("used by ")]
    assert {link.url for link in used_by} == {project_url(f"https://site{i}.example/filler{i}") for i in (0, 2)} | \
        {"https://owner.gitlab.io/filler1"}
    foo = web.fetch(FOO).outlinks
    assert len(foo) == 20 and all(link.anchor.startswith("used by ") for link in foo)  # 123 referrers, 20 kept
    assert len({site_of(link.url) for link in foo}) > 5


def test_labels_from_debtags_and_tasks(web: OfflineWeb) -> None:
    labels = web.labels()
    assert set(labels[ASTRO].split(",")) == {"debtags.field.astronomy", "blends.debian-astro.astro-tools",
                                            "blends.debian-med.med-bio", "topic.astronomy", "topic.biology"}
    assert set(labels["https://biotool.sourceforge.io/"].split(",")) == {"blends.debian-med.med-bio", "topic.biology"}
    assert set(labels["https://mapper.gitlab.io/gistool"].split(",")) == {
        "debtags.field.geography", "blends.debian-gis.gis-workstation", "topic.geography"}
    assert FOO not in labels  # med-config lists libfoo1, but a config package is not a task


def test_task_metapackages_are_never_pages_nor_targets(web: OfflineWeb) -> None:
    for record in web.records():
        assert "debian.org/devel" not in record.url and "blends.debian.org" not in record.url
        assert not record.url.endswith(("/med-bio", "/astro-tools", "/gis-workstation", "/med-config"))
        page = web.fetch(record.url)
        assert not any("med-bio" in link.anchor or "Debian Med" in link.anchor for link in page.outlinks)
        assert "Debian Med" not in page.text


def test_relation_to_a_package_without_homepage_is_a_dead_end(web: OfflineWeb) -> None:
    page = web.fetch(DEAD)
    assert page.status == 404 and not page.outlinks
    stats = web.stats()
    assert stats["dead_urls"] == 1 and stats["dead_links"] == 1


def test_meta_records_provenance(web: OfflineWeb) -> None:
    meta = web.meta
    assert meta["name"] == "debian" and meta["builder"] == "focuscrawl.webs.debian.build_debian"
    assert "github.com/OWNER -> OWNER.github.io" in meta["source"]
    info = meta["debian"]
    assert info["codename"] == "bookworm" and info["release_date"] == "Sat, 11 Jul 2026 10:16:37 UTC"
    assert info["files"]["Packages"]["matches_release"] is True
    assert len(info["files"]["Translation-en"]["sha256"]) == 64
    assert info["options"] == {"reverse_links": 20, "hubs": False, "split_code_hosts": True}


def test_options_hubs_and_no_split(tmp_path: Path) -> None:
    src = _write(tmp_path / "src", compress=True, release=False)
    web = OfflineWeb(build_debian(src, tmp_path / "web", hubs=True, split_code_hosts=False, reverse_links=3))
    hosts = {r.host for r in web.records()}
    assert "github.com" in hosts and "jane-example-org.maintainers.debian.net" in hosts
    foo = web.fetch(FOO).outlinks
    assert [link.anchor.startswith("used by ") for link in foo] == [True] * 3 + [False]
    hub = web.fetch(foo[-1].url)
    assert hub.status == 200 and len(hub.outlinks) == 26 and hub.outlinks[-1].anchor == "next page"
    assert web.meta["debian"]["files"]["Packages.xz"]["matches_release"] is None
    assert "https://packages.debian.org/stable/nohome-data" in {r.url for r in web.records()}


def test_cli_builds_and_info_reads(tmp_path: Path, capsys) -> None:
    src = _write(tmp_path / "src")
    assert main(["web", "build", "debian", str(src), str(tmp_path / "web")]) == 0
    assert main(["web", "info", str(tmp_path / "web")]) == 0
    out, err = capsys.readouterr()
    assert "debian" in out and "topic.astronomy" in out and "Traceback" not in out + err


@pytest.mark.parametrize("damage", ["no-folder", "no-translation", "not-xz", "not-packages"])
def test_bad_input_is_one_error_line(tmp_path: Path, capsys, damage: str) -> None:
    src = tmp_path / "src"
    if damage != "no-folder":
        _write(src, release=False)
    if damage == "no-translation":
        (src / "Translation-en").unlink()
    elif damage == "not-xz":
        (src / "Packages.xz").write_bytes(b"plain text, not xz")
    elif damage == "not-packages":
        (src / "Packages").write_bytes(bytes(range(256)) * 4)
    code = main(["web", "build", "debian", str(src), str(tmp_path / "web")])
    out, err = capsys.readouterr()
    assert code != 0 and "Traceback" not in out + err
    lines = [line for line in err.strip().split("\n") if line.strip()]
    assert lines and lines[0].startswith("error:") and len(lines) <= 2, err
    assert not (tmp_path / "web" / "web.sqlite").exists()


def test_download_checks_hashes_and_only_asks_the_debian_mirror(tmp_path: Path) -> None:
    data = {"main/binary-amd64/Packages.xz": lzma.compress(b"Package: a\n"),
            "main/i18n/Translation-en.xz": lzma.compress(b"Package: a\nDescription-md5: 0\n")}
    release = "Suite: stable\nCodename: trixie\nSHA256:\n" + "".join(
        f" {hashlib.sha256(v).hexdigest()} {len(v)} {k}\n" for k, v in data.items())
    asked = []

    def fake_get(url: str, timeout: float) -> bytes:
        asked.append(url)
        relative = url.split("/dists/trixie/", 1)[1]
        return release.encode() if relative == "Release" else data[relative]

    paths = download_index("trixie", tmp_path / "src", get=fake_get)
    assert [p.name for p in paths] == ["Release", "Packages.xz", "Translation-en.xz"]
    assert all(url.startswith("https://deb.debian.org/debian/dists/trixie/") for url in asked) and len(asked) == 3
    data["main/i18n/Translation-en.xz"] = b"tampered"
    with pytest.raises(ValueError, match="SHA256"):
        download_index("trixie", tmp_path / "other", get=fake_get)
    with pytest.raises(ValueError, match="suite"):
        download_index("../../etc", tmp_path / "x", get=fake_get)
    with pytest.raises(ValueError, match="only https://deb.debian.org"):
        debian._get("https://example.org/Packages.xz", 1.0)
