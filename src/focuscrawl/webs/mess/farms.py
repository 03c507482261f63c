"""Link farms: hosts of pages stuffed with the linking pages' most distinctive words, linking each other."""

from __future__ import annotations

from collections.abc import Mapping

from focuscrawl.types import Link
from focuscrawl.webs.mess.state import MessState, Section
from focuscrawl.webs.mess.traps import materialise

IDF_PAGES = 2000  # pages of WEB the farms' tf-idf takes its idf from, spread evenly: plenty, and fast
SPAM_WORDS = ("best", "top", "free", "cheap", "online", "guide", "official", "review", "deals", "discount")


def plan_farms(state: MessState) -> dict[str, list[str]]:
    """Farm sections (hosts named after their first entry's words) and each entry page's distinctive words."""
    options = state.profile.farm
    sections = [Section("farm", i, f"farm{i}.invalid", "http", on_site=False) for i in range(options.hosts)]
    for url in state.originals:
        if state.unit("farm", "entry", url) < options.entry_share:
            sections[int(state.unit("farm", "section", url) * len(sections))].entries.append(url)
    sections = [s for s in sections if s.entries]
    words = _distinctive_words(state, [url for s in sections for url in s.entries], options.words)
    rng = state.rng("farm", "hosts")
    for section in sections:
        first = words[section.entries[0]] or ["resource", "guide"]
        tld = rng.choice(("com", "net", "info", "org"))
        section.host = state.new_host(f"{first[0]}-{first[1 % len(first)]}.{tld}")
        section.scheme = rng.choice(("http", "https"))
        state.sections.append(section)
    return words


def _distinctive_words(state: MessState, urls: list[str], k: int) -> dict[str, list[str]]:
    """The ``k`` words of highest tf-idf (idf over every page of WEB) of each page in ``urls``."""
    if not urls:
        return {}
    from sklearn.feature_extraction.text import TfidfVectorizer  # late: sklearn loads in ~1 s, farms only

    pages = list(state.originals)
    sample = pages[::max(1, len(pages) // IDF_PAGES)]
    vectorizer = TfidfVectorizer(stop_words="english", token_pattern=r"(?u)\b[a-zA-Z]{3,}\b", max_df=0.5,
                                 sublinear_tf=True)
    vectorizer.fit(state.web.texts(sample))
    vocabulary = vectorizer.get_feature_names_out()
    unique = list(dict.fromkeys(urls))
    matrix = vectorizer.transform([state.text(url) for url in unique]).tocsr()
    out = {}
    for row, url in enumerate(unique):
        start, end = matrix.indptr[row], matrix.indptr[row + 1]
        # by weight, then by word, so that ties never depend on the matrix's internal order
        ranked = sorted(zip(matrix.data[start:end].tolist(), matrix.indices[start:end].tolist()),
                        key=lambda pair: (-pair[0], vocabulary[pair[1]]))
        out[url] = [str(vocabulary[j]) for _, j in ranked[:k]]
    return out


def build_farms(state: MessState, words_of: Mapping[str, list[str]]) -> None:
    """Every farm's pages, then their links: farms link to each other's front pages too."""
    farms = [s for s in state.sections if s.kind == "farm"]
    for section in farms:
        paths = ["/"]
        for i in range(1, state.profile.farm.pages):
            words = words_of.get(section.entries[i * len(section.entries) // state.profile.farm.pages]) or ["page"]
            paths.append(f"/{words[i % len(words)]}-{words[(3 * i + 1) % len(words)]}-{i}.html")
        materialise(state, section, paths)
    for section in farms:
        _fill_farm(state, section, [s for s in farms if s is not section], words_of)


def _fill_farm(state: MessState, section: Section, others: list[Section], words_of: Mapping[str, list[str]]) -> None:
    """A farm's pages: stuffed titles and text, links to its own pages and to another farm's front page."""
    options = state.profile.farm
    rng = state.rng("farm", section.index, section.host)
    for i, url in enumerate(section.urls):
        if not url:
            continue
        words = words_of.get(section.entry_of(i)) or ["page"]
        page = state.pages[url]
        top = [w.capitalize() for w in words[:3]]
        page.title = f"Best {' '.join(top)} - {rng.choice(words).capitalize()} {rng.choice(SPAM_WORDS)} guide"
        sentences = []
        for _ in range(rng.randint(3, 6)):
            stuffed = [rng.choice(words) if rng.random() < 0.8 else rng.choice(SPAM_WORDS)
                       for _ in range(rng.randint(8, 15))]
            sentences.append(" ".join(stuffed).capitalize() + ".")
        page.text = " ".join(sentences)
        targets = [(section, j) for j in (rng.randrange(len(section.urls)) for _ in range(options.links)) if j != i]
        if others:
            targets.append((others[rng.randrange(len(others))], 0))
        for farm, j in targets:
            target = farm.urls[j]
            if target:
                target_words = words_of.get(farm.entry_of(j)) or words
                page.links.append(Link(target, " ".join(rng.sample(target_words, min(3, len(target_words))))))
