"""The spec language: the models of every spec section, loading and checking spec files, expressions, and the plan a
checked spec compiles to."""
