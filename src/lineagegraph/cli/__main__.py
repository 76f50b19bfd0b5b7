"""`python -m lineagegraph.cli`: the same as the `lineagegraph` command."""

from lineagegraph.cli import main

main()
