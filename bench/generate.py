"""A synthetic profile site: N researcher profiles in both layouts, written as static HTML.

    python -m bench.generate --profiles 1000 --out /tmp/site [--base http://127.0.0.1:8000]

Deterministic for a seed. About 70% of profiles are layout A (BZPEER researcher
profiles), 30% layout B (paper cards); each lists 10 to 30 works, and about 30% of
the distinct works are listed on two or more profiles, with the title printed
differently between listings (case, en dash for hyphen) as real sites do. The
markup follows the ``spans`` fixtures (fixtures/html/spans/): run-together inline
elements, titles split into <span>/<em> pieces, page chrome and hidden decoys.

Written to ``out``: the pages, ``robots.txt``, ``urls.txt`` (one URL a line, for
``base``), ``site.json`` (the counts) and ``arxiv-entries.json``: arXiv stand-in
entries (``standins.arxiv.ArxivStandIn(entries=...)``) for a share of the works,
plus decoys whose titles extend a work's title, so enrichment verifies for real.

``check_sample`` parses a sample of each layout with the crawler's ``parse_profile``
and compares every field the page prints with what was generated.
"""

from __future__ import annotations

import argparse
import html
import json
import random
import sys
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date
from itertools import combinations
from pathlib import Path

from crawler.extract import parse_profile
from scholarindex.core.identity import work_id
from scholarindex.core.titles import distinctive_words
from scholarindex.enrichment.matching import verify
from scholarindex.enrichment.models import Listing as Evidence

# Listings dated without a year are read relative to this day (the crawl's CRAWL_DATE).
CRAWL_DATE = date(2026, 11, 22)
LAYOUT_A, LAYOUT_B = "bzpeer", "papercards"
SHARE_LAYOUT_A = 0.7
WORKS_PER_PROFILE = (10, 30)
# Multiplicity of a work: 70% on one profile; the rest on 2, 3 or 4 (weights below).
SHARED_SHARE = 0.30
SHARED_COUNTS = ((2, 0.75), (3, 0.20), (4, 0.05))
ARXIV_SHARE = 0.40  # works with an arXiv entry
DECOY_SHARE = 0.05  # works with a look-alike arXiv entry that must not verify
NO_ABSTRACT_SHARE = 0.05

FIRST = """Amara Chao Yinmin Haibin Jian Kadri Mateus Jialiang Priya Tomás José Wei Li Ning
Yun Qishen Juntong Mei Hiroshi Yuki Sven Ingrid Lars Astrid Olga Dmitri Ivan Elena Sofia
Lucia Marco Giulia Pierre Camille Élodie François Hannah Lukas Jonas Felix Anna Marta Pablo
Carmen Diego Valentina Mateo Ahmed Fatima Omar Leila Yusuf Aylin Emre Zeynep Raj Ananya Arjun
Divya Vikram Sanjay Kwame Ngozi Chinedu Thandiwe Sipho Aisha Malik Grace Daniel Samuel Rachel
Benjamin Olivia Ethan Chloe Noah Emma Liam Ava Lucas Mia Hugo Nora Erik Freya Kai Tiago Inês
Rui Beatriz Joon Minji Seo Hyun Thanh Linh Quang Arash Shirin Dariusz Agnieszka Tomasz Petra
Jiří Zsófia Bálint Oona Aino Matti Siobhan Ciarán Eilidh Rhys Gwen Xin Hao Yue Zhen Bo""".split()
LAST = [*"""Jin Zhong Lin Jiao Tamm Oliveira Cheng Raghunathan Ferreira Peñalver Chen Wang Gao
Yue Yin Wu Zhang Liu Okonkwo Tanaka Sato Lindqvist Berg Nilsson Ivanova Petrov Smirnov Rossi
Bianchi Moreau Dubois Lefèvre Müller Schmidt Fischer Weber Kowalski García Martínez López
Fernández Hassan Haddad Yilmaz Demir Şahin Patel Sharma Iyer Reddy Gupta Mensah Adeyemi Nkosi
Dlamini Mbeki Cohen Levi Friedman Brown Taylor Wilson Johnson Walker Hughes Murphy Kelly
O'Brien Larsen Hansen Jensen Santos Costa Pereira Kim Park Choi Nguyen Tran Pham Karimi
Hosseini Nowak Wiśniewski Novák Horváth Nagy Virtanen Korhonen Gallagher Davies Evans Xu
Huang Zhao Sun Ma Hu Guo He Luo Song Tang Dong Feng Yang Zhou""".split(),
        "van der Berg", "de Vries", "dos Santos", "Al-Sayed"]
INITIALS = "ABCDEFGHIJKLMNOPRSTVW"
ROLES = ("Professor", "Associate professor", "Assistant professor", "Postdoc", "PhD student",
         "Research scientist", "Lecturer", "Independent researcher")
AFFILIATIONS = (
    "University of Tartu Institute of Computer Science", "ETH Zürich Systems Group",
    "Peking University School of Computer Science", "KTH Royal Institute of Technology",
    "University of Lagos Department of Computer Science", "Universidade de Lisboa",
    "Tsinghua University", "University of Toronto", "Inria Paris", "Max Planck Institute "
    "for Informatics", "National University of Singapore", "University of Cape Town",
    "Seoul National University", "Politecnico di Milano", "University of Edinburgh",
)
TRUST_LABELS = ("Unverified", "Verified", "Partially verified")
FIELDS = ("AI", "NLP", "Systems", "Vision", "Theory", "Security", "Databases", "Robotics")
CATEGORIES = ("LG", "CL", "CV", "AI", "DC", "CR", "IR", "RO", "SE", "NI", "DS", "PL", "DB")
TYPES = (("preprint", 0.45), ("conference", 0.35), ("article", 0.15), ("journal", 0.05))
VENUES = {
    "preprint": ("arXiv",),
    "conference": ("NeurIPS", "ICML", "ICLR", "OSDI", "SOSP", "EuroSys", "ACL", "EMNLP", "CVPR",
                   "KDD", "SIGMOD", "VLDB", "NSDI", "MLSys", "USENIX ATC", "3DV"),
    "article": ("Nature Communications", "Journal of Machine Learning Research",
                "IEEE Transactions on Pattern Analysis and Machine Intelligence",
                "ACM Computing Surveys"),
    "journal": ("Communications of the ACM", "Proceedings of the VLDB Endowment"),
}
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

ACRONYM_HEADS = ("Re", "Flex", "Hyper", "Deep", "Fast", "Meta", "Neo", "Omni", "Poly", "Quant",
                 "Spec", "Tiny", "Uni", "Zero", "Auto", "Bi", "Co", "Dyn", "Graph", "Lumi",
                 "Hydra", "Star", "Vega", "Orca", "Pico", "Turbo", "Ever", "Nimbus")
ACRONYM_TAILS = ("Libra", "MoE", "Net", "Former", "Cache", "Serve", "Route", "Sched", "Shard",
                 "Pipe", "Flow", "Gen", "Fuse", "Scope", "Lens", "Mix", "Tune", "Stream", "Sync",
                 "BERT", "GPT", "Comp", "Sparse", "Train", "Store", "Search", "Loop", "Mind")
COMPOUNDS = ("Fault-Tolerant", "Low-Latency", "Large-Scale", "Self-Supervised",
             "Communication-Efficient", "Energy-Aware", "Multi-Agent", "Cross-Modal", "Zero-Shot",
             "Long-Context", "Memory-Efficient", "Privacy-Preserving", "Data-Driven",
             "Hardware-Aware", "Routing-Replay-Guided", "Non-Autoregressive", "Fine-Grained",
             "Load-Balanced", "Mixture-of-Experts", "Retrieval-Augmented")
ADJECTIVES = ("Scalable", "Adaptive", "Efficient", "Robust", "Calibrated", "Sparse", "Dynamic",
              "Distributed", "Federated", "Asynchronous", "Hierarchical", "Probabilistic",
              "Incremental", "Verifiable", "Elastic", "Speculative", "Differentiable", "Causal")
NOUNS = ("Inference", "Training", "Scheduling", "Load Balancing", "Compression", "Retrieval",
         "Attention", "Routing", "Caching", "Checkpointing", "Quantization", "Distillation",
         "Planning", "Indexing", "Partitioning", "Replication", "Calibration", "Pretraining",
         "Decoding", "Serving", "Profiling", "Sampling", "Tokenization", "Alignment")
TOPICS = ("Large Language Models", "Graph Neural Networks", "Recommendation Models",
          "Diffusion Models", "Vision Transformers", "Reinforcement Learning",
          "Speech Recognition", "Time-Series Forecasting", "Protein Structure Prediction",
          "Key-Value Stores", "Stream Processing", "Federated Learning", "Code Generation",
          "Autonomous Driving", "Edge Devices", "Encrypted Data", "Sparse Tensors",
          "Multilingual Encoders", "Extreme Classification", "Storage Systems",
          "Spinal Codes", "Point Clouds", "Knowledge Graphs", "Query Optimization")
METHODS = ("Speculative Rollout", "Tree-Structured Caches", "Binary Expert Masking",
           "Local SGD", "Gradient Compression", "Negative Mining", "Contrastive Learning",
           "Stochastic Experts", "Matryoshka Representations", "Learned Indexes",
           "Kernel Fusion", "Pipeline Parallelism", "Optimal Transport", "Variational Inference",
           "Program Synthesis", "Hybrid-ARQ", "Parity Declustering", "Shapley Values")
TEMPLATES = (
    "{acr}: {compound} {noun} for {topic}",
    "{acr}: {adj} {noun} of {topic} via {method}",
    "Towards {compound} {noun} for {topic}",
    "{method} for {adj} {noun} in {topic}",
    "On the {noun} of {topic} under {compound} Constraints",
    "Is {noun} the Bottleneck of {adj} {topic}?",
    "{acr}: Accelerating {topic} with {method}",
    "{adj} and {compound} {noun} for {topic} at Scale",
    "Revisiting {method} for {compound} {topic}",
    "{acr}: {method}-Guided {noun} for {topic} in {topic2}",
)
SENTENCES = (
    "{topic} are central to modern {field2} systems, yet existing approaches to {noun_l} "
    "scale poorly beyond a few thousand {unit}.",
    "We propose {acr}, {adj_l} {noun_l} method that exploits {method_l} to reduce "
    "{metric} without retraining.",
    "Our key observation is that {noun_l} decisions are known before execution starts, "
    "which lets the system plan ahead at fine granularity.",
    "We show that standard baselines become {problem} as the workload shifts, and we give a "
    "simple model that predicts when additional {resource} stops helping.",
    "Experiments on {k} benchmarks show that {acr} improves {metric} by up to {x}$\\times$ "
    "over {baseline}, and by {pct}% over the previous best method.",
    "The method runs in real time on commodity hardware and reduces {metric} by {pct}% on "
    "{k} public datasets.",
    "We further prove that its updates monotonically improve the objective and converge "
    "under mild assumptions.",
    "Code and data are available to reproduce every result in this paper.",
    "Unlike prior work, {acr} needs no changes to the model architecture and composes with "
    "existing {method_l} pipelines.",
    "Across {k} workloads with controlled shifts, the approach halves the error without loss "
    "of accuracy.",
)
METRICS = ("latency", "throughput", "memory overhead", "communication volume", "error rate",
           "training time", "tail latency", "energy use")
BASELINES = ("Megatron-LM", "DeepSpeed", "vLLM", "PyTorch DDP", "FAISS", "Spark", "XGBoost",
             "the strongest baseline")
PROBLEMS = ("over-confident", "unstable", "memory-bound", "communication-bound", "imbalanced")
RESOURCES = ("bandwidth", "memory", "compute", "parallelism")
UNITS = ("nodes", "devices", "observations", "tokens", "requests")
DOMAINS = ("machine learning", "data", "distributed", "vision", "language", "storage")


@dataclass
class Work:
    """One paper: its canonical title and what the profiles print about it."""

    index: int
    title: str
    abstract: str | None
    authors: list[str]
    year: int | None  # None: the site prints no date (bench.er's records without a year)
    month: int
    day: int
    type: str
    venue: str
    category: str
    score: str | None
    code: bool
    owners: list[int] = field(default_factory=list)  # profile indexes that list it
    arxiv: bool = False
    decoy: bool = False

    @property
    def work_id(self) -> str:
        return work_id(self.title)


@dataclass
class Listing:
    """One work as printed on one profile."""

    work: int
    title: str  # as printed here: a variant of the canonical title on later listings
    authors: list[str] | None = None  # layout B: printed names (without "et al.")
    et_al: bool = False
    authors_line: str | None = None  # layout B: the author line verbatim, instead of the names


@dataclass
class Profile:
    index: int
    layout: str
    name: str
    path: str
    listings: list[Listing] = field(default_factory=list)
    header: dict = field(default_factory=dict)


@dataclass
class SiteSummary:
    """What was generated, as written to ``site.json``."""

    root: str
    seed: int
    profiles: int
    layout_a: int
    layout_b: int
    listings: int
    distinct_works: int
    works_on_2_plus_profiles: int
    share_on_2_plus: float
    title_variant_listings: int
    arxiv_entries: int
    arxiv_decoys: int
    pages_bytes: int
    paths: list[str] = field(default_factory=list, repr=False)

    def save(self) -> None:
        data = asdict(self)
        data.pop("paths")
        Path(self.root, "site.json").write_text(json.dumps(data, indent=2) + "\n", "utf-8")


# --- the content -------------------------------------------------------------------------


def _weighted(rnd: random.Random, options: Sequence[tuple[object, float]]) -> object:
    values, weights = zip(*options, strict=True)
    return rnd.choices(values, weights)[0]


def _title(rnd: random.Random) -> str:
    topic, topic2 = rnd.sample(TOPICS, 2)
    return rnd.choice(TEMPLATES).format(
        acr=rnd.choice(ACRONYM_HEADS) + rnd.choice(ACRONYM_TAILS), compound=rnd.choice(COMPOUNDS),
        adj=rnd.choice(ADJECTIVES), noun=rnd.choice(NOUNS), topic=topic, topic2=topic2,
        method=rnd.choice(METHODS))


def _abstract(rnd: random.Random, title: str) -> str:
    acr = title.split(":")[0] if ":" in title else "our method"
    chosen = rnd.sample(SENTENCES, rnd.randint(4, 7))
    chosen.sort(key=SENTENCES.index)  # problem, proposal, results: in a sensible order
    text = " ".join(s.format(
        topic=rnd.choice(TOPICS), field2=rnd.choice(DOMAINS), noun_l=rnd.choice(NOUNS).lower(),
        unit=rnd.choice(UNITS), acr=acr, adj_l=_a(rnd.choice(ADJECTIVES).lower()),
        method_l=rnd.choice(METHODS).lower(), metric=rnd.choice(METRICS),
        problem=rnd.choice(PROBLEMS), resource=rnd.choice(RESOURCES), k=rnd.randint(3, 12),
        x=round(rnd.uniform(1.1, 4.0), 1), baseline=rnd.choice(BASELINES),
        pct=rnd.randint(5, 60)) for s in chosen)
    return text[0].upper() + text[1:]


def _a(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


def _variant(rnd: random.Random, title: str) -> str:
    """The same title as another site prints it: other case, en dashes for hyphens."""
    choice = rnd.random()
    if choice < 0.35:
        return title.replace("-", "–") if "-" in title else title.lower()
    if choice < 0.7:
        return title[0] + title[1:].lower()  # sentence case
    if choice < 0.85:
        return title.upper()
    return title  # printed the same


def _year(rnd: random.Random) -> int:
    return rnd.choices(range(2015, 2027), weights=range(1, 13))[0]


def _people(rnd: random.Random, count: int) -> list[str]:
    if count > len(FIRST) * len(LAST) // 2:  # beyond the pairs (bench.scale): middle initials
        triples: set[tuple[str, str, str]] = set()
        while len(triples) < count:
            triples.add((rnd.choice(FIRST), rnd.choice(INITIALS), rnd.choice(LAST)))
        names = sorted(f"{a} {m}. {b}" for a, m, b in triples)
        rnd.shuffle(names)
        return names
    pairs: set[tuple[str, str]] = set()
    while len(pairs) < count:
        pairs.add((rnd.choice(FIRST), rnd.choice(LAST)))
    names = sorted(f"{a} {b}" for a, b in pairs)
    rnd.shuffle(names)
    return names


# --- the site ---------------------------------------------------------------------------


@dataclass
class Site:
    profiles: list[Profile]
    works: list[Work]


def build_site(profiles: int, seed: int = 8) -> Site:
    """Profiles, works and which profile lists which work (no files yet)."""
    rnd = random.Random(seed)
    names = _people(rnd, profiles)
    people: list[Profile] = []
    for i, name in enumerate(names):
        layout = LAYOUT_A if rnd.random() < SHARE_LAYOUT_A else LAYOUT_B
        plain = unicodedata.normalize("NFKD", name.lower()).encode("ascii", "ignore").decode()
        slug = "".join(ch if ch.isalnum() else "-" for ch in plain).strip("-")
        folder = "bzpeer/researchers" if layout == LAYOUT_A else "papercards/authors"
        people.append(Profile(i, layout, name, f"/{folder}/{slug}-{i:05d}.html"))
    slots = [i for i in range(profiles) for _ in range(rnd.randint(*WORKS_PER_PROFILE))]
    rnd.shuffle(slots)
    works: list[Work] = []
    seen_keys: set[str] = set()
    at = 0
    while at < len(slots):
        shared = rnd.random() < SHARED_SHARE
        count = int(_weighted(rnd, SHARED_COUNTS)) if shared else 1  # type: ignore[call-overload]
        owners: list[int] = []
        while len(owners) < count and at < len(slots):
            owner = slots[at]
            if owner in owners:  # swap a later slot in: one work once per profile
                swap = rnd.randrange(at, len(slots))
                slots[at], slots[swap] = slots[swap], slots[at]
                if slots[at] in owners:
                    break
                owner = slots[at]
            owners.append(owner)
            at += 1
        title = _title(rnd)
        while work_id(title) in seen_keys:
            title = _title(rnd)
        seen_keys.add(work_id(title))
        kind = str(_weighted(rnd, TYPES))
        year = _year(rnd)
        month, day = rnd.randint(1, 12), rnd.randint(1, 28)
        if date(year, month, day) > CRAWL_DATE:
            month, day = rnd.randint(1, CRAWL_DATE.month - 1), rnd.randint(1, 28)
        extra = max(0, rnd.randint(2, 9) - len(owners))
        authors = [people[o].name for o in owners] + _people(rnd, extra)
        rnd.shuffle(authors)
        authors = list(dict.fromkeys(authors))
        work = Work(
            index=len(works), title=title,
            abstract=None if rnd.random() < NO_ABSTRACT_SHARE else _abstract(rnd, title),
            authors=authors, year=year, month=month, day=day, type=kind,
            venue=rnd.choice(VENUES[kind]), category=rnd.choice(CATEGORIES),
            score=(str(round(rnd.uniform(20, 99), 1)) if rnd.random() < 0.5 else
                   str(rnd.randint(20, 99))) if rnd.random() < 0.6 else None,
            code=rnd.random() < 0.3, owners=owners, arxiv=rnd.random() < ARXIV_SHARE,
            decoy=rnd.random() < DECOY_SHARE)
        works.append(work)
        for position, owner in enumerate(owners):
            printed = work.title if position == 0 else _variant(rnd, work.title)
            listing = Listing(work.index, printed)
            if people[owner].layout == LAYOUT_B:
                cut = len(authors) > 4 and rnd.random() < 0.7
                listing.authors = authors[:3] if cut else list(authors)
                listing.et_al = cut
            people[owner].listings.append(listing)
    for person in people:
        rnd.shuffle(person.listings)
        person.header = _header(rnd, person)
    titles = TitleLookup(works)
    for work in works:  # an entry another work verifies against: its truth is ambiguous
        work.arxiv = work.arxiv and not titles.claimed(work.title, work.year, work.authors,
                                                       work.index)
    return Site(people, works)


class TitleLookup:
    """Which generated works would verify against an arXiv entry: the generator's truth
    must stay unambiguous. From a small vocabulary and a small pool of names it can draw
    two works where one title's words all sit inside the other's, with an author and a
    year in common; by enrichment's documented rules (a renamed paper) those are one
    paper, so the entry that would join them is left out."""

    def __init__(self, works: Sequence[Work]) -> None:
        self.works = works
        self.by_words: dict[frozenset[str], list[int]] = {}
        for work in works:
            self.by_words.setdefault(distinctive_words(work.title), []).append(work.index)

    def claimed(self, title: str, year: int | None, authors: Sequence[str], owner: int) -> bool:
        """Whether a work other than ``owner`` verifies against the entry ``title`` (first
        version ``year`` or the year before, ``authors``)."""
        held = sorted(distinctive_words(title))
        entry = {"id": "0000.00000", "title": title, "authors": list(authors),
                 "published": f"{(year or 1) - 1}-01-01", "updated": f"{year or 1}-01-01"}
        # A listed title's words inside the entry's (arXiv's search finds only such), at
        # least half of the entry's: the renamed rule's least (matching.Thresholds).
        for size in range(max(1, (len(held) + 1) // 2), len(held) + 1):
            for words in combinations(held, size):
                for index in self.by_words.get(frozenset(words), ()):
                    other = self.works[index]
                    if index != owner and verify(
                            Evidence(str(index), (other.title,), (other.year,) if other.year
                                    else (), tuple(other.authors)), [entry]).match:
                        return True
        return False


def _header(rnd: random.Random, person: Profile) -> dict:
    count = len(person.listings)
    if person.layout == LAYOUT_A:
        return {
            "bio": f"{person.name} works on {rnd.choice(TOPICS).lower()} and "
                   f"{rnd.choice(NOUNS).lower()}.",
            "role": rnd.choice(ROLES),
            "affiliation": None if rnd.random() < 0.25 else rnd.choice(AFFILIATIONS),
            "open": rnd.random() < 0.6, "trust": rnd.randint(5, 95),
            "trust_label": rnd.choice(TRUST_LABELS), "level": rnd.randint(1, 3),
            "claimed": rnd.random() < 0.4, "works": count, "followers": rnd.randint(0, 3000),
            "topics": rnd.randint(1, 20), "collaborators": rnd.randint(0, 60)}
    return {"field": rnd.choice(FIELDS), "h_index": rnd.randint(1, 60), "papers": count,
            "citations": rnd.randint(0, 20000), "novelty": rnd.randint(10, 90),
            "ai_score": round(rnd.uniform(10, 99), 1)}


# --- the markup ("spans" style) ---------------------------------------------------------


def _esc(text: str) -> str:
    """Escaped text, with the en dash and é spelled as entities as the fixtures do."""
    return html.escape(text, quote=False).replace("–", "&#8211;").replace("é", "&eacute;")


def _spans(*pieces: str) -> str:
    return "".join(f"<span>{_esc(p)}</span>" for p in pieces)


def _title_html(text: str) -> str:
    words = text.split(" ")
    if len(words) < 3:
        return f"<span>{_esc(text)}</span>"
    return (f"<span>{_esc(words[0] + ' ')}</span><em>{_esc(words[1])}</em>"
            f"<span>{_esc(' ' + ' '.join(words[2:]))}</span>")


def _thousands(n: int) -> str:
    return f"{n:,}"


_SVG = ('<svg width="16" height="16" viewBox="0 0 16 16" aria-hidden="true"><title>Verified '
        'researcher 99 works</title><circle cx="8" cy="8" r="7" fill="#2a7"/></svg>')
_NAV = ('<nav><a href="/">Home</a> <a href="/index.html">Explore</a> '
        '<a href="#published-work">Published work</a> <a href="/about.html">About</a></nav>\n')
_A_BOILERPLATE = (
    "<h2>Actions</h2>\n<h3>Decide how to stay connected</h3>\n"
    "<div><button><span>Follow researcher</span><span>{followers}</span></button></div>\n"
    "<h2>Identity and collaboration</h2>\n<h3>How to connect with this researcher</h3>\n"
    "<div>Claiming links this public author record to a researcher profile and unlocks direct "
    "collaboration workflows.</div>\n"
    '<div><a class="button" href="/login.html">Log in to claim</a></div>\n'
    "<h2>Direct collaboration</h2>\n<h3>Open a focused conversation when the fit is right</h3>\n"
    "<div>Claim this author entity first to unlock direct invitations.</div>\n"
    "<h2>Research graph</h2>\n<h3>See the researcher in context</h3>\n"
    "<div><button><span>Open full explorer</span></button></div>\n"
    "<div>Inspect adjacent work, topics, institutions and collaborators without jumping out "
    "to a separate graph page.</div>\n<div>Building this graph slice</div>\n"
    "<div>BZPEER is loading the nearby papers, people, topics and institutions for this "
    "page.</div>\n")


def _head(title: str) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{_esc(title)}</title>\n<style>\n/* Published work 99 published item(s) */\n"
            "body { font-family: sans-serif; max-width: 60em; margin: auto; }\n"
            ".meta span + span { margin-left: .5em; }\n</style>\n<script>\n"
            "var decoy = \"Published work 99 published item(s)\";\n"
            "var decoyCard = \"99.9AIJan 1Code\";\n</script>\n</head>\n<body>\n")


def _foot(site: str) -> str:
    return (f"</main>\n<footer><p>&copy; 2026 {site}. All rights reserved.</p><p><a "
            'href="/about.html">About</a> &middot; <a href="/">Home</a></p></footer>\n'
            "</body>\n</html>\n")


def printed_date(work: Work) -> str:
    """A card's date: without the year in the crawl's year, as the site prints it.

    A work without a year has no date on its card (empty).
    """
    if work.year is None:
        return ""
    day = f"{MONTHS[work.month - 1]} {work.day}"
    return day if work.year == CRAWL_DATE.year else f"{day}, {work.year}"


def render(person: Profile, works: Sequence[Work]) -> str:
    """The page of one profile."""
    h = person.header
    out: list[str] = []
    if person.layout == LAYOUT_A:
        out += [_head(f"{person.name} | BZPEER"), _NAV, "<main>\n<div>Researcher profile</div>\n",
                f"<h1>{_SVG}{_esc(person.name)}</h1>\n<p>{_esc(h['bio'])}</p>\n",
                "<div>" + _spans(h["role"], h["affiliation"] or "Affiliation not imported",
                                 "Open to collaborate" if h["open"]
                                 else "Not open to collaborate") + "</div>\n",
                "<h2>Trust snapshot</h2>\n<h3>Quick read</h3>\n",
                "<div>" + _spans(f"Trust {h['trust']} - {h['trust_label']}",
                                 f"Verification L{h['level']}",
                                 "Claimed author" if h["claimed"] else "Unclaimed author")
                + "</div>\n"]
        for value, label in ((h["works"], "works"), (h["followers"], "followers"),
                             (h["topics"], "topics"), (h["collaborators"], "close collaborators")):
            out.append(f"<div>{_spans(_thousands(value), label)}</div>\n")
        out.append(_A_BOILERPLATE.format(followers=_thousands(h["followers"])))
        out.append("<div hidden>Published work</div>\n<div hidden>99 published item(s)</div>\n"
                   '<h2 id="published-work">Published work</h2>\n'
                   f"<p>{len(person.listings)} published item(s)</p>\n"
                   '<div style="display:none">preprint2099arXiv</div>\n'
                   '<div style="display: none">Decoy listing that is not shown</div>\n')
        for listing in person.listings:
            work = works[listing.work]
            year = "" if work.year is None else str(work.year)
            out.append(f"<div>{_spans(work.type, year, work.venue)}</div>\n"
                       f"<h3>{_title_html(listing.title)}</h3>\n")
            if work.abstract:
                out.append(f"<p>{_esc(work.abstract)}</p>\n")
        out.append(_foot("BZPEER"))
    else:
        out += [_head(f"{person.name} | PaperCards"), _NAV, "<main>\n",
                f"<h1>{_SVG}{_esc(person.name)}</h1>\n",
                f'<div><span class="tag">{_esc(h["field"])}</span></div>\n',
                f"<div>{_spans('h-index', str(h['h_index']))}</div>\n",
                f"<div>{_spans(_thousands(h['papers']), 'papers')}</div>\n",
                f"<div>{_spans(_thousands(h['citations']), 'citations')}</div>\n",
                f"<div>{_spans('Novelty', str(h['novelty']) + '%')}</div>\n",
                f"<div>{_spans('AI Score', str(h['ai_score']))}</div>\n",
                f"<div hidden>99 Papers</div>\n<p>{len(person.listings)} Papers</p>\n",
                '<div style="display:none">99.9AIJan 1Code</div>\n'
                '<div style="display: none">Decoy listing that is not shown</div>\n']
        for listing in person.listings:
            work = works[listing.work]
            meta = _spans(*(p for p in (work.score, work.category, printed_date(work)) if p))
            if work.code:
                meta += f'<span><a href="https://github.com/example-lab/w{work.index}">Code</a></span>'
            names = (_esc(listing.authors_line) if listing.authors_line is not None else
                     ", ".join(f"<span>{_esc(n)}</span>" for n in listing.authors or []))
            out.append(f'<div class="meta">{meta}</div>\n<h3>{_title_html(listing.title)}</h3>\n'
                       f'<div class="authors">{names}{" et al." if listing.et_al else ""}</div>\n')
            if work.abstract:
                out.append(f"<p>{_esc(work.abstract)}</p>\n")
        out.append(_foot("PaperCards"))
    return "".join(out)


# --- arXiv stand-in entries -------------------------------------------------------------


def arxiv_entries(works: Iterable[Work], seed: int = 8) -> list[dict]:
    """Entries for the works that are on arXiv, plus look-alike decoys that no work
    verifies against (one that another work would is left out: ``TitleLookup``)."""
    rnd = random.Random(seed + 1)
    works = list(works)
    titles = TitleLookup(works)
    entries: list[dict] = []
    for work in works:
        assert work.year is not None  # generated works always have one
        published = f"{work.year - (rnd.random() < 0.2)}-{work.month:02d}-{work.day:02d}"
        number = f"{published[2:4]}{published[5:7]}.{len(entries):05d}"
        base = {"updated": f"{work.year}-{work.month:02d}-{work.day:02d}T12:00:00Z",
                "published": f"{published}T12:00:00Z", "comment": None, "journal_ref": None,
                "doi": None, "primary_category": f"cs.{work.category}",
                "categories": [f"cs.{work.category}"]}
        if work.arxiv:
            # arXiv's latest version may differ from a profile's spelling in case only.
            title = work.title if rnd.random() < 0.9 else work.title.lower()
            entries.append({**base, "id": f"{number}v{rnd.randint(1, 3)}", "title": title,
                            "summary": work.abstract or f"{work.title}.",
                            "authors": work.authors})
        if work.decoy:  # loose matching returns it; verification must reject it
            title, authors = f"{work.title} for {rnd.choice(TOPICS)}", _people(rnd, 3)
            if not titles.claimed(title, work.year, authors, -1):
                entries.append({**base, "id": f"{number[:5]}9{number[6:]}v1", "title": title,
                                "summary": "A different paper with a longer title.",
                                "authors": authors})
    return entries


# --- writing and checking ---------------------------------------------------------------


def write_site(site: Site, root: Path, base: str, seed: int = 8) -> SiteSummary:
    """Write every page, robots.txt, urls.txt, site.json and arxiv-entries.json under root."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "robots.txt").write_text("User-agent: *\nAllow: /\n", "utf-8")
    size = 0
    for person in site.profiles:
        path = root / person.path.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        body = render(person, site.works).encode("utf-8")
        path.write_bytes(body)
        size += len(body)
    paths = [p.path for p in site.profiles]
    write_url_list(root / "urls.txt", base, paths)
    entries = arxiv_entries(site.works, seed)
    (root / "arxiv-entries.json").write_text(json.dumps({"entries": entries}), "utf-8")
    shared = sum(len(w.owners) > 1 for w in site.works)
    summary = SiteSummary(
        root=str(root), seed=seed, profiles=len(site.profiles),
        layout_a=sum(p.layout == LAYOUT_A for p in site.profiles),
        layout_b=sum(p.layout == LAYOUT_B for p in site.profiles),
        listings=sum(len(p.listings) for p in site.profiles), distinct_works=len(site.works),
        works_on_2_plus_profiles=shared, share_on_2_plus=round(shared / len(site.works), 3),
        title_variant_listings=sum(site.works[li.work].title != li.title
                                   for p in site.profiles for li in p.listings),
        arxiv_entries=sum(w.arxiv for w in site.works),
        arxiv_decoys=len(entries) - sum(w.arxiv for w in site.works),
        pages_bytes=size, paths=paths)
    summary.save()
    return summary


def write_url_list(path: Path, base: str, paths: Sequence[str]) -> Path:
    """One absolute URL a line."""
    path.write_text("".join(f"{base.rstrip('/')}{p}\n" for p in paths), "utf-8")
    return path


def load_entries(root: Path) -> list[dict]:
    """The arXiv stand-in entries written with the site."""
    return json.loads((root / "arxiv-entries.json").read_text("utf-8"))["entries"]


class SampleMismatch(AssertionError):
    """A generated page does not parse into what was generated."""


def check_sample(site: Site, root: Path, per_layout: int = 20, seed: int = 0) -> int:
    """Parse ``per_layout`` pages of each layout with ``parse_profile``; compare every field.

    Returns how many pages were checked; raises ``SampleMismatch`` on the first difference.
    """
    rnd = random.Random(seed)
    checked = 0
    for layout in (LAYOUT_A, LAYOUT_B):
        pool = [p for p in site.profiles if p.layout == layout]
        for person in rnd.sample(pool, min(per_layout, len(pool))):
            _check_page(person, site.works, (root / person.path.lstrip("/")).read_bytes())
            checked += 1
    return checked


def _expect(what: str, got: object, want: object, person: Profile) -> None:
    if got != want:
        raise SampleMismatch(f"{person.path}: {what}: parsed {got!r}, generated {want!r}")


def _check_page(person: Profile, works: Sequence[Work], body: bytes) -> None:
    page = parse_profile("http://127.0.0.1" + person.path, body, "text/html; charset=utf-8",
                         CRAWL_DATE)
    _expect("layout", page.layout, person.layout, person)
    assert page.researcher is not None  # the layout matched, so a researcher was read
    _expect("name", page.researcher.name, person.name, person)
    _expect("listings", len(page.works), len(person.listings), person)
    _expect("complete", page.researcher.complete, True, person)
    for item, listing in zip(page.works, person.listings, strict=True):
        work = works[listing.work]
        _expect("title", item.title, listing.title, person)
        _expect("work_id", item.work_id, work.work_id, person)
        _expect("abstract", item.abstract, work.abstract, person)
        _expect("year", item.year, work.year, person)
        if person.layout == LAYOUT_A:
            _expect("type/venue", (item.type, item.venue), (work.type, work.venue), person)
        else:
            _expect("authors", (item.authors, item.authors_truncated),
                    (listing.authors, listing.et_al), person)
            _expect("date", item.date, f"{work.year}-{work.month:02d}-{work.day:02d}", person)
            _expect("category/code", (item.category, item.code), (work.category, work.code),
                    person)


def generate(root: Path, profiles: int, seed: int = 8, base: str = "http://127.0.0.1:8000",
             check: int = 20) -> SiteSummary:
    """Build, write and (on a sample of ``check`` pages per layout) verify the site."""
    site = build_site(profiles, seed)
    summary = write_site(site, root, base, seed)
    if check:
        check_sample(site, root, check)
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write a synthetic profile site.")
    parser.add_argument("--profiles", type=int, default=1000)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--base", default="http://127.0.0.1:8000",
                        help="URL prefix written to urls.txt")
    args = parser.parse_args(argv)
    summary = generate(args.out, args.profiles, args.seed, args.base)
    print(json.dumps({k: v for k, v in asdict(summary).items() if k != "paths"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
