"""`python -m fairstream.cli` runs the `fairstream` command."""

from fairstream.cli import main

if __name__ == "__main__":
    main()
