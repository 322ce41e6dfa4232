"""Project commands (``COMMANDS_MODULE = "crawler.commands"``).

``crawl`` replaces Scrapy's own: same options, plus an exit status that says
whether the run worked, and a lock so two runs of one job never overlap.
"""
