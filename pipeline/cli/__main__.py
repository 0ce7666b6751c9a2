"""`python -m fairstream.cli` runs the `fairstream` command."""

from fairstream.cli import main

main()
