"""A small hand-written labelled set of pages for the link-farm rule (``focuscrawl.engine.defences.farms``).

Each page is a title, a main text and its links' anchors, as a crawl reads them, with a label: ``farm`` for pages
made to rank (the messy-web generator's farm pages, keyword-stuffed sentences, SEO prose), ``text`` for pages
written to be read, including the shapes the old one-feature rule took for farms (a product catalogue, a package's
feature list) and prose in German and French. Written by hand; not drawn from any web a benchmark crawls.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

# The generator's farm vocabulary (focuscrawl.webs.mess.farms): an entry page's most distinctive words, plus spam.
SPAM_WORDS = ("best", "top", "free", "cheap", "online", "guide", "official", "review", "deals", "discount")


@dataclass(frozen=True)
class LabelledPage:
    name: str
    label: str  # "farm" or "text"
    title: str
    text: str
    anchors: tuple[str, ...]


def generator_farm_page(words: list[str], target_words: list[str], seed: int) -> LabelledPage:
    """A page written as ``focuscrawl.webs.mess.farms._fill_farm`` writes one (its recipe copied, seeded; 20 links,
    the default profile's, anchored with three of their target's words)."""
    rng = random.Random(seed)
    top = [w.capitalize() for w in words[:3]]
    title = f"Best {' '.join(top)} - {rng.choice(words).capitalize()} {rng.choice(SPAM_WORDS)} guide"
    sentences = []
    for _ in range(rng.randint(3, 6)):
        stuffed = [rng.choice(words) if rng.random() < 0.8 else rng.choice(SPAM_WORDS)
                   for _ in range(rng.randint(8, 15))]
        sentences.append(" ".join(stuffed).capitalize() + ".")
    anchors = tuple(" ".join(rng.sample(target_words, 3)) for _ in range(20))
    return LabelledPage(f"generator farm {seed}", "farm", title, " ".join(sentences), anchors)


_FARM_WORDS = [
    ["photosynthesis", "chlorophyll", "chloroplast", "thylakoid", "stroma", "calvin", "rubisco", "carotenoid",
     "photosystem", "wavelength"],
    ["syllabus", "lecture", "homework", "midterm", "algorithms", "compilers", "assignment", "semester", "grading",
     "prerequisites"],
    ["mitochondria", "respiration", "glycolysis", "pyruvate", "krebs", "oxidative", "phosphorylation", "atp",
     "electron", "cristae"],
]

_HAND_WRITTEN = [
    LabelledPage(
        "keyword-stuffed sentences", "farm", "Cheap Flights Paris - Cheap Flights to Paris - Cheap Paris Flights",
        "Cheap flights to Paris. Find cheap flights to Paris and book cheap flights to Paris today. Our cheap "
        "flights to Paris are the cheapest flights to Paris. Cheap flights Paris, cheap Paris flights, cheap "
        "flight Paris. Book cheap flights to Paris now and save on cheap flights to Paris. Cheap flights to Paris "
        "from London, cheap flights to Paris from New York, cheap flights to Paris from anywhere. Cheap flights.",
        ("cheap flights to Paris", "cheap flights Paris", "cheap Paris flights", "cheap flights to Rome",
         "cheap flights to London", "cheap flights")),
    LabelledPage(
        "keyword-stuffed pills", "farm", "Buy Viagra Online | Cheap Viagra | Viagra Online Pharmacy",
        "Buy viagra online at our viagra online pharmacy. Cheap viagra, generic viagra, viagra pills online. "
        "Order viagra online without prescription: buy cheap viagra online, buy generic viagra online. Our "
        "viagra online store sells the best viagra online. Viagra online, cheap viagra online, discount viagra "
        "online, viagra pills, viagra tablets, viagra online pharmacy. Buy viagra now.",
        ("buy viagra online", "cheap viagra", "generic viagra", "viagra pills", "viagra online pharmacy")),
    LabelledPage(
        "SEO prose plumber", "farm", "Best Plumber Chicago | Chicago Plumbing Services | Emergency Plumber Chicago",
        "Looking for the best plumber in Chicago? Our Chicago plumbers offer the best plumbing services in "
        "Chicago. As the top Chicago plumbing company, our Chicago plumbing experts fix every plumbing problem "
        "in Chicago. Call the best Chicago plumber for emergency plumbing in Chicago. Chicago plumbing services, "
        "Chicago plumbing repair, Chicago drain cleaning: the best plumber Chicago has. Affordable plumber "
        "Chicago, trusted plumber Chicago, emergency plumber Chicago. Chicago plumbing done right.",
        ("Chicago plumber", "plumbing services Chicago", "emergency plumber Chicago", "drain cleaning Chicago",
         "best plumber Chicago")),
    LabelledPage(
        "SEO prose weight loss", "farm", "Weight Loss Tips - Best Weight Loss Diet - Fast Weight Loss",
        "Weight loss is easy with our weight loss tips. These weight loss tips are the best weight loss tips for "
        "fast weight loss. Our weight loss diet is the best weight loss diet for quick weight loss. Try our "
        "weight loss plan for healthy weight loss and natural weight loss. Weight loss pills, weight loss "
        "supplements and weight loss programs: everything for weight loss. Start your weight loss journey with "
        "the best weight loss guide online.",
        ("weight loss tips", "weight loss diet", "fast weight loss", "weight loss pills", "weight loss guide")),
    LabelledPage(
        "product catalogue", "text", "Garden tools - Hartley & Sons hardware store",
        "Stainless steel hand trowel, ash handle, 32 cm. 12.50 EUR. In stock. Bypass pruning shears, carbon "
        "steel blades, cuts branches up to 20 mm. 24.90 EUR. In stock. Galvanised watering can, 10 litres, "
        "removable brass rose. 31.00 EUR. Two weeks. Border fork, four tines, treated hardwood shaft. 45.00 EUR. "
        "In stock. Kneeling pad, closed-cell foam, waterproof. 9.95 EUR. In stock. Twine dispenser with cutter, "
        "cast iron, jute twine included. 18.40 EUR. Sold out. Leaf rake, adjustable width, aluminium telescopic "
        "handle. 27.80 EUR. In stock. Seed tray set, recycled polypropylene, twelve cells. 6.20 EUR. In stock.",
        ("Hand tools", "Watering", "Pruning", "Seeds and trays", "Basket", "Delivery and returns", "Contact")),
    LabelledPage(
        "package feature list", "text", "ripgrep - features",
        "Features: Recursive directory search respecting gitignore rules. Automatic filtering of hidden files, "
        "binary files and symbolic links. Searching compressed files: gzip, bzip2, xz, lzma, lz4, brotli, "
        "zstd. Arbitrary input encodings: UTF-8, UTF-16, latin-1, GBK, EUC-JP, Shift_JIS. Multiline matching. "
        "PCRE2 regular expressions with lookaround and backreferences. Preprocessing filters for PDF, "
        "spreadsheets and archives. Configuration files. Colourised output, JSON output, file type filters, "
        "replacement strings, context lines, statistics. Parallelised directory traversal. Memory maps.",
        ("Installation", "User guide", "FAQ", "Changelog", "GitHub repository", "License")),
    LabelledPage(
        "Wikipedia-like article (birds)", "text", "Common swift",
        "The common swift is a medium-sized bird, superficially similar to the barn swallow or house martin but "
        "somewhat larger, though not stemming from those passerine species, being in the order Apodiformes. The "
        "resemblances between the groups are due to convergent evolution, reflecting similar life styles based "
        "on catching insects in flight. Swifts spend most of their lives in the air, living on the insects they "
        "catch in their beaks. They drink, feed, and often mate and sleep on the wing. Some individuals go ten "
        "months without landing. No other bird spends as much of its life in flight.",
        ("bird", "barn swallow", "house martin", "passerine", "Apodiformes", "convergent evolution", "insects")),
    LabelledPage(
        "Wikipedia-like article (compilers)", "text", "Compiler",
        "In computing, a compiler is a computer program that translates computer code written in one "
        "programming language, the source language, into another language, the target language. The name is "
        "primarily used for programs that translate source code from a high-level programming language to a "
        "low-level programming language, such as assembly language, object code or machine code, to create an "
        "executable program. There are many different types of compilers which produce output in different "
        "useful forms. A cross-compiler produces code for a different processor or operating system than the "
        "one on which the cross-compiler itself runs.",
        ("computing", "computer program", "programming language", "assembly language", "machine code",
         "cross-compiler")),
    LabelledPage(
        "German prose", "text", "Mauersegler",
        "Der Mauersegler ist eine Vogelart aus der Familie der Segler. Er verbringt fast sein ganzes Leben in der "
        "Luft und landet nur zum Brüten. Seine Nahrung besteht aus Insekten und kleinen Spinnen, die er im Flug "
        "fängt. Mauersegler brüten in Hohlräumen an hohen Gebäuden, früher vor allem in Felsspalten und alten "
        "Bäumen. Im Spätsommer ziehen sie nach Afrika südlich der Sahara, wo sie den Winter verbringen. Die "
        "Bestände gelten in Mitteleuropa als stabil, doch der Verlust von Nistplätzen durch Gebäudesanierungen "
        "macht den Vögeln zunehmend zu schaffen.",
        ("Vogelart", "Segler", "Insekten", "Afrika", "Nistplätze")),
    LabelledPage(
        "German technical prose", "text", "Übersetzer (Informatik)",
        "Ein Compiler ist ein Computerprogramm, das Quellcodes einer bestimmten Programmiersprache in eine Form "
        "übersetzt, die von einem Computer direkt ausgeführt werden kann. Zusammengesetzte Wörter wie "
        "Zwischendarstellung, Codeoptimierung und Laufzeitumgebung beschreiben die einzelnen Phasen der "
        "Übersetzung. Die Analysephase zerlegt den Quelltext, prüft Syntax und Semantik und erzeugt einen "
        "Syntaxbaum; die Synthesephase erzeugt daraus Maschinencode oder Bytecode für eine virtuelle Maschine.",
        ("Computerprogramm", "Programmiersprache", "Maschinencode", "Bytecode")),
    LabelledPage(
        "French prose", "text", "Martinet noir",
        "Le martinet noir est une espèce d'oiseaux de la famille des Apodidae. Il passe presque toute sa vie en "
        "vol et ne se pose que pour nicher. Il se nourrit d'insectes et de petites araignées qu'il capture en "
        "plein vol, et il peut même dormir dans les airs. Le martinet niche dans les cavités des bâtiments, sous "
        "les toits et dans les murs anciens. À la fin de l'été, il part hiverner en Afrique, au sud du Sahara. "
        "Sa présence dans les villes européennes est menacée par la rénovation des façades.",
        ("Apodidae", "oiseaux", "insectes", "Afrique")),
]

PAGES: list[LabelledPage] = [
    generator_farm_page(_FARM_WORDS[seed % 3], _FARM_WORDS[(seed + 1) % 3], seed) for seed in range(6)
] + _HAND_WRITTEN
