#!/usr/bin/env python3
"""The layers of src/, checked (docs/architecture.md).

CMake writes its own target graph, folded to modules, into the build directory (layers.txt: the order on its
first line, then one line per module naming the modules its targets link). Two rules hold:

- a module links only modules below it in the order (no upward link, so no cycle);
- a file of src/MODULE includes only its own module's headers and those of the modules MODULE links
  directly: a header of a module the CMake target does not name is an undeclared use.

    tools/check_layers.py BUILD/layers.txt SRC_DIR      exit 1 with one line per break, 0 when none
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCES = {".c", ".cc", ".cpp", ".h", ".hpp", ".inc"}


def read_layers(path):
    """(order, uses): the modules lowest first and, per module, the set of modules it links."""
    order, uses = [], {}
    for line in pathlib.Path(path).read_text().splitlines():
        name, _, rest = line.partition(":")
        if not name.strip():
            continue
        if name.strip() == "order":
            order = rest.split()
        else:
            uses[name.strip()] = set(rest.split())
    return order, uses


def breaks(order, uses, src):
    """One line per link that runs upward and per include of a module that is not linked."""
    src = pathlib.Path(src)
    rank = {m: i for i, m in enumerate(order)}
    problems = []
    for module in order:
        for used in sorted(uses.get(module, ())):
            if used not in rank:
                problems.append(f"src/{module}: links {used}, which is not in the layer order: add it there")
            elif rank[used] >= rank[module]:
                problems.append(
                    f"src/{module}: links {used}, which sits above it in the layers ({' < '.join(order)}): "
                    f"move the code it needs down, or {module} up")
    for module in order:
        allowed = uses.get(module, set()) | {module}
        root = src / module
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if path.suffix not in SOURCES or not path.is_file():
                continue
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                target = match.group(1).split("/")[0]
                if target in rank and target not in allowed:
                    where = path.relative_to(src.parent) if src.parent in path.parents else path
                    how = ("it sits above it in the layers" if rank[target] > rank[module]
                           else f"src/{module}/CMakeLists.txt does not link it")
                    problems.append(f"{where}:{number}: {module} includes {match.group(1)}, but {how}")
    return problems


def main(argv):
    if len(argv) != 3:
        print("usage: check_layers.py BUILD/layers.txt SRC_DIR", file=sys.stderr)
        return 2
    order, uses = read_layers(argv[1])
    if not order:
        print(f"{argv[1]}: no 'order:' line: re-run cmake", file=sys.stderr)
        return 2
    problems = breaks(order, uses, argv[2])
    for p in problems:
        print(p)
    if not problems:
        print(f"{len(order)} modules, lowest first: {' < '.join(order)}; no include or link breaks the order")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
