"""Two listings of one work on two profiles, and the crawl times they are seen at.

The same paper as two researchers' profiles print it: different case, accents,
dates and sources, so the writer has something to merge.
"""

from __future__ import annotations

from scholarindex.core.items import WorkItem

T1, T2 = "2026-01-01T00:00:00.000Z", "2026-02-01T00:00:00.000Z"

CHAO = WorkItem(work_id="relibra", title="ReLibra: Serving LLMs", researcher_id="chao-jin",
                researcher_name="Chao Jin", authors=["Chao Jin", "Yinmin Zhong"], year=2026,
                abstract="Fast.", researcher_url="https://bz.example/chao-jin", source="bzpeer")
YINMIN = WorkItem(work_id="relibra", title="RELIBRA: SERVING LLMS", researcher_id="yinmin-zhong",
                  researcher_name="Yinmin Zhong", authors=["CHÁO JIN", "Yinmin Zhong"],
                  date="2026-05-14", year=2026, category="DC", code=True,
                  researcher_url="https://pc.example/yinmin", source="papercards")
