"""Models as programs of named intermediate variables (SYMORO's customized symbolic form)."""

from kanerobot.symbolic.printing import format_assignments, format_matrix, format_operations, format_program
from kanerobot.symbolic.program import (
    NameCollisionError,
    Program,
    count_ops,
    is_trivial,
    simplify_trig_products,
)

__all__ = [
    "NameCollisionError",
    "format_assignments",
    "format_matrix",
    "Program",
    "count_ops",
    "format_operations",
    "format_program",
    "is_trivial",
    "simplify_trig_products",
]
