"""`make demo`: the whole pipeline on the checkout's stand-ins (see __main__.py)."""
