"""Maps the project's folders into the `fairstream` import package and builds the trial hot paths as C extensions.

`pipeline/` is installed as `fairstream`, `connectors/` as `fairstream.connectors` and the bundled specs as
`fairstream.specs` (package data), so the layout of the repository stays as it is while nothing generic lands at
the top level of a user's environment.

With Cython and a C compiler, the folds (`pipeline/trials/folds.py`, plain Python that runs interpreted as well) and
the native table of open trials (`pipeline/trials/table.pyx`, which buckets do without, keeping trials in a dict)
Kafka's murmur2 partitioner (`pipeline/trials/murmur.pyx`, which `placement.py` has in Python as well) and the
common ISO 8601 event times (`pipeline/records/isotime.pyx`, in front of `timefmt`'s Python parser) the typed
decoding of JSON records (`pipeline/reading/typed.py`, plain Python too) and the byte scan that lets it decode a whole
block of lines at once (`pipeline/reading/scan.pyx`) are compiled. The extensions are optional: without a compiler the build skips them and the same monitor runs, only
slower (`fairstream bench throughput` says which ran).
"""

from Cython.Build import cythonize
from setuptools import Extension, find_packages, setup

FOLDERS = {"fairstream": "pipeline", "fairstream.connectors": "connectors", "fairstream.specs": "specs"}

packages = [
    f"{package}.{sub}" if sub else package
    for package, folder in FOLDERS.items()
    for sub in ["", *find_packages(folder)]
]

extensions = cythonize(
    [
        Extension("fairstream.trials.folds", ["pipeline/trials/folds.py"]),
        Extension("fairstream.trials.table", ["pipeline/trials/table.pyx"]),
        Extension("fairstream.trials.murmur", ["pipeline/trials/murmur.pyx"]),
        Extension("fairstream.records.isotime", ["pipeline/records/isotime.pyx"]),
        Extension("fairstream.reading.typed", ["pipeline/reading/typed.py"]),
        Extension("fairstream.reading.scan", ["pipeline/reading/scan.pyx"]),
        Extension("fairstream.shields.energy.group_kernel", ["pipeline/shields/energy/group_kernel.pyx"]),
    ],
    compiler_directives={"language_level": 3},
)
for extension in extensions:
    extension.optional = True  # cythonize does not carry the flag over

setup(
    packages=packages,
    package_dir=FOLDERS,
    package_data={"fairstream.specs": ["*.yaml"], "fairstream.dashboard": ["static/*"], "fairstream.records": ["schemas/*.json"]},
    ext_modules=extensions,
)
