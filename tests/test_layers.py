"""The package's layers: every import points down, and no circle crosses a package.

The import graph is read from the source (``ast``), so it includes imports inside
functions and under ``TYPE_CHECKING``: a lazy import is still a dependency, and a
type-only one still ties the reader of a module to the module it names. The
order below is the one README.md's Layout section describes, lowest first.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: the installable package's folders (pyproject's package-dir)
PACKAGE_DIRS = {"sre_env": "sre_env", "sre_env.envs": "envs", "sre_env.faults": "faults", "sre_env.rewards": "rewards", "sre_env.wrappers": "wrappers"}

#: lowest first; a module belongs to the layer of its longest matching prefix
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundation", ("sre_env.errors", "sre_env.backend", "sre_env.loop_thread")),
    ("kubernetes vocabulary", ("sre_env.kube",)),
    ("apps", ("sre_env.apps",)),
    ("grading vocabulary", ("sre_env.rewards.base",)),
    ("sim kernel", ("sre_env.sim.kernel",)),
    ("sim nodes", ("sre_env.sim.node",)),
    ("sim logs", ("sre_env.sim.logs",)),
    ("sim network", ("sre_env.sim.network",)),
    ("sim runtime", ("sre_env.sim.runtime",)),
    ("sim kubelet", ("sre_env.sim.kubelet",)),
    ("sim control plane", ("sre_env.sim.control",)),
    ("sim traffic", ("sre_env.sim.traffic",)),
    ("sim commands", ("sre_env.sim.commands",)),
    ("telemetry", ("sre_env.telemetry",)),
    ("sim engine", ("sre_env.sim.engine", "sre_env.sim.noise", "sre_env.sim")),
    ("shell", ("sre_env.shell",)),
    ("faults", ("sre_env.faults",)),
    ("scenarios", ("sre_env.envs",)),
    ("oracles", ("sre_env.rewards",)),
    ("grading", ("sre_env.episode", "sre_env.grading")),
    ("backends", ("sre_env.sim.backend", "sre_env.sim.scripts", "sre_env.sim.episodes", "sre_env.k8s")),
    ("env", ("sre_env.env",)),
    ("wrappers", ("sre_env.wrappers",)),
    ("agents", ("sre_env.agents",)),
    ("evaluation", ("sre_env.eval",)),
    ("servers", ("sre_env.serve",)),
    ("front ends", ("sre_env.cli", "sre_env.docgen", "sre_env.rllib", "sre_env")),
)


def _modules() -> dict[str, tuple[Path, bool]]:
    out: dict[str, tuple[Path, bool]] = {}
    nested = {d for pkg, d in PACKAGE_DIRS.items() if pkg != "sre_env"}
    for pkg, folder in PACKAGE_DIRS.items():
        base = ROOT / folder
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base)
            if pkg == "sre_env" and rel.parts[0] in nested:
                continue
            parts = list(rel.with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            if is_pkg:
                parts = parts[:-1]
            out[".".join([pkg, *parts])] = (path, is_pkg)
    return out


MODULES = _modules()


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> dict[str, set[str]]:
    """module -> the package's modules it imports (anywhere in the file)."""
    graph: dict[str, set[str]] = {}
    for mod, (path, is_pkg) in MODULES.items():
        package = mod if is_pkg else mod.rpartition(".")[0]
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1])
                    full = f"{base}.{node.module}" if node.module else base
                else:
                    full = node.module or ""
                # `from pkg import mod` imports the module; `from mod import name` the module itself
                targets = [f"{full}.{a.name}" if f"{full}.{a.name}" in MODULES else full for a in node.names]
            else:
                continue
            for target in targets:
                if target.startswith("sre_env"):
                    dep = _resolve(target)
                    if dep is not None and dep != mod:
                        deps.add(dep)
        graph[mod] = deps
    return graph


def layer_of(module: str) -> int:
    best, best_len = -1, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    return best


GRAPH = import_graph()


def test_every_module_has_a_layer() -> None:
    assert [m for m in MODULES if layer_of(m) < 0] == []


def test_imports_point_down() -> None:
    upward = [
        f"{mod} ({LAYERS[layer_of(mod)][0]}) imports {dep} ({LAYERS[layer_of(dep)][0]})"
        for mod, deps in sorted(GRAPH.items())
        for dep in sorted(deps)
        if layer_of(dep) > layer_of(mod) and not mod.startswith(dep + ".")
    ]
    assert upward == [], "\n".join(upward)


def _package(module: str) -> str:
    path, is_pkg = MODULES[module]
    return module if is_pkg else module.rpartition(".")[0]


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively (components of more than one module, sorted)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        comp.append(top)
                        if top == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return sorted(out)


def test_no_circle_crosses_a_package() -> None:
    """A circle of modules is tolerated only among the files of one package."""
    crossing = [c for c in strongly_connected(GRAPH) if len({_package(m) for m in c}) > 1]
    assert crossing == [], "\n".join(" <-> ".join(c) for c in crossing)


@pytest.mark.parametrize("layer", [name for name, _ in LAYERS])
def test_layers_are_not_empty(layer: str) -> None:
    index = [name for name, _ in LAYERS].index(layer)
    assert any(layer_of(m) == index for m in MODULES), f"layer {layer!r} has no module: drop it from LAYERS"


def test_every_package_folder_is_installed() -> None:
    """A folder with an ``__init__.py`` that pyproject.toml does not list would be left out of the wheel."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    packages = {m for m, (_, is_pkg) in MODULES.items() if is_pkg}
    assert packages == listed
