"""Builds the trial hot paths as C extensions with Cython, where a C compiler is found: the folds
(`pipeline/trials/folds.py`, plain Python that runs interpreted as well) and the native table of open trials
(`pipeline/trials/table.pyx`, which buckets do without, keeping trials in a dict).

Both extensions are optional: without a compiler the build skips them and the same monitor runs, only slower
(`fairstream bench throughput` says which ran).
"""

from Cython.Build import cythonize
from setuptools import Extension, setup

extensions = cythonize(
    [
        Extension("pipeline.trials.folds", ["pipeline/trials/folds.py"]),
        Extension("pipeline.trials.table", ["pipeline/trials/table.pyx"]),
    ],
    compiler_directives={"language_level": 3},
)
for extension in extensions:
    extension.optional = True  # cythonize does not carry the flag over

setup(ext_modules=extensions)
