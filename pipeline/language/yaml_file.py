"""Spec files as YAML: found by path or as a bundled spec, bounded in size and nesting, read with YAML 1.2 booleans and
no duplicate keys; every syntax problem reported by line and column."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from fairstream.paths import SPECS_DIR
from fairstream.records.errors import SpecError


class _Yaml12Loader(yaml.SafeLoader):
    """YAML 1.2 booleans: only true/false are booleans, so keys such as `on:` and values such as `no` stay strings; a
    key given twice in one mapping is an error (PyYAML would keep the last silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, yaml.Mark] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *defaults` keys may be overridden on purpose
                continue
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, str | int | float | bool) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first at line {seen[key].line + 1}): the second would silently replace the first", key_node.start_mark
                )
            seen.setdefault(key, key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


_Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


MAX_SPEC_BYTES = 1_000_000
"""A spec is a page of YAML; a larger file is refused before it is parsed (parsing and checking grow with its size)."""


def find_spec(name: str | Path) -> Path:
    """The spec file at `name`, or, when there is none and `name` has no folder, the bundled spec of that name
    (`compas_equalized_odds` or `compas_equalized_odds.yaml`)."""
    path = Path(name)
    if path.exists() or path.parent != Path("."):
        return path
    bundled = SPECS_DIR / (path.name if path.suffix in (".yaml", ".yml") else f"{path.name}.yaml")
    return bundled if bundled.is_file() else path


def bundled_specs() -> list[str]:
    return sorted(path.stem for path in SPECS_DIR.glob("*.yaml"))


def read_yaml(path: str | Path) -> Any:
    """The YAML document in a spec file (or bundled spec, see `find_spec`), with syntax errors reported by line and column."""
    source = str(path)
    try:
        found = find_spec(path)
        size = found.stat().st_size
        if size > MAX_SPEC_BYTES:
            raise SpecError(source, [("", f"the spec has {size:,} bytes, more than the {MAX_SPEC_BYTES:,} a spec may have")])
        text = found.read_text()
    except FileNotFoundError:
        raise SpecError(source, [("", f"no such file, and no bundled spec of that name (bundled: {', '.join(bundled_specs())})")]) from None
    except OSError as err:
        raise SpecError(source, [("", f"cannot read the spec: {err.strerror}")]) from None
    try:
        data = yaml.load(text, Loader=_Yaml12Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise SpecError(source, [("", f"{where}invalid YAML: {getattr(err, 'problem', err)}")]) from None
    except RecursionError:
        raise SpecError(source, [("", f"values nested deeper than the {MAX_SPEC_DEPTH} levels a spec may have")]) from None
    if _depth(data) > MAX_SPEC_DEPTH:
        raise SpecError(source, [("", f"values nested deeper than the {MAX_SPEC_DEPTH} levels a spec may have")])
    return data


MAX_SPEC_DEPTH = 32
"""The deepest nesting of mappings and lists a spec may have (the deepest real one has six)."""


def _depth(data: Any) -> int:
    """How deep mappings and lists nest in `data`, found without recursion."""
    deepest, pending = 0, [(data, 0)]
    while pending:
        value, level = pending.pop()
        deepest = max(deepest, level)
        if level > MAX_SPEC_DEPTH:
            break
        if isinstance(value, dict):
            pending.extend((item, level + 1) for item in value.values())
        elif isinstance(value, list):
            pending.extend((item, level + 1) for item in value)
    return deepest
