"""The import graph of :mod:`kanerobot`: no cycle, no private name imported across modules.

The graph is built from the source with :mod:`ast`, not by importing, so a
function-local import (one written inside a function, a method or a class
body, executed late) counts exactly like a module-level one: a cycle hidden
inside a function is still a cycle.

How an import statement becomes edges (only :mod:`kanerobot` modules are
nodes; an import of numpy, sympy, matplotlib ... is no edge):

- ``import kanerobot.a.b`` (with or without ``as``): an edge to ``kanerobot.a.b``.
- ``from X import name`` (``X`` absolute or relative, resolved against the
  importing module's package): an edge to the submodule ``X.name`` when that
  file exists, otherwise to ``X`` itself, the module that defines ``name`` (for a
  package, its ``__init__.py``, node ``X``).
- Package ``__init__`` files are nodes like any module: they re-export the
  public API, so ``kanerobot/__init__.py`` imports most of the package. The
  implicit import of the parent packages when a submodule is imported (Python
  runs ``kanerobot/__init__.py`` before ``kanerobot/a/b.py``) is *not* an edge:
  it is how every package works and it never needs a name from a half-built
  module. An explicit ``from kanerobot.dynamics import x`` inside a module of
  the package, where ``x`` is an attribute of the package, *is* an edge to
  ``kanerobot/dynamics/__init__.py``, which imports the module back: a cycle,
  fixed by importing ``x`` from the module that defines it.

A private name is one with a single leading underscore (``_name``, not a
dunder). Importing it from another module (``from X import _name``), or
reading it as an attribute of an imported module (``import kanerobot.a as m;
m._name``, ``from kanerobot import a; a._name``), couples the importer to an
implementation detail: a shared helper should be public (documented, no
underscore) or live where it is used.
"""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent.parent / "kanerobot"
PACKAGE = PACKAGE_ROOT.name


def _module_name(path, root=PACKAGE_ROOT):
    """Dotted name of a source file of the package (``__init__.py`` names its package)."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules(root=PACKAGE_ROOT):
    """Map dotted module name -> source path, for every module of the package in folder ``root``."""
    return {_module_name(path, root): path for path in sorted(root.rglob("*.py"))}


def _is_private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _resolve_from(node, module, is_package):
    """Absolute dotted name of the ``X`` in ``from X import ...`` written in ``module``."""
    if node.level == 0:
        return node.module
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module, path, modules, root=PACKAGE_ROOT):
    """Edges and private imports of one module.

    Returns
    -------
    edges : set of (str, int)
        Imported kanerobot modules with the line of (one of) the import(s).
    private : list of str
        ``"file:line: from X import _name"`` for every private name taken from
        another module, by ``from`` import or by attribute access on an imported
        module.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    where = path.relative_to(root.parent).as_posix()
    edges = {}
    private = []
    # local names bound to a kanerobot module, for the ``m._name`` check
    module_aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    edges.setdefault(alias.name, node.lineno)
                    if alias.asname:
                        module_aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            source = _resolve_from(node, module, is_package)
            if source not in modules:
                continue
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in modules:
                    edges.setdefault(submodule, node.lineno)
                    module_aliases[alias.asname or alias.name] = submodule
                    continue
                edges.setdefault(source, node.lineno)
                if _is_private(alias.name) and source != module:
                    private.append(f"{where}:{node.lineno}: from {source} import {alias.name}")
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in module_aliases
            and _is_private(node.attr)
            and module_aliases[node.value.id] != module
        ):
            private.append(f"{where}:{node.lineno}: {module_aliases[node.value.id]}.{node.attr}")
    edges.pop(module, None)
    return edges, private


def import_graph(root=PACKAGE_ROOT):
    """The import graph of the package in folder ``root`` (default: kanerobot).

    Returns
    -------
    graph : dict
        Module name -> {imported module name: line of the import}.
    private : list of str
        Every private name imported across modules (see :func:`_imports`).
    """
    modules = _modules(root)
    graph = {}
    private = []
    for module, path in modules.items():
        graph[module], found = _imports(module, path, modules, root)
        private.extend(found)
    return graph, sorted(set(private))


def find_cycles(graph):
    """Every strongly connected component of more than one module, each as one cycle through it.

    Tarjan's algorithm finds the components; one cycle per component is then
    traced (a breadth-first search back to its first module) so the failure
    message shows a concrete chain of imports, not just a set.
    """
    return [(component, _cycle_through(graph, component)) for component in _strong_components(graph)]


def _strong_components(graph):
    """Tarjan's strongly connected components of more than one module, each sorted, in discovery order."""
    index = {}
    low = {}
    stack = []
    on_stack = set()
    components = []
    counter = [0]

    def visit(start):
        # iterative Tarjan: the graph is small but recursion depth would follow import chains
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return components


def _cycle_through(graph, component):
    """A shortest cycle of imports first -> ... -> first inside ``component`` (first: its first module)."""
    members = set(component)
    first = component[0]
    previous, closing = _paths_back(graph, members, first)
    chain = [first]
    node = closing
    while node != first:
        chain.append(node)
        node = previous[node]
    chain.append(first)
    return [chain[0]] + chain[1:-1][::-1] + [first]


def _paths_back(graph, members, first):
    """Breadth-first search from ``first`` within ``members``: (predecessor of each node reached, the node importing ``first``)."""
    previous = {first: None}
    frontier = [first]
    closing = None
    while frontier and closing is None:
        next_frontier = []
        for node in frontier:
            for child in sorted(graph[node]):
                if child not in members:
                    continue
                if child == first:
                    closing = node
                    break
                if child not in previous:
                    previous[child] = node
                    next_frontier.append(child)
            if closing is not None:
                break
        frontier = next_frontier
    return previous, closing


def _module_path(module):
    path = _modules()[module]
    return path.relative_to(PACKAGE_ROOT.parent).as_posix()


def _describe(graph, component, chain):
    steps = " -> ".join(
        f"{_module_path(a)}:{graph[a][b]}" for a, b in itertools.pairwise(chain)
    )
    members = ", ".join(_module_path(m) for m in component)
    return f"{len(component)} modules in a cycle ({members}); e.g. {steps} -> {_module_path(chain[-1])}"


def test_the_graph_sees_every_kind_of_import(tmp_path):
    """The builder on a hand-made package: relative, package, submodule, aliased and
    function-local imports are edges; private names are caught both ways."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "from pkg.a import f\n",
        "a.py": "import numpy\n\n\ndef f():\n    from pkg.sub import c\n    return c\n\n\ndef _g():\n    pass\n",
        "b.py": "from pkg.a import _g\nfrom . import a\nimport pkg.sub.c as cc\n\n\ndef h():\n    from pkg import f\n    return a._g, cc._hidden, f, __name__\n",
        "sub/__init__.py": "",
        "sub/c.py": "from .. import b\nfrom ..a import __doc__\n",
    }
    for name, text in files.items():
        (package / name).write_text(text)
    graph, private = import_graph(package)
    assert {module: sorted(targets) for module, targets in graph.items()} == {
        "pkg": ["pkg.a"],
        "pkg.a": ["pkg.sub.c"],  # function-local; numpy is no node
        "pkg.b": ["pkg", "pkg.a", "pkg.sub.c"],  # ``from pkg import f``: f is an attribute of pkg/__init__.py
        "pkg.sub": [],
        "pkg.sub.c": ["pkg.a", "pkg.b"],  # relative imports, ``..`` from pkg/sub/c.py
    }
    assert graph["pkg.b"]["pkg"] == 7  # the line of the import, for the failure message
    assert private == [
        "pkg/b.py:1: from pkg.a import _g",
        "pkg/b.py:8: pkg.a._g",
        "pkg/b.py:8: pkg.sub.c._hidden",
    ]  # a dunder (__doc__, __name__) is not private
    cycles = find_cycles(graph)
    assert [component for component, _ in cycles] == [["pkg", "pkg.a", "pkg.b", "pkg.sub.c"]]
    assert cycles[0][1] == ["pkg", "pkg.a", "pkg.sub.c", "pkg.b", "pkg"]


def test_the_graph_of_kanerobot_has_its_known_edges():
    """Spot checks on the real package: a module-level import, a package re-export,
    ``from package import module`` (an edge to the module) and a function-local import."""
    graph, _ = import_graph()
    assert "kanerobot.errors" in graph["kanerobot.robot.io"]
    assert "kanerobot.robot.description" in graph["kanerobot.robot"]
    assert "kanerobot.dynamics.coriolis" in graph["kanerobot.dynamics.lagrange"]
    assert "kanerobot.dynamics" not in graph["kanerobot.dynamics.lagrange"]
    assert "kanerobot.dynamics.kane" in graph["kanerobot.dynamics.dynamic_model"]  # imported inside kane_system
    assert not any(target.split(".")[0] != PACKAGE for targets in graph.values() for target in targets)


def test_cycle_finder_on_a_known_graph():
    """Tarjan + path tracing on a hand-made graph: one 3-cycle, one 2-cycle, one acyclic tail."""
    graph = {
        "a": {"b": 1},
        "b": {"c": 2},
        "c": {"a": 3, "d": 4},
        "d": {},
        "e": {"f": 5},
        "f": {"e": 6, "d": 7},
    }
    cycles = find_cycles(graph)
    assert sorted(component for component, _ in cycles) == [["a", "b", "c"], ["e", "f"]]
    chains = {tuple(component): chain for component, chain in cycles}
    assert chains[("a", "b", "c")] == ["a", "b", "c", "a"]
    assert chains[("e", "f")] == ["e", "f", "e"]
    assert find_cycles({"a": {"b": 1}, "b": {}}) == []


def test_no_import_cycle():
    """No cycle in the import graph, function-local imports included."""
    graph, _ = import_graph()
    cycles = find_cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(
        _describe(graph, component, chain) for component, chain in cycles
    )


def test_no_private_name_imported_across_modules():
    """No ``from X import _name`` and no ``module._name`` on another kanerobot module."""
    _, private = import_graph()
    assert not private, "private names imported across modules:\n" + "\n".join(private)
