"""`python -m demo` (`make demo`)."""

from demo import main

main()
