"""core.resolution.clean and .generic: titles repaired and generic titles recognised."""

from __future__ import annotations

import pytest

from scholarindex.core.resolution import clean_title, is_generic_title
from scholarindex.core.resolution.clean import cited_year, contribution_kind, repair_text


@pytest.mark.parametrize(("damaged", "repaired"), [
    ("Lud&#228;scher", "Ludäscher"),
    ("&#961;-calculus", "ρ-calculus"),
    ("&rho;-calculus", "ρ-calculus"),
    ("B&amp;#246;hlen", "Böhlen"),  # escaped twice
    ("Sj\u00c3\u00b6str\u00c3\u00b6m", "Sjöström"),  # UTF-8 read as Latin-1
    ("Florida\u00e2\u20ac\u2122s", "Florida\u2019s"),  # read as Windows-1252
    ("Florida\u00e2??s growth", "Florida's growth"),  # continuation bytes lost to "?"
    ("S Chaudhuri\u00e2?\u00a6", "S Chaudhuri\u2026"),  # the middle byte lost: 0x80
    ("2001\u00e2?\u00932002", "2001\u20132002"),
    ("Gar\u00c3\u00a7on", "Garçon"),
    ("Plain ASCII stays", "Plain ASCII stays"),
    ("Sjöström stays", "Sjöström stays"),  # correct text is not "repaired"
    ("Ångström über Ärger", "Ångström über Ärger"),
])
def test_repair_text(damaged: str, repaired: str) -> None:
    assert repair_text(damaged) == repaired
    assert repair_text(repaired) == repaired  # idempotent


@pytest.mark.parametrize(("printed", "title"), [
    ("[PDF] Efficient Query Processing in Large Databases",
     "Efficient Query Processing in Large Databases"),
    ("Efficient Query Processing in Large Databases. In Proc. VLDB, 1999",
     "Efficient Query Processing in Large Databases"),
    ("Efficient Query Processing in Large Databases (1999)",
     "Efficient Query Processing in Large Databases"),
    ("Efficient Query Processing in Large Databases, Proceedings of the 25th VLDB",
     "Efficient Query Processing in Large Databases"),
    ("Efficient Query Processing in Large Databases - IEEE Transactions on Knowledge",
     "Efficient Query Processing in Large Databases"),
    ("R. Agrawal, R. Srikant: Fast Algorithms for Mining Association Rules",
     "Fast Algorithms for Mining Association Rules"),
    ("Fast Algorithms for Mining Association Rules. R. Agrawal and R. Srikant",
     "Fast Algorithms for Mining Association Rules"),
    ("Fast Algorithms for Mining Association Rules SIGMOD Conference",
     "Fast Algorithms for Mining Association Rules"),
    ("r. agrawal, and r. srikant. fast algorithms for mining association rules",
     "fast algorithms for mining association rules"),  # citation style, lower case
    ("fast algorithms for mining association rules. in proceedings of the 20th vldb",
     "fast algorithms for mining association rules"),
    ("Fast Algorithms for Mining Association Rules (Experience Paper)",
     "Fast Algorithms for Mining Association Rules"),
    ("Fast Algorithms for Mining Association Rules (Demonstration Description)",
     "Fast Algorithms for Mining Association Rules"),
    ("Objects and SQL: Strange Relations? Panel", "Objects and SQL: Strange Relations?"),
    ("SIGMOD challenges paper: database issues in telecommunications network management",
     "database issues in telecommunications network management"),
    ("Vision Paper: Fast Algorithms for Mining Association Rules",
     "Fast Algorithms for Mining Association Rules"),
    ("Data Warehousing and Business Intelligence for E-Commerce - Book Review",
     "Data Warehousing and Business Intelligence for E-Commerce"),
    ("Tutorial: Fast Algorithms for Mining Association Rules",
     "Fast Algorithms for Mining Association Rules"),
    # A publisher, an institution, a meeting or a venue and its year glued after the title.
    ("Fast Algorithms for Mining Association Rules, ACM SIGMOD Int",
     "Fast Algorithms for Mining Association Rules"),
    ("Fast Algorithms for Mining Association Rules, SIGMOD 1999",
     "Fast Algorithms for Mining Association Rules"),
    ("Fast Algorithms for Mining Association Rules, University of Maryland at College Park",
     "Fast Algorithms for Mining Association Rules"),
    ("Fast Algorithms for Mining Association Rules. Dept. of Computer Science",
     "Fast Algorithms for Mining Association Rules"),
    # A demo annotated as citations print it; a citation's document type code.
    ("Fast Algorithms for Mining Association Rules (system demonstration)",
     "Fast Algorithms for Mining Association Rules"),
    ("Fast Algorithms for Mining Association Rules, System Demonstration",
     "Fast Algorithms for Mining Association Rules"),
    ("Fast Algorithms for Mining Association Rules. Demo Description",
     "Fast Algorithms for Mining Association Rules"),
    ("Fast Algorithms for Mining Association Rules [J]",
     "Fast Algorithms for Mining Association Rules"),
    # A citation's authors and year before the title, whoever they are.
    ("R. and Shim, K. 1998. Fast Algorithms for Mining Association Rules",
     "Fast Algorithms for Mining Association Rules"),
    ("Lin, K.-I.(1995). Fast Algorithms for Mining Association Rules",
     "Fast Algorithms for Mining Association Rules"),
    # The end of a citation's author list, cut off into the title, whoever they are.
    ("Neil, and D. Shasha. Fast Algorithms for Mining Association Rules",
     "Fast Algorithms for Mining Association Rules"),
    ("andR. Rastogi. Fast Algorithms for Mining Association Rules",
     "Fast Algorithms for Mining Association Rules"),
    ("JM, Hellerstein, and DA Patterson. Fast Algorithms for Mining Association Rules",
     "Fast Algorithms for Mining Association Rules"),
    ("p. O'Neil, and D. Shasha,'Fast Algorithms for Mining Association Rules,'",
     "'Fast Algorithms for Mining Association Rules,'"),
    (", S. Sudarshan, M. Bawa, and D. Shah. Fast Algorithms for Mining Association Rules",
     "Fast Algorithms for Mining Association Rules"),
    ("B. Shapiro, D. Shasha, and K. Zhang, Fast Algorithms for Mining Association Rules",
     "Fast Algorithms for Mining Association Rules"),
    # A meeting by its ordinal after a full stop.
    ("Fast Algorithms for Mining Association Rules. 20th Int",
     "Fast Algorithms for Mining Association Rules"),
    ("Fast Algorithms for Mining Association Rules. 22nd Conf. on Very Large Databases",
     "Fast Algorithms for Mining Association Rules"),
    # A surname alone and the year in brackets; a year in brackets before a colon.
    ("Mehrotra (2001) Fast Algorithms for Mining Association Rules",
     "Fast Algorithms for Mining Association Rules"),
    ("J.(1997): Fast Algorithms for Mining Association Rules",
     "Fast Algorithms for Mining Association Rules"),
    # A citation's status after the title.
    ("Fast Algorithms for Mining Association Rules. To appear in ACM TODS",
     "Fast Algorithms for Mining Association Rules"),
    ("Fast Algorithms for Mining Association Rules, submitted for publication",
     "Fast Algorithms for Mining Association Rules"),
    # Google Scholar's link to the other versions.
    ("Fast Algorithms for Mining Association Rules - group of 14 &raquo;",
     "Fast Algorithms for Mining Association Rules"),
    # Proceedings glued on without a mark, capitals as printed.
    ("Fast Algorithms for Mining Association Rules In Proc. of ACM SIGMOD",
     "Fast Algorithms for Mining Association Rules"),
    ("Fast Algorithms for Mining Association Rules Proceedings of the 1994 VLDB",
     "Fast Algorithms for Mining Association Rules"),
    # What a citation prints right after the title: pages, a report's number, a link,
    # the editors, a meeting by its acronym and year, "in``Proceedings", a lone "Intl".
    ("XSB as an efficient deductive database engine (pp. 442-453)",
     "XSB as an efficient deductive database engine"),
    ("Fast Algorithms for Mining Association Rules. 266-275. 1997. Athens",
     "Fast Algorithms for Mining Association Rules"),
    ("Mining Frequent Patterns Without Candidate Generation:[Technical Report CMPT99-12]",
     "Mining Frequent Patterns Without Candidate Generation"),
    ("Fast Algorithms for Mining Association Rules, IBM Research Report RJ9839",
     "Fast Algorithms for Mining Association Rules"),
    ("Implementing Data Cubes Efficiently. At http://db",
     "Implementing Data Cubes Efficiently"),
    ("Fast Algorithms for Mining Association Rules, Jagadish HV, Mumick IS, Eds",
     "Fast Algorithms for Mining Association Rules"),
    ("Integrating Reliable Memory in Databases, VLDB'97",
     "Integrating Reliable Memory in Databases"),
    ("Mining quantitative association rules, in``Proceedings of the ACM SIGMOD",
     "Mining quantitative association rules"),
    ("To Weave the Web. Intl", "To Weave the Web"),
])
def test_glued_fields_are_removed(printed: str, title: str) -> None:
    assert clean_title(printed, venues=["SIGMOD Conference"], people=["Rakesh Agrawal"]) == title


@pytest.mark.parametrize("title", [
    # A colon after a word that is not one of the atom's people is the title's own.
    "Aurora: A Data Stream Management System",
    "Agrawal: A Study of One Name",  # no known person named so
    # Too little would remain: the year or venue is the title's last word.
    "The Year 2000",
    "In Proc",
    "Learning in Proceedings",
    "Dr. Who and the Daleks in Space",  # "Dr" is no name of the atom's people
    "Petabyte, In Proc",  # after a comma, too little would remain
    "Sleepers and Workaholics (extended version)",  # another publication, kept
    "Building Networks from the Outside In: International Movements",  # no venue after "In:"
    "Urban centres in Zimbabwe: Inter-censal changes, 1969-82",
    "Report on the ACM Workshop on Data Streams",  # no mark before "ACM"
    "Vitamin [C] in the treatment of scurvy",  # a bracketed letter inside the title
    "SEER Cancer Statistics Review, 1975-2000. National Cancer Institute",  # a year range
    "Euro 2000. Lessons for the future of football",  # no name before the year
    # "and" and a name but no full stop after it, or too little after it; lower case.
    "Hodgkin and B. Cells in the Spleen",
    "Bread and M. Butter. A Study",
    "Fast Algorithms, and M. Smith, for Mining",  # lower case after the comma
    "Lessons Learned. 3rd Edition",  # an ordinal, but no meeting after it
    "On the Symmetric group of 4 Letters",  # no dash before it
    "What Is To Appear Next in Databases",  # no mark before "To Appear"
    "Windows (1995) Is Here",  # too little would remain
    "Reading the proceedings of a workshop",
    "Notes In Proc. Of",
    # A tail naming a venue first says which version a citation is of: left to be read.
    "The strength of weak learnability. Machine Learning 5 197-227",
    "Scaling to 1-2 Million Users, a Study",  # a range inside the title
    "WebDB '98: International Workshop on the Web and Databases",  # no mark before it
    "Amalgamating Knowledge Bases, II: Algorithms",
    "The Report of the Committee, Report Writing",  # no number after "Report"
])
def test_titles_that_look_glued_but_are_not(title: str) -> None:
    assert clean_title(title, people=["Rakesh Agrawal"]) == title


@pytest.mark.parametrize(("printed", "people", "title"), [
    # The full stop of an initial ends no segment.
    ("H. V. Jagadish, Laks V. S. Lakshmanan, Divesh Srivastava. Snakes and sandwiches: optimal "
     "clustering strategies for a data warehouse", ["H. V. Jagadish"],
     "Snakes and sandwiches: optimal clustering strategies for a data warehouse"),
    # Names before a full stop go before a colon is read: the colon is the title's own.
    ("Roger Barga, David Lomet. Phoenix project: fault-tolerant applications", ["Roger Barga"],
     "Phoenix project: fault-tolerant applications"),
    ("Paul Cotton. Implementing XQuery", ["Paul Cotton"], "Implementing XQuery"),
    ("JD Ullman, J Widom. A first course in database systems", ["Jeffrey D. Ullman"],
     "A first course in database systems"),
    ("Michael Stonebraker, Paul M. Aoki, Witold Litwin, Avi Pfeffer, Adam Sah, Jeff Sidell, Carl "
     "Staelin, Andrew Yu. Mariposa: a wide-area distributed database system", ["Carl Staelin"],
     "Mariposa: a wide-area distributed database system"),
    ("Petabyte databases. In International Conference on Management of Data", [],
     "Petabyte databases"),
    # Names go before a venue is looked for: a title may start with "In", initials be "IN".
    ("M Stonebraker. In memory of Bob Kooi. In ACM SIGMOD Record", ["Michael Stonebraker"],
     "In memory of Bob Kooi"),
    ("F Gingras, LVS Lakshmanan, IN Subramanian. Languages for multi-database "
     "interoperability. In International Conference on Management of Data",
     ["Laks V. S. Lakshmanan"], "Languages for multi-database interoperability"),
    ("RJ Bayardo, Jr., W Bohrer. InfoSleuth: agent-based semantic integration",
     ["Roberto J. Bayardo"], "InfoSleuth: agent-based semantic integration"),  # a suffix alone
])
def test_glued_authors_and_venues_of_real_records(printed: str, people: list[str],
                                                  title: str) -> None:
    assert clean_title(printed, people=people) == title


def test_authors_are_stripped_only_when_they_are_the_atoms_people() -> None:
    glued = "M. Stonebraker: The Case for Shared Nothing"
    assert clean_title(glued, people=["Michael Stonebraker"]) == "The Case for Shared Nothing"
    assert clean_title(glued, people=["Jim Gray"]) == glued


@pytest.mark.parametrize("title", [
    "Reminiscences on Influential Papers", "Editor's Notes", "Editor's notes 3", "Chair's Message",
    "Keynote Address", "Preface", "Introduction", "Foreword", "Editorial", "Guest Editorial",
    "Guest Editors' Introduction", "Guest editor's introduction: XML",
    "In Memoriam: Jim Gray", "Book Reviews", "Book Review Column", "Panel", "Treasurer's Message",
    "Standards", "Reports", "Letter from the Editor", "Message from the Program Chairs",
    "Introduction to the Special Issue on Data Streams", "Preface II",
    "Aurora",  # structural: one distinctive word
    "On the Web",  # structural: function words around one word
    # Front matter: every distinctive word a word of journals' slots.
    "Editorial Introduction", "Editorial Notes", "In this issue", "Guest Editorial Preface",
    "A Note from the Editors", "Letter to the Editor", "Author's Reply", "Corrigendum",
    "Acknowledgement to Reviewers", "Books Received", "Announcements", "News and Notes",
])
def test_generic_titles(title: str) -> None:
    assert is_generic_title(title)


@pytest.mark.parametrize("title", [
    "Aurora: A Data Stream Management System", "Data Mining", "Introduction to Algorithms",
    "Reminiscences of a Database Pioneer in Industry", "Keynote Speakers and Their Audiences",
    "Editorial Processes in Peer Review", "An Introduction to Spatial Database Systems",
    "ReLibra: Routing-Replay-Guided Load Balancing for MoE Training in Reinforcement Learning",
    # A curated prefix followed by a title of its own names one work.
    "Guest editor's introduction: special issue on XML data streams",
    "Review of Data on the Web: From Relations to Semistructured Data and XML",
    # One word of its own among the slot's words makes a title.
    "Editorial Peer Review", "Letter to the Editor on Pleural Effusion", "Systematic review",
    "Atypical hemolytic uremic syndrome", "Special issue on data streams",
])
def test_titles_that_are_not_generic(title: str) -> None:
    assert not is_generic_title(title)


@pytest.mark.parametrize(("title", "kind"), [
    ("Tutorial: Designing an Ultra Highly Available DBMS", "tutorial"),
    ("Designing an ultra highly available DBMS (tutorial session)", "tutorial"),
    ("Objects and SQL: Strange Relations? Panel", "panel"),
    ("KRISYS (Demonstration Description)", "demo"),
    ("Aurora: A Data Stream Management System (project demo description)", "demo"),
    ("VisDB: A System for Visualizing Large Databases, System Demonstration", "demo"),
    ("Databases and Visualization, Tutorial", "tutorial"),
    ("The Merge/Purge Problem for Large Databases [C]", None),
    ("Fast Algorithms for Mining Association Rules [Extended Abstract]", None),
    ("A Panel of Experts Rates Query Optimizers", None),  # the word inside the title
    ("Teaching the Tutorial", None),
])
def test_the_kind_of_contribution_a_title_is_annotated_as(title: str, kind: str | None) -> None:
    assert contribution_kind(title) == kind


@pytest.mark.parametrize(("printed", "title"), [
    ("Update on the diagnosis and treatment of human papillomavirus infection. [Review] [33 refs]",
     "Update on the diagnosis and treatment of human papillomavirus infection"),
    ("Management of histologic abnormalities of the cervix. [Review]",
     "Management of histologic abnormalities of the cervix"),
    ("Posttreatment HPV testing for recurrent CIN: a systematic review (Structured abstract)",
     "Posttreatment HPV testing for recurrent CIN: a systematic review"),
    ("Posttreatment HPV testing for recurrent CIN: a systematic review (Provisional abstract)",
     "Posttreatment HPV testing for recurrent CIN: a systematic review"),
    ("Dynamics of HPV16 DNA load reflect the natural history of cervical lesions.[Erratum appears "
     "in J Clin Virol. 2006 Oct;37(2):137]",
     "Dynamics of HPV16 DNA load reflect the natural history of cervical lesions"),
    ("Screening for cervical cancer with HPV testing [Comment in: Lancet. 2007;370:1740]",
     "Screening for cervical cancer with HPV testing"),
    ("Intrapleural immunotherapy with Corynebacterium parvum in malignant effusions [abstract]",
     "Intrapleural immunotherapy with Corynebacterium parvum in malignant effusions"),
    # A translated title in brackets, with a language tag or the original after it.
    ("[Immunotherapy of resectable lung cancer using Nocardia rubra cell wall skeleton]",
     "Immunotherapy of resectable lung cancer using Nocardia rubra cell wall skeleton"),
    ("[Early chest tube removal after coronary artery bypass graft surgery] LA: Ara",
     "Early chest tube removal after coronary artery bypass graft surgery"),
    ("Antibiotic prophylaxis in thoracic surgery. A randomized study. <ORIGINAL> PROPHYLAXIE "
     "ANTIBIOTIQUE EN CHIRURGIE THORACIQUE", "Antibiotic prophylaxis in thoracic surgery. A "
     "randomized study"),
    ("[Incentive spirometry with expiratory positive airway pressure] TO: Espirometria "
     "incentivada con presion positiva espiratoria",
     "Incentive spirometry with expiratory positive airway pressure"),
    ("Paroxysmal nocturnal hemoglobinuria and thrombosis. [French]",
     "Paroxysmal nocturnal hemoglobinuria and thrombosis"),
    ("Postoperative immunostimulation in bronchial carcinoma [Article in German]",
     "Postoperative immunostimulation in bronchial carcinoma"),
    ("Postoperative immunostimulation in bronchial carcinoma (author's transl)",
     "Postoperative immunostimulation in bronchial carcinoma"),
])
def test_notes_of_bibliographic_databases_are_removed(printed: str, title: str) -> None:
    assert clean_title(printed) == title


@pytest.mark.parametrize("title", [
    "[3H]thymidine uptake in cultured pleural mesothelial cells",  # the title's own brackets
    "Lung cancer in German coal miners",  # a language word, no tag
    "Review of the literature on pleural effusion",
    "Comments on the treatment of pleural empyema",
    "Comparison of drains [Review",  # no closing bracket: no note
    "Abstracts [1-3]",
    "Linomide in relapsing and secondary progressive MS: Part I: Trial design",
    "HPV vaccine in females in the US: Rationale and design",
])
def test_titles_whose_brackets_are_their_own(title: str) -> None:
    assert clean_title(title) == title


@pytest.mark.parametrize(("titles", "year"), [
    (("Lin, K.-I.(1995). FastMap: A Fast Algorithm for Indexing",), 1995),
    (("schapire (1991). bounds on the sample complexity of bayesian learning",), 1991),
    (("Zait, M. (1995b). Querying shapes of histories",), 1995),
    # one year, printed by two listings of the title
    (("A (1999) Title", "B (1999) Title"), 1999),
    # near misses: a year not in brackets is a date or a report's ("... Warehouse. 1999")
    (("Microsoft TerraServer: A Spatial Data Warehouse. 1999",), None),
    # two years: two citations, or the paper's and another's
    (("Smith (1998) and Jones (2001) on joins",), None),
    (("A (1998) Title", "B (2001) Title"), None),
    # a number in brackets that is no year
    (("Fast Joins (2) for Skewed Data",), None),
    (("Response to the (1994a-c) Commentary",), None),
])
def test_a_citation_gives_its_year_in_brackets(titles: tuple[str, ...], year: int | None) -> None:
    assert cited_year(titles) == year
