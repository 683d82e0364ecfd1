#!/usr/bin/env python3
"""The structure check: one-way imports between apps, no import hidden in a function, no file over 500 lines.

Reads every import (module level and inside functions; relative ones resolved) with `ast` over the site's apps (the
top-level folders nvmedb, submissions, analysis and any other holding an apps.py) and the client package
(client/src/nvmedb_client), leaving out tests and migrations folders. It reports, one line each, with file:line and a
fix hint:

- an import cycle (a strongly connected component of the module graph) spanning modules of different apps, or going
  through the client's nvmedb_client.plan;
- an import of project code inside a function or method without a `# why:` comment on its line, the line above,
  or heading the unbroken run of import lines it belongs to;
- a site or client source file over 500 lines.

Exits 1 when it found any, else prints a summary and exits 0. Imports under `if TYPE_CHECKING:` never run, so they
are not edges of the graph. An import names the module it loads (`from a.b import c` is a.b.c when that is a module,
else a.b); the packages Python runs on the way (a, a.b) are not edges.
"""

from __future__ import annotations

import argparse
import ast
import io
import sys
import tokenize
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

MAX_LINES = 500
SITE_APPS = ("nvmedb", "submissions", "analysis", "reports", "browse", "datasets", "importers")
CLIENT_SOURCE = Path("client/src")
CLIENT_PACKAGE = "nvmedb_client"
PLAN_MODULE = "nvmedb_client.plan"
SKIPPED_FOLDERS = {"tests", "migrations", "__pycache__"}
WHY_MARK = "# why:"


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # the project module it loads
    path: Path
    line: int
    in_function: bool
    has_why: bool


@dataclass
class Report:
    modules: dict[str, Path] = field(default_factory=dict)  # dotted name -> file, relative to the root
    imports: list[Import] = field(default_factory=list)
    cycles: list[str] = field(default_factory=list)
    cycle_members: list[list[str]] = field(default_factory=list)  # every module of each reported cycle
    hidden_imports: list[str] = field(default_factory=list)
    long_files: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        return [*self.unreadable, *self.cycles, *self.hidden_imports, *self.long_files]


def source_roots(root: Path) -> list[tuple[Path, str]]:
    """(folder holding the package, package name) for every site app and the client package that exists."""
    apps = {name for name in SITE_APPS if (root / name).is_dir()}
    apps |= {p.parent.name for p in root.glob("*/apps.py") if p.parent.name not in {"bench", "scripts", "tests"}}
    found = [(root, name) for name in sorted(apps)]
    if (root / CLIENT_SOURCE / CLIENT_PACKAGE).is_dir():
        found.append((root / CLIENT_SOURCE, CLIENT_PACKAGE))
    return found


def module_files(root: Path) -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for base, package in source_roots(root):
        for path in sorted((base / package).rglob("*.py")):
            relative = path.relative_to(base)
            if SKIPPED_FOLDERS & set(relative.parts[:-1]):
                continue
            parts = list(relative.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def comment_lines(text: str) -> set[int]:
    """The lines holding a `# why:` comment (tokenized, so a string holding the mark does not count)."""
    marked = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT and token.string.startswith(WHY_MARK):
                marked.add(token.start[0])
    except (tokenize.TokenError, SyntaxError):
        pass
    return marked


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.Module):
    """(import node, inside a function) for every import that can run: not those under `if TYPE_CHECKING:`."""
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, in_function = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, in_function
            continue
        inside = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            if isinstance(node, ast.If) and _is_type_checking(node.test) and child in node.body:
                continue
            stack.append((child, inside))


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of a dotted name that is a project module."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def imported_modules(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, modules: dict) -> list[str]:
    if isinstance(node, ast.Import):
        return [found for alias in node.names if (found := _known(alias.name, modules))]
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        base = package[: len(package) - (node.level - 1)]
        source = ".".join([*base, node.module] if node.module else base)
    else:
        source = node.module or ""
    targets = []
    for alias in node.names:
        submodule = f"{source}.{alias.name}"
        found = submodule if submodule in modules else _known(source, modules)
        if found and found not in targets:
            targets.append(found)
    return targets


def read_imports(root: Path, report: Report) -> None:
    for module, path in report.modules.items():
        relative = path.relative_to(root)
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if lines > MAX_LINES:
            report.long_files.append(
                f"{relative}:1: {lines} lines, over the {MAX_LINES}-line limit; fix: split it along its parts"
                " (one module per job), keeping its public names importable"
            )
        try:
            tree = ast.parse(text, filename=str(relative))
        except SyntaxError as error:
            report.unreadable.append(f"{relative}:{error.lineno or 1}: cannot be parsed ({error.msg}); fix: repair it")
            continue
        why_lines = comment_lines(text)
        source_lines = text.splitlines()
        is_package = path.name == "__init__.py"
        for node, in_function in _import_nodes(tree):
            spanned = range(node.lineno - 1, (node.end_lineno or node.lineno) + 1)
            has_why = any(n in why_lines for n in spanned) or _why_above_block(node.lineno, source_lines, why_lines)
            for target in imported_modules(node, module, is_package, report.modules):
                if target != module:
                    report.imports.append(Import(module, target, relative, node.lineno, in_function, has_why))


def _why_above_block(line: int, source_lines: list[str], why_lines: set[int]) -> bool:
    """Whether a `# why:` comment heads the unbroken run of import lines this one belongs to (one comment may
    explain a block of imports made for the same reason)."""
    above = line - 1
    while above >= 1:
        if above in why_lines:
            return True
        if not source_lines[above - 1].lstrip().startswith(("import ", "from ")):
            return False
        above -= 1
    return False


def app_of(module: str) -> str:
    return module.split(".")[0]


def through_plan(module: str) -> bool:
    return module == PLAN_MODULE or module.startswith(PLAN_MODULE + ".")


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (a long chain of imports must not hit the recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def shortest_path(graph: dict[str, set[str]], start: str, goal: str, within: set[str]) -> list[str]:
    previous = {start: start}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            path = [goal]
            while path[-1] != start:
                path.append(previous[path[-1]])
            return path[::-1]
        for child in sorted(graph[node] & within):
            if child not in previous:
                previous[child] = node
                queue.append(child)
    return []


def find_cycles(report: Report) -> None:
    graph: dict[str, set[str]] = {module: set() for module in report.modules}
    where: dict[tuple[str, str], Import] = {}
    for found in report.imports:
        graph[found.module].add(found.target)
        where.setdefault((found.module, found.target), found)
    for component in strongly_connected(graph):
        members = set(component)
        apps = sorted({app_of(m) for m in component})
        plan = sorted(m for m in component if through_plan(m))
        if len(component) < 2 or (len(apps) < 2 and not plan):
            continue
        # the shortest cycle through an import that crosses apps (or enters plan), as the example to break
        edges = sorted(
            (a, b) for a in component for b in graph[a] & members if app_of(a) != app_of(b) or through_plan(b)
        )
        first, second = edges[0]
        cycle = [first, *shortest_path(graph, second, first, members)]
        hops = [where[(a, b)] for a, b in zip(cycle, cycle[1:], strict=False)]
        chain = " -> ".join(f"{hop.module} ({hop.path}:{hop.line})" for hop in hops) + f" -> {cycle[-1]}"
        why = f"spans apps {', '.join(apps)}" if len(apps) > 1 else f"goes through {PLAN_MODULE}"
        hidden = sum(1 for hop in hops if hop.in_function)
        report.cycle_members.append(component)
        report.cycles.append(
            f"{hops[0].path}:{hops[0].line}: import cycle that {why} ({len(component)} modules in the cycle;"
            f" {hidden} of this loop's {len(hops)} imports inside functions): {chain}; fix: make imports one-way"
            " (move the shared code into a lower module, or let the lower app register a hook the higher one fills)"
        )


def find_hidden_imports(report: Report) -> None:
    seen = set()
    for found in report.imports:
        if not found.in_function or found.has_why or (found.path, found.line) in seen:
            continue
        seen.add((found.path, found.line))
        report.hidden_imports.append(
            f"{found.path}:{found.line}: {found.target} imported inside a function without a `{WHY_MARK}` comment;"
            " fix: import it at the top of the module (break the cycle if that is why it hides), or, for an optional"
            f" dependency or start-up cost, say so in a `{WHY_MARK} ...` comment on or just above the line"
        )


def check(root: Path) -> Report:
    report = Report(modules=module_files(root))
    read_imports(root, report)
    find_cycles(report)
    find_hidden_imports(report)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent, help="repository root")
    parser.add_argument("--members", action="store_true", help="list every module of each import cycle")
    options = parser.parse_args(argv)
    report = check(options.root.resolve())
    for problem in report.problems:
        print(problem)
    for members in report.cycle_members if options.members else []:
        print(f"  modules of the cycle through {members[0]}: {', '.join(members)}")
    apps = sorted({app_of(m) for m in report.modules})
    print(
        f"check_structure: {len(report.modules)} modules ({', '.join(apps)}), {len(report.imports)} project imports;"
        f" {len(report.cycles)} import cycles across apps or through {PLAN_MODULE},"
        f" {len(report.hidden_imports)} function-level imports without `{WHY_MARK}`,"
        f" {len(report.long_files)} files over {MAX_LINES} lines"
        + (f", {len(report.unreadable)} files that cannot be parsed" if report.unreadable else "")
    )
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
