"""The lab's commands (`fairstream bench …`, `fairstream tune`, `fairstream shield compare|tables|experiments`): the
`fairstream` command names them by module path only, so the product imports none of the lab."""
