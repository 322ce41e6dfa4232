"""One person's profiles on both site families, linked ("Also on ...") without merging.

The evidence rule: researcher R's page links profile P when all of these hold:

1. **Different sites.** P and R have a ``source`` and the two differ. Two profiles
   on one site are never linked: a site gives a person one profile, so two there
   are most likely two people who share a name.
2. **The same name.** ``scholarindex.core.names.same_full_name``: the same spelling once case,
   accents and punctuation are folded, or the same surname and written-out given
   name in another form ("Jia-Liang Cheng", "Cheng Jialiang"). Initials never
   count: "J. Cheng" could be anyone.
3. **A shared work.** At least one work document lists both profiles (the index
   merged the two listings of that paper into one work).

A name alone is common; a shared paper alone is a co-author. Only both together
make the link, and it is only shown: the two profiles stay two documents.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scholarindex.core.names import same_full_name
from scholarindex.indexing.shapes import ProfileRef
from scholarindex.webui.highlight import plain
from scholarindex.webui.results import AlsoOn, safe_url


def namesakes(own_id: str, name: str, source: str,
              response: Mapping[str, Any]) -> list[ProfileRef]:
    """The profiles of a ``namesakes_body`` response that pass rules 1 and 2 for profile
    ``own_id`` called ``name`` on site ``source``."""
    found: list[ProfileRef] = []
    for hit in (response.get("hits") or {}).get("hits") or ():
        doc = hit.get("_source") or {}
        other_id = str(doc.get("id") or hit.get("_id") or "")
        other_name, other_source = doc.get("name"), doc.get("source")
        if (other_id and other_id != own_id and other_source and other_source != source
                and isinstance(other_name, str) and same_full_name(name, other_name)):
            # The fields ``namesakes_body`` asks for.
            found.append({"id": other_id, "name": other_name, "url": doc.get("url"),
                          "source": other_source})
    return found


def linked(candidates: list[ProfileRef], shared: Mapping[str, Any]) -> list[AlsoOn]:
    """The candidates a ``shared_works_body`` response shows sharing a work (rule 3)."""
    buckets = ((shared.get("aggregations") or {}).get("shared") or {}).get("buckets") or ()
    counts = {str(b["key"]): int(b["doc_count"]) for b in buckets}
    links = [AlsoOn(id=c["id"], name=plain(c["name"]), url=safe_url(c.get("url")),
                    source=str(c["source"]), shared_works=counts[c["id"]])
             for c in candidates if counts.get(c["id"], 0) >= 1]
    links.sort(key=lambda a: (-a.shared_works, a.source, a.name.casefold(), a.id))
    return links
