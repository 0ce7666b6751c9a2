"""`python -m pipeline.cli` runs the `fairstream` command."""

from pipeline.cli import main

main()
