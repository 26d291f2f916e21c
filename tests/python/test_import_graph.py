"""The import graph of the `runrun` package has no cycle (issue 41, point 4), except where
runrun.tensorflow reaches runrun.keras: Horovod's horovod.tensorflow offers Keras' names
(SyncBatchNormalization, DistributedOptimizer of a Keras optimizer, the elastic KerasState,
horovod.tensorflow.keras) while runrun.keras on the TensorFlow backend runs its collectives
through runrun.tensorflow. That crossing goes through one named shim, runrun.tensorflow.keras
(runrun.keras under Horovod's path): its edge to runrun.keras is the only one allowed to close a
cycle, and the only edge from runrun.tensorflow's modules into runrun.keras'.

The graph is read from the sources with `ast`, not from sys.modules: every `import` and
`from ... import` anywhere in a module (at module level, inside functions, under `if` or `try`)
and every importlib.import_module("runrun...") with a literal name. An edge goes to the module
named (`from a.b import c` to a.b.c when that is a module, else to a.b). The package
__init__ files Python runs before a submodule are not edges: a package's __init__ re-exporting
its submodules is its facade, not a cycle. No runtime, no peer: every rank checks alike.
"""

import ast
import os

import pytest

PACKAGE_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "frameworks",
                                           "python", "runrun"))

# (importer, imported): the Keras/TF compatibility crossing, the one edge that may close a cycle.
SHIM_EDGE = ("runrun.tensorflow.keras", "runrun.keras")
# Extension modules: leaves of the graph, built (a source checkout may not have them yet).
EXTENSIONS = ("runrun._core",)


def module_files(package_dir=PACKAGE_DIR):
    """{module name: path} of the package's Python modules, and EXTENSIONS (no path)."""
    root = os.path.dirname(package_dir)
    modules = dict.fromkeys(EXTENSIONS)
    for folder, _dirs, files in os.walk(package_dir):
        for file in files:
            stem, ext = os.path.splitext(file)
            if ext != ".py":
                continue
            parts = os.path.relpath(os.path.join(folder, stem), root).split(os.sep)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = os.path.join(folder, file)
    return modules


def _is_package(path):
    return path is not None and os.path.basename(path) == "__init__.py"


def imports_of(source, module, is_package, top="runrun"):
    """The names of the `top` modules `source` (module `module`) imports: the names as written,
    resolved against `module` when relative ("a.b" or, for `from a.b import c`, "a.b.c"
    followed by "a.b" as what it falls back to)."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(alias.name,) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            found += [(f"{base}.{alias.name}", base) for alias in node.names]
        elif isinstance(node, ast.Call) and node.args and \
                isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name == "import_module":
                found.append((node.args[0].value,))
    return [names for names in found if names[0].split(".")[0] == top]


def _resolve(names, modules):
    """The module an import names: the first of `names` that is a module, else its closest
    enclosing module."""
    for name in names:
        if name in modules:
            return name
    name = names[-1]
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(package_dir=PACKAGE_DIR):
    """{module: set of the package's modules it imports}."""
    modules = module_files(package_dir)
    graph = {}
    for module, path in modules.items():
        graph[module] = set()
        if path is None:
            continue
        with open(path, encoding="utf-8") as f:
            source = f.read()
        for names in imports_of(source, module, _is_package(path)):
            target = _resolve(names, modules)
            if target is not None and target != module:
                graph[module].add(target)
    return graph


def cycles(graph):
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(v):  # iterative: a long chain must not exhaust the recursion limit
        work = [(v, iter(sorted(graph.get(v, ()))))]
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        while work:
            node, successors = work[-1]
            for w in successors:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _describe(graph, component):
    members = set(component)
    return "\n".join(f"  {m} -> {', '.join(sorted(graph[m] & members))}" for m in component)


def without(graph, edge):
    return {m: targets - {edge[1]} if m == edge[0] else set(targets)
            for m, targets in graph.items()}


def package_of(module):
    """The package a module belongs to at the level the layers are drawn: runrun.common,
    runrun.torch, ... (runrun's own __init__ and top-level modules are their own)."""
    return ".".join(module.split(".")[:2])


def package_graph(graph):
    packages = {}
    for module, targets in graph.items():
        source = packages.setdefault(package_of(module), set())
        source.update(package_of(t) for t in targets if package_of(t) != package_of(module))
    return packages


# --- the checker checks ---

def test_the_reader_finds_imports_at_every_level():
    source = (
        "import runrun.common.loader\n"
        "from runrun.common import ops, exceptions as e\n"
        "from . import sibling\n"
        "from ..common.names import op_name\n"
        "import numpy\n"
        "def f():\n"
        "    from runrun.torch import collectives\n"
        "    if True:\n"
        "        try:\n"
        "            import runrun.jax as rj\n"
        "        except ImportError:\n"
        "            pass\n"
        "    return importlib.import_module('runrun.tensorflow.elastic')\n"
        "class C:\n"
        "    def g(self):\n"
        "        import runrun.keras\n")
    found = imports_of(source, "runrun.torch.sample", is_package=False)
    firsts = sorted(names[0] for names in found)
    assert firsts == ["runrun.common.exceptions", "runrun.common.loader",
                      "runrun.common.names.op_name", "runrun.common.ops", "runrun.jax",
                      "runrun.keras", "runrun.tensorflow.elastic", "runrun.torch.collectives",
                      "runrun.torch.sibling"], firsts


def test_the_checker_finds_a_cycle_through_a_function_level_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles(without(graph, ("c", "a"))) == []


def test_the_graph_is_the_package_s():
    graph = import_graph()
    assert len(graph) > 100, sorted(graph)
    assert "runrun._core" in graph  # the extension: a leaf
    # A function-level import and an importlib.import_module are edges.
    assert "runrun.tensorflow.elastic" in graph["runrun.tensorflow"]
    assert "runrun._core" in graph["runrun.common.loader"]


# --- the package ---

def test_no_import_cycle_but_the_keras_tensorflow_shim():
    graph = import_graph()
    assert SHIM_EDGE[1] in graph[SHIM_EDGE[0]], (
        f"{SHIM_EDGE[0]} no longer imports {SHIM_EDGE[1]}: update SHIM_EDGE and its comment")
    found = cycles(without(graph, SHIM_EDGE))
    assert not found, "import cycles in runrun (each: module -> its imports in the cycle):\n" + \
        "\n".join(_describe(graph, c) for c in found)


def test_runrun_tensorflow_reaches_runrun_keras_only_through_the_shim():
    graph = import_graph()
    crossing = sorted((m, t) for m, targets in graph.items() for t in targets
                      if package_of(m) == "runrun.tensorflow" and package_of(t) == "runrun.keras")
    assert crossing == [SHIM_EDGE], crossing


def test_runrun_keras_reaches_the_framework_adapters_through_one_module():
    """Keras' branches on its backend (TensorFlow, PyTorch, JAX) are runrun.keras._backend_ops'
    (with _jax_ops, its JAX side): no other module of runrun.keras imports an adapter."""
    adapters = {"runrun.tensorflow", "runrun.torch", "runrun.jax"}
    importers = sorted({m for m, targets in import_graph().items()
                        if package_of(m) == "runrun.keras" and
                        any(package_of(t) in adapters for t in targets)})
    assert importers == ["runrun.keras._backend_ops", "runrun.keras._jax_ops"], importers


def test_packages_are_layered_but_for_the_shim():
    """runrun.common below the adapters, no adapter importing another's package in a cycle
    (runrun.keras above runrun.tensorflow, runrun.torch and runrun.jax)."""
    packages = package_graph(without(import_graph(), SHIM_EDGE))
    found = cycles(packages)
    assert not found, "package cycles:\n" + "\n".join(_describe(packages, c) for c in found)


if __name__ == "__main__":
    raise SystemExit(pytest.main([__file__, "-q"]))
