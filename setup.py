"""Builds the trial folds (`pipeline/trials/folds.py`) as a C extension with Cython, where a C compiler is found.

The module is plain Python as well: without a compiler the build skips the extension and the same code runs
interpreted, only slower (`fairstream bench throughput` says which ran).
"""

from Cython.Build import cythonize
from setuptools import Extension, setup

extensions = cythonize([Extension("pipeline.trials.folds", ["pipeline/trials/folds.py"])], compiler_directives={"language_level": 3})
for extension in extensions:
    extension.optional = True  # cythonize does not carry the flag over

setup(ext_modules=extensions)
