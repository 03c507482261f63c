"""URL aliases learned from the copies a crawl has fetched: mirrors and twins become one URL before they cost a fetch.

A near-duplicate caught after its fetch has still cost that fetch. Most copies on the web come from a site's
URL rules, not from its pages: a host answers under ``www.`` and bare, under ``http`` and ``https``; a directory
answers as ``dir/`` and ``dir/index.html``, a page as ``page.html`` and ``page.html/``. Bar-Yossef, Keidar and
Schonfeld (WWW 2007, "Do not crawl in the DUST: different URLs with similar text") learn such rules from pairs of
URLs with the same text and rewrite URLs with them before fetching. This is that idea with these kinds of rule,
each learned per site from the copies the near-duplicate defence confirms (a copy and the page it copies) and from
the pages that name another URL as their ``rel=canonical`` (the site saying which form is the document, before any
second fetch: docs/history/trials/alias-from-canonical-rule.md):

- *host alias*: the two URLs differ only in scheme and a leading ``www.`` (``http://www.example.org/a`` is a copy of
  ``https://example.org/a``), or in one more leading label on one registered domain (``m.``, ``en.``, ``www2.``:
  ``host_prefixes``): every URL of the copy's scheme and host is rewritten to the original's;
- *tail rule*: the same scheme and host, and one path is the other with a tail added (``dir/index.html`` and
  ``dir/``, ``page.htm/`` and ``page.htm``): on that host, a path that ends with the copy's tail after a last segment
  of the same kind (its file extension, or none) is rewritten to the original's tail;
- *ignorable parameter* (``parameters``): the same scheme, host and path, and one query is the other with one
  parameter more (``?ref=home``, ``?lang=en``, ``?print=1``): on that host, the parameter leaves every URL;
- *case-blind paths* (``lower_case``): the same but for the case of the path (``/About.html``, ``/about.html``): on
  that host, paths are lower-cased.

No rule joins two registered domains: the hosts of a host alias share theirs, the other kinds keep the host. Two
sites whose pages are copies (a syndicated article, a mirror on another domain) are caught page by page, each
after its fetch, by the near-duplicate defence, never by a rule that rewrites URLs no page was fetched under.

A rule is used once ``min_support`` distinct pairs have shown it (one pair can be a page that happens to be two
things: a site's home page copied at ``/welcome.html``). The first form fetched is the one kept, and a rule whose
reverse is already in use is not learned, so rewriting never loops.

A rule is retired when a URL it rewrote answers as a not-found page (a soft 404, a 404 or a 410), and never
learned again (its reverse may be): a mirror is often partial (a ``www.`` copy of a few sections), and a crawl that
met the mirror first would otherwise rewrite the whole site into the mirror's not-found pages (over HTTP, one crawl
of the messy Wikispeedia spent 250 of 1,000 fetches on them); a twin is often partial too, and a crawl that fetched
``page.htm/`` before ``page.htm`` learns the tail rule towards the twin's form and would rewrite every page of the
site into it (another crawl of the messy Wikispeedia: 253 soft 404s in 1,000 fetches,
docs/history/trials/alias-rules-retire-rule.md). DustBuster validates its rules by fetching samples; here the
crawl's own fetches of rewritten URLs are the samples.
"""

from __future__ import annotations

from collections import Counter
from posixpath import splitext
from typing import Annotated
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field

from focuscrawl.engine.defences.pipeline import DUPLICATE, SOFT_404, Crawl, Defence, Fetch, duplicate_of
from focuscrawl.urls import normalize_url, registered_domain

_MAX_TAIL = 20  # characters of a tail rule's tail: "index.html", "/", "default.aspx"; a longer one is another page
_MAX_REWRITTEN = 1 << 16  # rewritten URLs remembered, the oldest forgotten: a rule that misleads shows it early


class UrlAliasSettings(BaseModel):
    """URL rewrite rules learned from fetched copies: host aliases and path tails ("duplicate of URL" unfetched)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    min_support: Annotated[int, Field(ge=1)] = Field(
        3, description="distinct copy pairs that must show a rule before URLs are rewritten with it")
    parameters: bool = Field(
        True, description="learn 'parameter X is ignorable on host H' from copies one query parameter apart")
    lower_case: bool = Field(
        True, description="learn 'paths are case-blind on host H' from copies at a path and its lower-case form")
    host_prefixes: bool = Field(
        True, description="learn host aliases across a leading host label (m., en., www2.) on one registered "
                          "domain, besides www.")


def _host(netloc: str) -> str:
    return netloc[4:] if netloc.startswith("www.") else netloc


def _kind(path: str) -> str:
    """What a path ends with, as a tail rule reads it: '/' (a directory), or its last segment's file extension
    ('.html'; '' for none)."""
    return "/" if path.endswith("/") else splitext(path.rsplit("/", 1)[-1])[1].lower()


HostRule = tuple[str, str]  # (scheme, netloc)
TailRule = tuple[str, str, str, str]  # (netloc, kind of what precedes the tail, tail of the copy, tail of the original)


def _same_host(a: str, b: str, prefixes: bool) -> bool:
    """Two hosts one site answers under: the same but for a leading ``www.``, or (``prefixes``) for one leading
    label, on one registered domain (``m.example.org`` and ``example.org``; never ``a.test`` and ``b.test``)."""
    if _host(a) == _host(b):
        return True
    if not prefixes:
        return False
    short, long = sorted((_host(a), _host(b)), key=len)
    return long.endswith("." + short) and "." not in long[:-len(short) - 1] and \
        registered_domain(short) == registered_domain(long) != ""


def _query_apart(a: str, b: str) -> str | None:
    """The one parameter one query has and the other has not, the rest the same; or None."""
    qa, qb = parse_qsl(a, keep_blank_values=True), parse_qsl(b, keep_blank_values=True)
    more, fewer = (qa, qb) if len(qa) > len(qb) else (qb, qa)
    if len(more) != len(fewer) + 1:
        return None
    extra = [pair for pair in more if pair not in fewer]
    if len(extra) != 1 or [pair for pair in more if pair != extra[0]] != fewer:
        return None
    return extra[0][0]


def rule_of(copy: str, original: str, settings: UrlAliasSettings | None = None) -> tuple[str, tuple] | None:
    """The rule a copy and its original show, if they show one: ("host", (from, to)), ("tail", rule),
    ("param", (netloc, name)) or ("lower", (netloc,)). Never a rule between two registered domains."""
    settings = settings or UrlAliasSettings()
    a, b = urlsplit(copy), urlsplit(original)
    if (a.path, a.query) == (b.path, b.query) and (a.scheme, a.netloc) != (b.scheme, b.netloc) \
            and _same_host(a.netloc, b.netloc, settings.host_prefixes):
        return "host", ((a.scheme, a.netloc), (b.scheme, b.netloc))
    if (a.scheme, a.netloc) != (b.scheme, b.netloc):
        return None
    if a.path == b.path:
        apart = _query_apart(a.query, b.query) if settings.parameters else None
        return ("param", (a.netloc, apart)) if apart else None
    if a.query != b.query:
        return None
    if a.path.lower() == b.path.lower() and settings.lower_case:
        return "lower", (a.netloc,)
    short, long = sorted((a.path, b.path), key=len)
    if not long.startswith(short) or len(long) - len(short) > _MAX_TAIL:
        return None
    tail = long[len(short):]
    copy_tail, original_tail = (tail, "") if a.path == long else ("", tail)
    return "tail", (a.netloc, _kind(short), copy_tail, original_tail)


class UrlAliases(Defence):
    """The rules seen (with their support) and those in use; rewriting a URL with the rules in use."""

    name = "url_aliases"

    def __init__(self, settings: UrlAliasSettings):
        self.settings = settings
        self.support: Counter[tuple] = Counter()
        self.hosts: dict[HostRule, HostRule] = {}
        self.tails: dict[str, list[TailRule]] = {}  # netloc -> its tail rules in use
        self.rewritten: dict[str, tuple] = {}  # URL a rule made -> that rule's key in ``support``
        self.retired: set[tuple] = set()  # rules (their keys in ``support``) a not-found page disproved
        self.ignored: dict[str, set[str]] = {}  # netloc -> query parameters its copies showed to be ignorable
        self.lower: set[str] = set()  # netlocs whose copies showed their paths to be case-blind

    def __setstate__(self, state: dict) -> None:
        state.setdefault("ignored", {})  # a checkpoint from before the rules from evidence
        state.setdefault("lower", set())
        self.__dict__.update(state)

    def learn(self, copy: str, original: str) -> bool:
        """Count the rule a confirmed copy shows; True when that puts a new rule in use."""
        found = rule_of(copy, original, self.settings)
        if found is None:
            return False
        kind, rule = found
        key = (kind, rule)
        if key in self.retired or (key in self.support and self.support[key] >= self.settings.min_support):
            return False
        self.support[key] += 1
        if self.support[key] < self.settings.min_support:
            return False
        if kind == "host":
            source, target = rule
            if self.hosts.get(target) == source or source in self.hosts:
                return False  # its reverse, or another target for the same host, is in use: keep what is
            self.hosts[source] = target
        elif kind == "param":
            self.ignored.setdefault(rule[0], set()).add(rule[1])
        elif kind == "lower":
            self.lower.add(rule[0])
        else:
            netloc, kind_, copy_tail, original_tail = rule
            rules = self.tails.setdefault(netloc, [])
            if (netloc, kind_, original_tail, copy_tail) in rules:
                return False
            rules.append(rule)
        return True

    def rewrite(self, url: str) -> str:
        """``url`` with the rules in use applied: its host alias, then its host's first tail rule that fits."""
        if not self.hosts and not self.tails and not self.ignored and not self.lower:
            return url
        parts = urlsplit(url)
        used = []  # the keys of the rules that change this URL
        source = (parts.scheme, parts.netloc)
        target = self.hosts.get(source)
        if target is not None:
            parts = parts._replace(scheme=target[0], netloc=target[1])
            used.append(("host", (source, target)))
        path = parts.path
        if parts.netloc in self.lower and path != path.lower():
            path = path.lower()
            used.append(("lower", (parts.netloc,)))
        ignored = self.ignored.get(parts.netloc)
        if ignored and parts.query:
            pairs = parse_qsl(parts.query, keep_blank_values=True)
            dropped = {k for k, _ in pairs if k in ignored}
            if dropped:
                kept = [(k, v) for k, v in pairs if k not in ignored]
                parts = urlsplit(normalize_url(urlunsplit(parts._replace(query=urlencode(kept)))) or url)
                used.extend(("param", (parts.netloc, name)) for name in sorted(dropped))
        parts = parts._replace(path=path)
        for rule in self.tails.get(parts.netloc, ()):
            _, kind, copy_tail, original_tail = rule
            if not path.endswith(copy_tail):
                continue
            stem = path[:len(path) - len(copy_tail)]
            if _kind(stem) == kind:  # "dir/" + "index.html", "page.htm" + "/": what the pairs showed
                parts = parts._replace(path=stem + original_tail)
                used.append(("tail", rule))
                break
        rewritten = urlunsplit(parts)
        if used and rewritten != url:
            self.rewritten[rewritten] = used[-1]  # the last rule applied made the URL as it is
            if len(self.rewritten) > _MAX_REWRITTEN:
                del self.rewritten[next(iter(self.rewritten))]
        return rewritten

    def not_found(self, url: str) -> bool:
        """A fetched ``url`` answered as a not-found page: retire the rule that made it, if one did (True)."""
        key = self.rewritten.pop(url, None)
        if key is None or key in self.retired:
            return False
        kind, rule = key
        if kind == "host":
            if self.hosts.get(rule[0]) != rule[1]:
                return False
            del self.hosts[rule[0]]
        elif kind == "tail":
            rules = self.tails.get(rule[0], [])
            if rule not in rules:
                return False
            rules.remove(rule)
        elif kind == "param":
            self.ignored.get(rule[0], set()).discard(rule[1])
        else:
            self.lower.discard(rule[0])
        self.retired.add(key)
        return True

    # -- its hooks besides ``rewrite`` ---------------------------------------------------------------
    def refuse(self, url: str, host: str, crawl: Crawl) -> str:
        return DUPLICATE + self.rewrite(url) if url in crawl.kept_out else ""  # pending when a rule named its alias

    def inspect(self, fetch: Fetch, crawl: Crawl) -> None:
        """A not-found page retires the rule that made its URL; a copy the defences above found teaches a rule, and
        so does a page whose ``rel=canonical`` names another URL (the site saying which form is the document);
        when a rule comes into use the pending URLs it rewrites to a URL met leave the frontier."""
        if fetch.verdict == SOFT_404 or fetch.page.status in (404, 410):
            self.not_found(fetch.url)
        verdict = fetch.verdict
        if fetch.hidden and verdict.startswith(DUPLICATE):
            learned = self.learn(fetch.final_url, verdict[len(DUPLICATE):])
        else:
            canonical = fetch.canonical
            learned = (canonical is not None and not verdict and fetch.page.ok
                       and self.learn(fetch.final_url, canonical))
        if learned:
            fetch.skipped.extend(crawl.drop_pending(lambda url: self._alias_met(url, crawl)))

    def _alias_met(self, url: str, crawl: Crawl) -> str:
        alias = self.rewrite(url)
        return duplicate_of(alias) if alias != url and crawl.known(alias) else ""
