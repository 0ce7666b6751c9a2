"""The safe expression language of monitor specs: parsed with `ast`, type-checked against a whitelist
at load time, and compiled to closures (never eval/exec) that evaluate per event with None for missing values."""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping

from pipeline.errors import ExpressionError

ExprType = Literal["number", "string", "bool"]
Fn = Callable[[Mapping[str, Any]], Any]

_ALLOWED = "use names, literals, + - * /, comparisons, in [...], and, or, not"
_BOOL_NAMES = {"true": True, "false": False}


def _div(a: float, b: float) -> float | None:
    return None if b == 0 else a / b


def _in(a: Any, b: frozenset[Any]) -> bool:
    return a in b


def _not_in(a: Any, b: frozenset[Any]) -> bool:
    return a not in b


_ARITHMETIC = {
    ast.Add: ("+", operator.add), ast.Sub: ("-", operator.sub), ast.Mult: ("*", operator.mul), ast.Div: ("/", _div),
}
_ORDERING = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}
_EQUALITY = {ast.Eq: operator.eq, ast.NotEq: operator.ne}
_MEMBERSHIP = {ast.In: _in, ast.NotIn: _not_in}
_OPERATOR_SYMBOLS = {
    ast.Mod: "%", ast.Pow: "**", ast.FloorDiv: "//", ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>",
    ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.Invert: "~", ast.UAdd: "+", ast.Is: "is", ast.IsNot: "is not",
}
_CONSTRUCTS = {
    ast.Call: "function calls", ast.Attribute: "attribute access", ast.Subscript: "subscripts",
    ast.Lambda: "lambda functions", ast.ListComp: "comprehensions", ast.SetComp: "comprehensions",
    ast.DictComp: "comprehensions", ast.GeneratorExp: "comprehensions", ast.JoinedStr: "f-strings",
    ast.NamedExpr: "assignment expressions (:=)", ast.IfExp: "conditional expressions (x if c else y)",
    ast.Dict: "dict literals", ast.Set: "set literals", ast.Starred: "starred expressions", ast.Await: "await",
}


@dataclass(frozen=True)
class Expression:
    """A checked, compiled expression; `evaluate` returns its value, or None when an input is missing."""

    source: str
    type: ExprType
    names: frozenset[str]
    _types: tuple[tuple[str, ExprType], ...] = field(repr=False)
    _fn: Fn = field(repr=False, compare=False)

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        return self._fn(env)

    def __reduce__(self) -> tuple[Any, ...]:
        return compile_expression, (self.source, dict(self._types))


def compile_expression(source: str, types: Mapping[str, ExprType]) -> Expression:
    """Parse, type-check and compile `source`; `types` gives the type of every name it may reference."""
    source = source.strip()
    if not source:
        raise ExpressionError("empty expression; got ''; write a condition such as score > 5")
    try:
        tree = ast.parse(source, mode="eval")
        type_, fn = _Compiler(source, types).compile(tree.body)
    except SyntaxError as e:
        column = e.offset if e.offset and e.offset <= len(source) else len(source)
        hint = "check operators, quotes and parentheses" if e.msg == "invalid syntax" else e.msg
        raise ExpressionError(f"invalid syntax at column {column}: {source!r}; {hint}") from None
    except (RecursionError, MemoryError):
        raise ExpressionError(f"expression is too deeply nested; got {len(source)} characters; simplify it") from None
    names = frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id not in _BOOL_NAMES)
    return Expression(source, type_, names, tuple(sorted((n, types[n]) for n in names)), fn)


class _Compiler:
    """Turns a whitelisted syntax tree into (type, closure), raising ExpressionError on anything else."""

    def __init__(self, source: str, types: Mapping[str, ExprType]):
        self.source = source
        self.types = types

    def text(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.source, node) or self.source

    def fail(self, what: str, node: ast.AST, hint: str = _ALLOWED) -> ExpressionError:
        return ExpressionError(f"{what}; got {self.text(node)!r}; {hint}")

    def compile(self, node: ast.expr) -> tuple[ExprType, Fn]:
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.BinOp):
            return self.binop(node)
        if isinstance(node, ast.UnaryOp):
            return self.unary(node)
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.BoolOp):
            return self.boolop(node)
        if isinstance(node, (ast.List, ast.Tuple)):
            raise self.fail("list literals are only allowed after 'in' or 'not in'", node)
        if isinstance(node, ast.Call):
            raise ExpressionError(f"function calls are not allowed; got '{self.text(node.func)}(...)'; {_ALLOWED}")
        raise self.fail(f"{_CONSTRUCTS.get(type(node), type(node).__name__ + ' expressions')} are not allowed", node)

    def constant(self, node: ast.Constant) -> tuple[ExprType, Fn]:
        value = node.value
        if isinstance(value, bool):
            type_: ExprType = "bool"
        elif isinstance(value, (int, float)):
            type_ = "number"
        elif isinstance(value, str):
            type_ = "string"
        else:
            raise self.fail(f"literal {value!r} is not allowed", node, "use a number, a string, true or false")
        return type_, lambda env: value

    def name(self, node: ast.Name) -> tuple[ExprType, Fn]:
        if node.id in _BOOL_NAMES:
            value = _BOOL_NAMES[node.id]
            return "bool", lambda env: value
        if node.id not in self.types:
            known = ", ".join(sorted(self.types)) or "(none)"
            raise ExpressionError(f"unknown name {node.id!r}; known names: {known}")
        name = node.id
        return self.types[name], lambda env: env.get(name)

    def binop(self, node: ast.BinOp) -> tuple[ExprType, Fn]:
        if type(node.op) not in _ARITHMETIC:
            raise self.fail(f"operator '{_OPERATOR_SYMBOLS[type(node.op)]}' is not allowed", node)
        symbol, op = _ARITHMETIC[type(node.op)]
        (left_type, left), (right_type, right) = self.compile(node.left), self.compile(node.right)
        if left_type != "number" or right_type != "number":
            raise ExpressionError(
                f"cannot apply '{symbol}' to {left_type} and {right_type}: {self.text(node)}; "
                "arithmetic works on numbers only"
            )
        return "number", _binary(op, left, right)

    def unary(self, node: ast.UnaryOp) -> tuple[ExprType, Fn]:
        operand_type, operand = self.compile(node.operand)
        if isinstance(node.op, ast.USub):
            if operand_type != "number":
                raise ExpressionError(f"cannot negate {operand_type}: {self.text(node)}; negation works on numbers only")
            return "number", lambda env: None if (v := operand(env)) is None else -v
        if isinstance(node.op, ast.Not):
            if operand_type != "bool":
                raise ExpressionError(
                    f"'not' needs a bool operand; got {operand_type}: {self.text(node)}; use a comparison such as x > 0"
                )
            return "bool", lambda env: None if (v := operand(env)) is None else not v
        raise self.fail(f"operator '{_OPERATOR_SYMBOLS[type(node.op)]}' is not allowed", node)

    def compare(self, node: ast.Compare) -> tuple[ExprType, Fn]:
        left_type, left = self.compile(node.left)
        fns, ops = [left], []
        for op_node, right_node in zip(node.ops, node.comparators):
            kind = type(op_node)
            if kind in _MEMBERSHIP:
                if len(node.ops) > 1:
                    raise self.fail("'in' cannot be chained", node, "join the comparisons with and")
                right_type, right = self.member_list(left_type, right_node, node)
                ops.append(_MEMBERSHIP[kind])
            elif kind in _ORDERING or kind in _EQUALITY:
                right_type, right = self.compile(right_node)
                if left_type != right_type:
                    raise ExpressionError(
                        f"cannot compare {left_type} with {right_type}: {self.text(node)}; "
                        "compare values of the same type"
                    )
                if kind in _ORDERING and left_type == "bool":
                    raise ExpressionError(f"cannot order bool values: {self.text(node)}; use == or != for bools")
                ops.append(_ORDERING.get(kind) or _EQUALITY[kind])
            else:
                raise self.fail(f"operator '{_OPERATOR_SYMBOLS[kind]}' is not allowed", node, "use == or !=")
            fns.append(right)
            left_type = right_type
        return "bool", _binary(ops[0], fns[0], fns[1]) if len(ops) == 1 else _chain(fns, ops)

    def member_list(self, left_type: ExprType, node: ast.expr, compare: ast.Compare) -> tuple[ExprType, Fn]:
        if not isinstance(node, (ast.List, ast.Tuple)):
            raise self.fail("'in' needs a list literal on the right", compare, 'write e.g. race in ["a", "b"]')
        values = set()
        for element in node.elts:
            if any(isinstance(n, ast.Name) and n.id not in _BOOL_NAMES for n in ast.walk(element)):
                raise self.fail("list elements must be literals", element, 'use constants such as 1 or "a"')
            element_type, fn = self.compile(element)
            if element_type != left_type:
                raise ExpressionError(
                    f"cannot look up {left_type} in a list of {element_type}: {self.text(compare)}; "
                    "list elements must have the type of the left side"
                )
            values.add(fn({}))
        members = frozenset(values)
        return left_type, lambda env: members

    def boolop(self, node: ast.BoolOp) -> tuple[ExprType, Fn]:
        word = "and" if isinstance(node.op, ast.And) else "or"
        fns = []
        for value in node.values:
            value_type, fn = self.compile(value)
            if value_type != "bool":
                raise ExpressionError(
                    f"'{word}' needs bool operands; got {value_type}: {self.text(value)}; "
                    "use a comparison such as x > 0"
                )
            fns.append(fn)
        return "bool", (_and if word == "and" else _or)(tuple(fns))


def _binary(op: Callable[[Any, Any], Any], left: Fn, right: Fn) -> Fn:
    def run(env: Mapping[str, Any]) -> Any:
        a = left(env)
        if a is None:
            return None
        b = right(env)
        return None if b is None else op(a, b)

    return run


def _chain(fns: list[Fn], ops: list[Callable[[Any, Any], bool]]) -> Fn:
    """`a < b < c`: pairwise comparisons evaluated left to right, each operand once, stopping at the first False."""
    first, pairs = fns[0], tuple(zip(ops, fns[1:]))

    def run(env: Mapping[str, Any]) -> bool | None:
        a = first(env)
        if a is None:
            return None
        for op, fn in pairs:
            b = fn(env)
            if b is None:
                return None
            if not op(a, b):
                return False
            a = b
        return True

    return run


def _and(fns: tuple[Fn, ...]) -> Fn:
    """Three-valued `and`: False if any operand is False, else None if any is missing, else True."""

    def run(env: Mapping[str, Any]) -> bool | None:
        unknown = False
        for fn in fns:
            v = fn(env)
            if v is None:
                unknown = True
            elif not v:
                return False
        return None if unknown else True

    return run


def _or(fns: tuple[Fn, ...]) -> Fn:
    """Three-valued `or`: True if any operand is True, else None if any is missing, else False."""

    def run(env: Mapping[str, Any]) -> bool | None:
        unknown = False
        for fn in fns:
            v = fn(env)
            if v is None:
                unknown = True
            elif v:
                return True
        return None if unknown else False

    return run
