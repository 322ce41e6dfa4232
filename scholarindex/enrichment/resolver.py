"""From listings to outcomes: the cache first, then the local mirror (when one was
harvested), then batched searches of the query API, then verification.

Blocking (SQLite and HTTP), so it runs in the enricher's worker thread or in
the ops CLI, never on the reactor; ``from_cache`` and ``cached`` only read SQLite,
``remember_match`` writes a row or two.

A renamed paper's title phrase may find nothing, so with ``fallback_queries``
(``ARXIV_FALLBACK_QUERIES``, off by default) after each batch of phrases
the listings it leaves unmatched (that have a year, a known person and a title
long enough to pass as renamed; not those whose title arXiv refused, whose
refusal stays the reported reason) are asked once more, all in one request of
fallback clauses (``query.fallback_clause``): at most one extra request per
batch (an empty answer is not re-asked, a refused or truncated one not split),
cached like a title.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from functools import lru_cache

from scholarindex.core import stat_keys
from scholarindex.core.enrichment_status import DONE, NONE, PENDING
from scholarindex.enrichment.cache import CachedLookup, ClaimingStore, LookupCache, LookupStore
from scholarindex.enrichment.client import ArxivFetcher, SearchResult
from scholarindex.enrichment.config import EnrichmentConfig
from scholarindex.enrichment.errors import ArxivUnavailable, BadQuery
from scholarindex.enrichment.matching import Thresholds, title_containment, title_similarity, verify
from scholarindex.enrichment.mirror import ArxivMirror
from scholarindex.enrichment.models import Listing, Outcome
from scholarindex.enrichment.query import batches, build_query, fallback_clause, searchable_key

logger = logging.getLogger(__name__)

# Entries below this similarity to a title, and holding less than this share of its
# distinctive words (a renamed title), are not kept as its candidates at all; well
# under the verification thresholds, so a later, looser threshold still has data.
_CANDIDATE_FLOOR = 0.5
Search = Callable[..., SearchResult]  # (query, confirm_empty=True): ArxivFetcher.search
EventSink = Callable[[str, int], None]


def _ignore(name: str, count: int) -> None:
    """The default event sink: counts go nowhere."""
Row = tuple[str, list[dict], str]  # key, candidates, reason


@lru_cache(maxsize=1024)  # a batch's rows share one fetch time
def _iso_time(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat()


class Resolver:
    """Answers listings from the cache, the local mirror and arXiv searches."""

    def __init__(self, search: Search, cache: LookupStore, config: EnrichmentConfig,
                 on_event: EventSink | None = None, mirror: ArxivMirror | None = None) -> None:
        self._search = search
        self._cache = cache
        self._config = config
        self._mirror = mirror
        self._limits = Thresholds(title=config.title_threshold,
                                  year_tolerance=config.year_tolerance)
        self._on_event = on_event if on_event is not None else _ignore

    @property
    def has_mirror(self) -> bool:
        """Whether a local mirror answers before the query API."""
        return self._mirror is not None

    @staticmethod
    def keys(listing: Listing) -> list[str]:
        """The searchable title keys of a listing."""
        if len(listing.titles) == 1:  # most listings: no de-duplicating to do
            key = searchable_key(listing.titles[0])
            return [key] if key else []
        return [k for k in dict.fromkeys(map(searchable_key, listing.titles)) if k]

    def fallback_key(self, listing: Listing) -> str | None:
        """The listing's fallback clause, if asked at all and it could pass as renamed
        (it needs a year)."""
        if not self._config.fallback_queries or not listing.years:
            return None
        return fallback_clause(listing.titles, listing.people)

    def decide(self, listing: Listing, cached: dict[str, CachedLookup],
               keys: list[str] | None = None) -> Outcome:
        """Verify a listing against the cached candidates of all its keys (``keys``, when
        the caller has them already).

        Unmatched by its titles, it is verified again with its fallback clause's
        cached candidates, if any (read from the cache here).
        """
        rows = [cached[k] for k in (self.keys(listing) if keys is None else keys) if k in cached]
        candidates = [c for row in rows for c in row.candidates]
        verdict = verify(listing, candidates, self._limits)
        fallback = self.fallback_key(listing)
        if verdict.match is None and fallback and (extra := self._cache.get_many([fallback])):
            rows.append(extra[fallback])
            candidates += extra[fallback].candidates
            verdict = verify(listing, candidates, self._limits)
        checked_at = _iso_time(max(row.fetched_at for row in rows)) if rows else None
        if verdict.match is not None:
            return Outcome(listing.work_id, verdict.match, DONE, verdict.reason, checked_at)
        refused = [row.reason for row in rows if row.reason]
        reason = refused[0] if refused and not candidates else verdict.reason
        return Outcome(listing.work_id, None, NONE, reason, checked_at)

    @staticmethod
    def unsearchable(listing: Listing) -> Outcome:
        """The outcome of a listing none of whose titles can be searched."""
        return Outcome(listing.work_id, None, NONE,
                       "title has too few plain words to search arXiv with")

    def remember_match(self, keys: list[str], match: dict | None) -> None:
        """Cache a matched work's entry as the answer for title keys it was never
        searched by (another spelling of its title, met after the match)."""
        if match is not None:
            self._cache.put_many((key, [match], True, "") for key in keys)

    def cached(self, keys: Iterable[str]) -> dict[str, CachedLookup]:
        """The unexpired cache rows among ``keys``."""
        return self._cache.get_many(keys)

    def from_cache(self, listing: Listing) -> Outcome | None:
        """The outcome if the cache knows every title of the listing, else None."""
        keys = self.keys(listing)
        if not keys:
            return self.unsearchable(listing)
        cached = self._cache.get_many(keys)
        return self.decide(listing, cached) if len(cached) == len(keys) else None

    def resolve(self, listings: Iterable[Listing]) -> list[Outcome]:
        """Outcomes for every listing, searching arXiv for titles the cache lacks.

        After an outage no further request is made: the listings it leaves
        unanswered come back "pending" with the reason.
        """
        listings = list(listings)
        waiting: dict[str, list[Listing]] = defaultdict(list)
        for listing in listings:
            for key in self.keys(listing):
                waiting[key].append(listing)
        cached = self._cache.get_many(waiting)
        outage = self.lookup([k for k in waiting if k not in cached], waiting)
        cached = self._cache.get_many(waiting)
        outcomes = []
        for listing in listings:
            keys = self.keys(listing)
            if not keys:
                outcomes.append(self.unsearchable(listing))
            elif all(k in cached for k in keys):
                outcomes.append(self.decide(listing, cached))
            else:
                outcomes.append(Outcome(listing.work_id, None, PENDING,
                                        outage or "arXiv lookup did not finish"))
        return outcomes

    def lookup(self, keys: list[str], waiting: dict[str, list[Listing]]) -> str | None:
        """Answer ``keys`` from the mirror, then search arXiv for the rest; the outage reason
        if arXiv failed.

        ``waiting`` maps a key to the listings that need it, to pick each row's TTL.
        """
        return self.search_api(self.answer_from_mirror(keys, waiting), waiting)

    def answer_from_mirror(self, keys: list[str], waiting: dict[str, list[Listing]]) -> list[str]:
        """Cache the mirror's answer for every key it can give; the keys left for the API.

        The mirror answers a key when every listing waiting on it verifies against
        the mirror's candidates for its titles (the same checks as for the API's),
        or, when the mirror holds all of arXiv and is fresh (``answers_misses``),
        whatever it finds, a miss included. Otherwise the key goes to the API: the
        paper may be in a set not harvested, or newer than the last harvest.
        """
        if self._mirror is None or not keys:
            return keys
        mirror = self._mirror
        assert mirror is not None  # the caller checked
        complete = mirror.answers_misses(self._config.mirror_max_age_seconds)
        found: dict[str, list[dict]] = {}

        def candidates(key: str) -> list[dict]:
            if key not in found:
                found[key] = self._candidates(key, mirror.candidates(key))
            return found[key]

        def verified(listing: Listing) -> bool:
            pool = [c for k in self.keys(listing) for c in candidates(k)]
            return verify(listing, pool, self._limits).match is not None

        answered, left = [], []
        for key in keys:
            listings = waiting.get(key, ())
            if complete or (listings and all(verified(listing) for listing in listings)):
                answered.append((key, candidates(key), ""))
            else:
                left.append(key)
        self._store(answered, waiting)
        if answered:
            self._on_event(stat_keys.ARXIV_MIRROR_ANSWERS, len(answered))
        return left

    def search_api(self, keys: list[str], waiting: dict[str, list[Listing]]) -> str | None:
        """Search arXiv's query API for ``keys`` and cache the answers, batch by batch;
        the outage reason if arXiv failed.

        With the cache the workers of a deployment share (``shared_cache``), each batch's
        titles are claimed first: those another worker is asking arXiv for right now are
        not asked again, their answers are read from the shared cache when they come
        (single flight); the ones still unanswered after the claim's time are asked here.
        """
        shared = self._cache if isinstance(self._cache, ClaimingStore) else None
        hold = 4 * (self._config.timeout_seconds + self._config.delay_seconds)
        elsewhere: list[str] = []
        outage = self._search_batches(keys, waiting, shared, hold, elsewhere)
        if outage is not None or shared is None or not elsewhere:
            return outage
        self._on_event(stat_keys.ARXIV_ASKED_BY_OTHER_WORKERS, len(elsewhere))
        left = shared.wait_for(elsewhere, hold)
        return self._search_batches(left, waiting, None, hold, []) if left else None

    def _search_batches(self, keys: list[str], waiting: dict[str, list[Listing]],
                        shared: ClaimingStore | None, hold: float, elsewhere: list[str]
                        ) -> str | None:
        for batch in batches(keys, self._config.batch_size, self._config.max_query_chars):
            if shared is not None:
                batch, asked = shared.claim(batch, hold)
                elsewhere += asked
                if not batch:
                    continue
            try:
                for rows in self._search_batch(batch):
                    self._store(rows, waiting)
                self._fallback([w for key in batch for w in waiting.get(key, ())])
            except ArxivUnavailable as exc:
                logger.warning("arXiv unavailable: %s", exc)
                return f"arXiv unavailable: {exc}"
            finally:
                if shared is not None:
                    shared.release(batch)
        return None

    def _fallback(self, listings: list[Listing]) -> None:
        """One request of fallback clauses for the listings a batch left unmatched."""
        unmatched: dict[str, list[Listing]] = defaultdict(list)
        for listing in listings:
            key, titles = self.fallback_key(listing), self.keys(listing)
            if not key or not titles:
                continue
            cached = self._cache.get_many(titles)
            refused = any(row.reason for row in cached.values())  # stays visible as refused
            if (len(cached) == len(titles) and not refused
                    and self.decide(listing, cached).status != DONE):
                unmatched[key].append(listing)  # every title answered, none verified
        keys = [k for k in unmatched if k not in self._cache.get_many(unmatched)]
        batch = next(batches(keys, self._config.batch_size, self._config.max_query_chars), [])
        if not batch:
            return
        try:
            # Best effort: an empty answer is not asked again to confirm it.
            result = self._search(build_query(batch), confirm_empty=False)
        except BadQuery as exc:
            self._on_event(stat_keys.ARXIV_BAD_QUERIES, 1)
            logger.warning("arXiv refused a fallback query: %s", exc)
            return
        self._store([(key, self._fallback_candidates(unmatched[key], result.entries), "")
                     for key in batch], unmatched)

    def _store(self, rows: list[Row], waiting: dict[str, list[Listing]]) -> None:
        """Cache rows; a row is a hit (long TTL) if it verifies for a listing waiting on it."""
        def found(key: str, candidates: list[dict]) -> bool:
            return any(verify(listing, candidates, self._limits).match is not None
                       for listing in waiting.get(key, ()))
        self._cache.put_many((key, cands, found(key, cands), reason) for key, cands, reason in rows)

    def _search_batch(self, keys: list[str]) -> Iterator[list[Row]]:
        """Rows for a batch, yielded per request so progress survives a later outage.

        A 400 splits the batch in halves until the title arXiv refuses is alone;
        so does a batch matching more entries than we page through, since one
        broad title would crowd out the others' results.
        """
        try:
            result = self._search(build_query(keys))
        except BadQuery as exc:
            self._on_event(stat_keys.ARXIV_BAD_QUERIES, 1)
            if len(keys) == 1:
                logger.warning("arXiv refused the query for %r: %s", keys[0], exc)
                yield [(keys[0], [], "arXiv rejected this title's query (HTTP 400)")]
                return
            yield from self._halves(keys)
            return
        if result.truncated and len(keys) > 1:
            logger.info("batch of %d titles matched %d entries; splitting", len(keys), result.total)
            yield from self._halves(keys)
            return
        yield [(key, self._candidates(key, entries), "")
               for key, entries in self._found_by(keys, result.entries).items()]

    @staticmethod
    def _found_by(keys: list[str], entries: list[dict]) -> dict[str, list[dict]]:
        """A batch's entries shared out to the titles whose own phrase finds them.

        One query answers for all its titles, so an entry found by one title must not
        become a candidate of a look-alike title of another paper (one not on arXiv,
        by the same authors, the same year): it would verify. An entry goes to the
        titles whose distinctive words it holds whole, as their phrase search needs;
        one that holds no title's words whole (arXiv stems more loosely than we do)
        goes to the titles it resembles most.
        """
        if len(keys) == 1:
            return {keys[0]: entries}
        found: dict[str, list[dict]] = {key: [] for key in keys}
        for entry in entries:
            holders = [key for key in keys if title_containment(key, entry["title"]) == 1.0]
            if not holders:
                likeness = {key: title_similarity(key, entry["title"]) for key in keys}
                best = max(likeness.values())
                holders = [key for key, value in likeness.items() if value == best]
            for key in holders:
                found[key].append(entry)
        return found

    def _halves(self, keys: list[str]) -> Iterator[list[Row]]:
        middle = len(keys) // 2
        yield from self._search_batch(keys[:middle])
        yield from self._search_batch(keys[middle:])

    def _fallback_candidates(self, listings: list[Listing], entries: list[dict]) -> list[dict]:
        """The entries of a fallback answer worth keeping for any of ``listings``' titles."""
        keys = {key for listing in listings for key in self.keys(listing)}
        return [e for e in entries if any(e in self._candidates(key, [e]) for key in keys)]

    @staticmethod
    def _candidates(key: str, entries: list[dict]) -> list[dict]:
        return [e for e in entries
                if title_similarity(key, e["title"]) >= _CANDIDATE_FLOOR
                or title_containment(key, e["title"]) >= _CANDIDATE_FLOOR]


def build_resolver(
    config: EnrichmentConfig,
    stop: threading.Event | None = None,
    on_event: EventSink | None = None,
) -> tuple[Resolver, ArxivFetcher]:
    """A resolver on the real client, cache and mirror (if one was harvested into
    ``ARXIV_CACHE_DIR``); close the fetcher after use."""
    fetcher = ArxivFetcher(config, stop=stop, on_event=on_event)
    local = LookupCache(config.cache_dir, config.hit_ttl_seconds, config.miss_ttl_seconds)
    cache: LookupStore = local
    if config.redis_url:  # distributed crawl: answers shared by every worker (Redis)
        from scholarindex.enrichment.shared_cache import shared_cache
        cache = shared_cache(local, config.redis_url, config.redis_key_prefix,
                             config.redis_retry_seconds)
    mirror = ArxivMirror.existing(config.cache_dir)
    return Resolver(fetcher.search, cache, config, on_event=on_event, mirror=mirror), fetcher
