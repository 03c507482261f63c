"""The large reference sites the Debian docs web's documentation links to, from Debian's own packages (issue 43).

The documentation sites of ``focuscrawl.webs.debian_docs`` link most often to sites the first builds did not
hold: the Java SE API on docs.oracle.com (BioJava's, Jmol's, STILTS' and Commons Math's Javadoc), cppreference
(SeqAn3's Doxygen tag file) and docs.python.org (statsmodels' and scikit-bio's intersphinx links). Debian ships
each of them as a package, so the web can hold them where those links point. Unlike a project's documentation
(``docs.PROJECTHOST/...``), such a site's place is not derived from its project's Homepage but is a fact of the
package, stated here with where its HTML sits in the package and why: the upstream root the documentation's
links use (docs/web-format.md, "Debian docs web", "reference sites").
"""

from __future__ import annotations

from dataclasses import dataclass

# Enough for the largest (openjdk-17-doc, 10,141 HTML files) to be whole; the other documentation sites keep
# DEFAULT_MAX_PAGES_PER_SITE (4,000) as in the first builds.
DEFAULT_MAX_PAGES_PER_REFERENCE_SITE = 12000


@dataclass(frozen=True)
class ReferenceSite:
    """One package whose HTML is a large reference site placed at its upstream root."""

    package: str
    root: str  # the site's URL root: the upstream location the documentation's links use, "https://HOST/PATH/"
    html_folder: str  # the folder of the package whose HTML files are the site (a path in the .deb)
    why: str  # documents the choice only
    # the Homepage of the site's project when no binary of the package's source has one (the project page the
    # site hangs on, as project_url writes it); empty: the package's own project page, as for any -doc package
    homepage: str = ""
    # a URL below a learned upstream root may name a page by the tail of its path in the site: the Java SE 7 and
    # 8 APIs name a class by its package path (java/lang/String.html), the 17 API, which Debian ships, by module
    # and package path (java.base/java/lang/String.html)
    tail_paths: bool = False
    # pages below the root whose path matches this are kind.reference too (beyond debian_docs.REFERENCE_PATH)
    reference_path: str = ""


REFERENCE_SITES = (
    ReferenceSite(
        "openjdk-17-doc", "https://docs.oracle.com/en/java/javase/17/docs/", "usr/share/doc/openjdk-17-jre-headless",
        "Java SE 17 API (Javadoc), 10,141 pages; the 27 documentation sites link ~16,800 times to the Java SE 7 "
        "and 8 API (docs.oracle.com/javase/{7,8}/docs/api/), 3 times to 17's docs/specs/ (the root used here); "
        "Debian ships only 17, so the 7 and 8 links name its class pages by their package path", tail_paths=True),
    ReferenceSite(
        "cppreference-doc-en-html", "https://en.cppreference.com/w/", "usr/share/cppreference/doc/html/en",
        "cppreference's C and C++ reference (2017 archive), 4,424 pages; SeqAn3, Boost and Eigen link ~4,600 "
        "times to en.cppreference.com/w/cpp/....html", reference_path=r"^(c|cpp)/"),
    ReferenceSite(
        "python3.11-doc", "https://docs.python.org/3/", "usr/share/doc/python3.11/html",
        "Python 3.11's documentation, 530 pages; statsmodels, scikit-bio and Astropy link ~3,300 times to "
        "docs.python.org/3/ and /dev/; no binary of source python3.11 has a Homepage, python3-doc (which depends "
        "on it) has https://www.python.org/", homepage="https://www.python.org/",
        reference_path=r"^(library|c-api)/"),
)


def reference_site(package: str, sites: tuple[ReferenceSite, ...] = REFERENCE_SITES) -> ReferenceSite | None:
    """The reference site of ``package`` in ``sites``, if it is one."""
    return next((site for site in sites if site.package == package), None)
