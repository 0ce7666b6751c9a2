"""The safe expression language of monitor specs: parsed with `ast`, whitelisted and type-checked when a spec loads,
then compiled to closures (never eval/exec) that evaluate per event, giving None when an input is missing."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from fairstream.language.closures import Fn, as_number, binary, chain, logic
from fairstream.records.errors import ExpressionError

ExprType = Literal["number", "string", "bool", "probabilities", "table"]
"""`table`: numbers by group (a trigger's window values, rates and counts), read one at a time: `rate['a']`."""

_ALLOWED = "use names, literals, + - * /, comparisons, in [...], and, or, not, a if condition else b"
_BOOL_NAMES = {"true": True, "false": False}
_NUMERIC = ("number", "bool")
"""Arithmetic takes bools as 0 and 1: `(approved and qualified) * 1` counts."""


def _div(a: float, b: float) -> float | None:
    return None if b == 0 else a / b


_ARITHMETIC = {
    ast.Add: ("+", operator.add), ast.Sub: ("-", operator.sub), ast.Mult: ("*", operator.mul), ast.Div: ("/", _div),
}
_ORDERING = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}
_EQUALITY = {ast.Eq: operator.eq, ast.NotEq: operator.ne}
_MEMBERSHIP = {ast.In: lambda a, members: a in members, ast.NotIn: lambda a, members: a not in members}
_REJECTED_OPERATORS = {
    ast.Mod: "%", ast.Pow: "**", ast.FloorDiv: "//", ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>",
    ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.Invert: "~", ast.UAdd: "+", ast.Is: "is", ast.IsNot: "is not",
}
_REJECTED_CONSTRUCTS = {
    ast.Attribute: "attribute lookups", ast.Lambda: "lambda functions",
    ast.ListComp: "comprehensions", ast.SetComp: "comprehensions", ast.DictComp: "comprehensions",
    ast.GeneratorExp: "comprehensions", ast.JoinedStr: "f-strings", ast.NamedExpr: "assignment expressions (:=)",
    ast.Dict: "dict literals", ast.Set: "set literals",
    ast.Starred: "starred expressions", ast.Await: "await expressions",
}


@dataclass(frozen=True)
class Expression:
    """A checked, compiled expression; pickles as its source and name types and recompiles on load."""

    source: str
    type: ExprType
    names: frozenset[str]
    _types: tuple[tuple[str, ExprType], ...] = field(repr=False)
    function: Fn = field(repr=False, compare=False)
    """The compiled closure: `function(env)` is `evaluate(env)` without the method call, for per-event loops."""
    reads: tuple[tuple[str, str | None], ...] = field(default=(), repr=False, compare=False)
    """What it reads, in the order written: (name, None), or (table, group) for `table['group']`."""

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        """The expression's value under `env`, or None when a name it needs is missing or None."""
        return self.function(env)

    def __reduce__(self) -> tuple[Any, ...]:
        return compile_expression, (self.source, dict(self._types))


def compile_expression(source: str, types: Mapping[str, ExprType]) -> Expression:
    """Parse, type-check and compile `source`; `types` gives the type of every name it may reference."""
    source = source.strip()
    if not source:
        raise ExpressionError("empty expression; got ''; write a condition such as score > 5")
    try:
        tree = ast.parse(source, mode="eval")
        type_, fn = _Compiler(source, types).visit(tree.body)
    except SyntaxError as e:
        column = e.offset if e.offset and e.offset <= len(source) else len(source)
        hint = "check operators, quotes and parentheses" if e.msg == "invalid syntax" else e.msg
        raise ExpressionError(f"invalid syntax at column {column}: {source!r}; {hint}") from None
    except (RecursionError, MemoryError):
        raise ExpressionError(f"expression is too deeply nested; got {len(source)} characters; simplify it") from None
    reads = _reads(tree)
    names = frozenset(name for name, _ in reads)
    return Expression(source, type_, names, tuple(sorted((name, types[name]) for name in names)), fn, reads)


def _dotted(node: ast.AST) -> str | None:
    """`a.b.c` for an attribute chain on a plain name (a dotted field path), else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def _reads(tree: ast.AST) -> tuple[tuple[str, str | None], ...]:
    """The field names and dotted paths an expression reads, a table's with the group it reads, each once in the order
    written."""
    found: list[tuple[str, str | None]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            table = _dotted(node.value)
            if table is not None:
                found.append((table, str(node.slice.value)))
                return
        path = _dotted(node) if isinstance(node, ast.Attribute | ast.Name) else None
        if path is not None:
            if path not in _BOOL_NAMES:
                found.append((path, None))
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return tuple(dict.fromkeys(found))


class _Compiler:
    """Turns a syntax tree into (type, closure) through `visit_<Node>` methods; any other node is rejected."""

    def __init__(self, source: str, types: Mapping[str, ExprType]):
        self.source = source
        self.constants: dict[Fn, Any] = {}
        """Closures that return a literal, with its value: a comparison with one skips the call."""
        self.lookups: dict[Fn, str] = {}
        """Closures that look a name up, with the name: a comparison on one reads `env` itself."""
        self.types = types

    def text(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.source, node) or self.source

    def reject(self, what: str, node: ast.AST, hint: str = _ALLOWED) -> ExpressionError:
        return ExpressionError(f"{what}; got {self.text(node)!r}; {hint}")

    def visit(self, node: ast.AST) -> tuple[ExprType, Fn]:
        visitor = getattr(self, "visit_" + type(node).__name__, None)
        if visitor is None:
            construct = _REJECTED_CONSTRUCTS.get(type(node), f"{type(node).__name__} expressions")
            raise self.reject(f"{construct} are not allowed", node)
        return visitor(node)

    def visit_Call(self, node: ast.Call) -> tuple[ExprType, Fn]:
        raise ExpressionError(f"function calls are not allowed; got '{self.text(node.func)}(...)'; {_ALLOWED}")

    def visit_List(self, node: ast.List | ast.Tuple) -> tuple[ExprType, Fn]:
        raise self.reject("list literals are only allowed after 'in' or 'not in'", node)

    visit_Tuple = visit_List

    def visit_Constant(self, node: ast.Constant) -> tuple[ExprType, Fn]:
        value = node.value
        if isinstance(value, bool):
            type_: ExprType = "bool"
        elif isinstance(value, (int, float)):
            type_ = "number"
        elif isinstance(value, str):
            type_ = "string"
        else:
            raise self.reject(f"literal {value!r} is not allowed", node, "use a number, a string, true or false")
        return type_, self.constant(value)

    def constant(self, value: Any) -> Fn:
        fn = lambda env: value  # noqa: E731
        self.constants[fn] = value
        return fn

    def visit_Attribute(self, node: ast.Attribute) -> tuple[ExprType, Fn]:
        """A dotted path into nested objects, when the input section declares it (`applicant.age > 30`)."""
        path = _dotted(node)
        if path is None:
            raise self.reject("attribute lookups are not allowed", node)
        return self.lookup(path)

    def visit_Name(self, node: ast.Name) -> tuple[ExprType, Fn]:
        name = node.id
        if name in _BOOL_NAMES:
            return "bool", self.constant(_BOOL_NAMES[name])
        return self.lookup(name)

    def lookup(self, name: str) -> tuple[ExprType, Fn]:
        if name not in self.types:
            known = ", ".join(sorted(self.types)) or "(none)"
            raise ExpressionError(f"unknown name {name!r}; known names: {known}")
        if self.types[name] == "probabilities":
            raise ExpressionError(f"{name!r} holds group probabilities: it can be a metric's group, not part of an expression")
        if self.types[name] == "table":
            raise ExpressionError(f"{name!r} holds a number per group: read one with {name}['<group>']")
        fn = lambda env: env.get(name)  # noqa: E731
        self.lookups[fn] = name
        return self.types[name], fn

    def visit_Subscript(self, node: ast.Subscript) -> tuple[ExprType, Fn]:
        """One group's number of a table (`screens_7d['a']`); None where the table has none for it and no default."""
        path = _dotted(node.value)
        key = node.slice
        if path is None or self.types.get(path) != "table" or not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            tables = ", ".join(sorted(name for name, type_ in self.types.items() if type_ == "table")) or "(none)"
            if path is not None and path not in self.types:
                raise ExpressionError(f"unknown name {path!r}; tables of numbers by group: {tables}")
            raise self.reject("only a table of numbers by group takes a subscript, and a group's name in quotes", node, _ALLOWED if tables == "(none)" else f"tables: {tables}")
        group = key.value

        def entry(env: Mapping[str, Any]) -> Any:
            table = env.get(path)
            if table is None:
                return None
            return table[group] if group in table else getattr(table, "missing", None)

        return "number", entry

    def visit_BinOp(self, node: ast.BinOp) -> tuple[ExprType, Fn]:
        if type(node.op) not in _ARITHMETIC:
            raise self.reject(f"operator '{_REJECTED_OPERATORS[type(node.op)]}' is not allowed", node)
        symbol, op = _ARITHMETIC[type(node.op)]
        (left_type, left), (right_type, right) = self.visit(node.left), self.visit(node.right)
        if left_type not in _NUMERIC or right_type not in _NUMERIC:
            raise ExpressionError(
                f"cannot apply '{symbol}' to {left_type} and {right_type}: {self.text(node)}; "
                "arithmetic works on numbers and bools (true counts 1, false 0)"
            )
        return "number", self.binary(op, left, right)

    def visit_IfExp(self, node: ast.IfExp) -> tuple[ExprType, Fn]:
        """`a if condition else b`: None when the condition is; a bool branch beside a number one counts 1 or 0."""
        condition_type, condition = self.visit(node.test)
        if condition_type != "bool":
            raise ExpressionError(
                f"the condition of 'if … else' must be bool; got {condition_type}: {self.text(node.test)}; use a comparison such as x > 0"
            )
        (then_type, then), (otherwise_type, otherwise) = self.visit(node.body), self.visit(node.orelse)
        if then_type != otherwise_type and not (then_type in _NUMERIC and otherwise_type in _NUMERIC):
            raise ExpressionError(
                f"both branches of 'if … else' need one type; got {then_type} and {otherwise_type}: {self.text(node)}"
            )
        type_: ExprType = then_type if then_type == otherwise_type else "number"
        if type_ == "number":
            then, otherwise = as_number(then), as_number(otherwise)

        def run(env: Mapping[str, Any]) -> Any:
            chosen = condition(env)
            return None if chosen is None else then(env) if chosen else otherwise(env)

        return type_, run

    def visit_UnaryOp(self, node: ast.UnaryOp) -> tuple[ExprType, Fn]:
        operand_type, operand = self.visit(node.operand)
        if isinstance(node.op, ast.USub):
            if operand_type not in _NUMERIC:
                raise ExpressionError(f"cannot negate {operand_type}: {self.text(node)}; negation works on numbers and bools")
            return "number", lambda env: None if (v := operand(env)) is None else -v
        if isinstance(node.op, ast.Not):
            if operand_type != "bool":
                raise ExpressionError(
                    f"'not' needs a bool operand; got {operand_type}: {self.text(node)}; use a comparison such as x > 0"
                )
            return "bool", lambda env: None if (v := operand(env)) is None else not v
        raise self.reject(f"operator '{_REJECTED_OPERATORS[type(node.op)]}' is not allowed", node)

    def visit_Compare(self, node: ast.Compare) -> tuple[ExprType, Fn]:
        left_type, left = self.visit(node.left)
        fns, ops = [left], []
        for op_node, right_node in zip(node.ops, node.comparators):
            kind = type(op_node)
            if kind in _MEMBERSHIP:
                if len(node.ops) > 1:
                    raise self.reject("'in' cannot be chained", node, "join the comparisons with and")
                fns.append(self.members(left_type, right_node, node))
                ops.append(_MEMBERSHIP[kind])
                continue
            if kind not in _ORDERING and kind not in _EQUALITY:
                raise self.reject(f"operator '{_REJECTED_OPERATORS[kind]}' is not allowed", node, "use == or !=")
            right_type, right = self.visit(right_node)
            if left_type != right_type:
                raise ExpressionError(
                    f"cannot compare {left_type} with {right_type}: {self.text(node)}; compare values of the same type"
                )
            if kind in _ORDERING and left_type == "bool":
                raise ExpressionError(f"cannot order bool values: {self.text(node)}; use == or != for bools")
            fns.append(right)
            ops.append(_ORDERING.get(kind) or _EQUALITY[kind])
        return "bool", self.binary(ops[0], fns[0], fns[1]) if len(ops) == 1 else chain(fns, ops)

    def binary(self, op: Callable[[Any, Any], Any], left: Fn, right: Fn) -> Fn:
        """`left op right`, None when a side is; a name compared or combined with a literal becomes one closure."""
        if left in self.lookups and right in self.constants:
            name, value = self.lookups[left], self.constants[right]

            def named(env: Mapping[str, Any]) -> Any:
                a = env.get(name)
                return None if a is None else op(a, value)

            return named
        return binary(op, left, right)

    def members(self, left_type: ExprType, node: ast.expr, compare: ast.Compare) -> Fn:
        """The list literal right of `in`, checked against the left side's type and frozen into a set."""
        if not isinstance(node, (ast.List, ast.Tuple)):
            raise self.reject("'in' needs a list literal on the right", compare, 'write e.g. race in ["a", "b"]')
        values = set()
        for element in node.elts:
            if any(isinstance(n, ast.Name) and n.id not in _BOOL_NAMES for n in ast.walk(element)):
                raise self.reject("list elements must be literals", element, 'use constants such as 1 or "a"')
            element_type, fn = self.visit(element)
            if element_type != left_type:
                raise ExpressionError(
                    f"cannot look up {left_type} in a list of {element_type}: {self.text(compare)}; "
                    "list elements must have the type of the left side"
                )
            values.add(fn({}))
        return self.constant(frozenset(values))

    def visit_BoolOp(self, node: ast.BoolOp) -> tuple[ExprType, Fn]:
        word = "and" if isinstance(node.op, ast.And) else "or"
        fns = []
        for value in node.values:
            value_type, fn = self.visit(value)
            if value_type != "bool":
                raise ExpressionError(
                    f"'{word}' needs bool operands; got {value_type}: {self.text(value)}; use a comparison such as x > 0"
                )
            fns.append(fn)
        return "bool", logic(tuple(fns), decisive=word == "or")
