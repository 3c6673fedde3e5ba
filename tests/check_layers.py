#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The host's layers hold (TAP): includes only go down, calls only go down, no circle.

Each file under host/ belongs to a layer (LAYERS below, the same table as
docs/architecture.md). Three checks:

- includes: every `#include "..."` of a file under host/ names a header of its own layer
  or of a layer below, from the layer's list of what it may include; a header of plugins/
  (a bundled plugin's API) is never allowed. A failure prints the file, the line and the
  rule it breaks.
- calls: the object files of the built host (nm over libhost_core.a and libhost_inspect.a):
  file A calls file B when A uses a symbol B defines. A call into a file of a higher layer
  fails, naming both files and the symbols.
- circles: no two files call each other in a circle (the strongly connected components of
  that call graph all have one file). A failure names the files and, per edge, the symbols.

usage: check_layers.py SOURCE_ROOT [ARCHIVE...]   (without archives: the include check only)
       check_layers.py --plant SOURCE_ROOT         (the check must fail on a planted include)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tapcheck import report  # noqa: E402

# (layer, the paths it holds (prefixes, relative to the source root), what it may include:
# layers by name, or single headers "host/log.h"). Order: lowest first; a file belongs to
# the first layer with a prefix of its path (host/ last: everything else there).
LAYERS = [
    ("sdk", ["sdk/"], ["sdk"]),
    ("base", ["host/log.", "host/fs.", "host/signame."], ["sdk", "base"]),
    ("world", ["host/world/"], ["sdk", "host/log.h", "world"]),
    ("scene", ["host/scene/"], ["sdk", "base", "world", "scene"]),
    ("session", ["host/plugin/", "host/session.", "host/trace."],
     ["sdk", "base", "world", "scene", "session"]),
    ("app", ["host/"], ["sdk", "base", "world", "scene", "session", "app"]),
]
RANK = {name: i for i, (name, _, _) in enumerate(LAYERS)}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(rel):
    """The layer of a path relative to the source root, or None (outside host/ and sdk/)."""
    for name, prefixes, _ in LAYERS:
        if any(rel.startswith(p) for p in prefixes):
            return name
    return None


def headers_by_name(root):
    """{basename: [path relative to root]} of every header in host/, sdk/ and plugins/."""
    found = {}
    for top in ("host", "sdk", "plugins"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith((".h", ".hpp")):
                    rel = os.path.relpath(os.path.join(d, f), root)
                    found.setdefault(f, []).append(rel)
    return found


def allowed(layer, header_rel):
    """Why a file of `layer` may not include header_rel, or None when it may."""
    if header_rel.startswith("plugins/"):
        return "nothing in host/ includes a bundled plugin's header (plugins/): use the SDK"
    target = layer_of(header_rel)
    may = next(m for n, _, m in LAYERS if n == layer)
    if target in may or header_rel in may:
        return None
    if target is not None and RANK[target] > RANK[layer]:
        return f"a {layer} file includes a header of the {target} layer above it"
    return f"a {layer} file may include only {', '.join(may)}"


def include_problems(root):
    """One line per forbidden include under root/host: file:line: the include: the rule."""
    names, problems = headers_by_name(root), []
    for d, _, files in os.walk(os.path.join(root, "host")):
        for f in sorted(files):
            if not f.endswith((".c", ".cc", ".h")):
                continue
            rel = os.path.relpath(os.path.join(d, f), root)
            layer = layer_of(rel)
            with open(os.path.join(root, rel), encoding="utf-8") as src:
                for n, line in enumerate(src, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    name = os.path.basename(m.group(1))
                    here = [h for h in names.get(name, []) if h.startswith("host/")]
                    for target in here or names.get(name, []):  # own tree's first
                        why = allowed(layer, target)
                        if why:
                            problems.append(f'{rel}:{n}: #include "{m.group(1)}" ({target}): {why}')
                        break  # not found anywhere: generated or external (cJSON, libs)
    return problems


def call_graph(archives):
    """({file: {file it calls: [symbols]}}, problems): from nm over the archives' members.
    A member "plugin_reload.c.o" is the file host/plugin/reload.c."""
    defs, uses = {}, {}
    for a in archives:
        out = subprocess.run(["nm", "-A", a], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            head, _, rest = line.rpartition(":")
            member = os.path.basename(head.split(":")[-1])  # meson's archives are thin
            parts = rest.split()
            src = member[:-2] if member.endswith(".o") else member
            for folder in ("world", "scene", "plugin"):
                if src.startswith(folder + "_"):
                    src = folder + "/" + src[len(folder) + 1:]
            src = "host/" + src
            if len(parts) == 3 and parts[1] in "TDBRV":
                defs[parts[2]] = src
            elif len(parts) == 2 and parts[0] == "U":
                uses.setdefault(src, set()).add(parts[1])
    graph = {}
    for f, syms in uses.items():
        for s in sorted(syms):
            g = defs.get(s)
            if g and g != f:
                graph.setdefault(f, {}).setdefault(g, []).append(s)
    return graph


def circles(graph):
    """The strongly connected components of more than one file (Tarjan, iterative)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, {}))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, {})))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def call_problems(graph):
    """(calls into a higher layer, circles), one line each."""
    up = []
    for f, callees in sorted(graph.items()):
        for g, syms in sorted(callees.items()):
            lf, lg = layer_of(f), layer_of(g)
            if lf and lg and RANK[lg] > RANK[lf]:
                up.append(f"{f} ({lf}) calls {g} ({lg}, a layer above): {', '.join(syms[:4])}")
    loops = []
    for comp in circles(graph):
        edges = [f"  {a} -> {b}: {', '.join(graph[a][b][:3])}"
                 for a in comp for b in sorted(graph.get(a, {})) if b in comp]
        loops.append("files calling each other in a circle: " + " ".join(comp) + "\n" +
                     "\n".join(edges))
    return up, loops


def planted(root):
    """The include check on a copy of host/ with a forbidden include planted in a world
    file and a plugins/ header in a scene file: the problems it finds (it must find both)."""
    with tempfile.TemporaryDirectory(prefix="ecs-layers-") as tmp:
        for top in ("host", "sdk", "plugins"):
            shutil.copytree(os.path.join(root, top), os.path.join(tmp, top),
                            ignore=shutil.ignore_patterns("*.html", "*.cc"))
        with open(os.path.join(tmp, "host/world/entity.c"), "a", encoding="utf-8") as f:
            f.write('#include "plugin.h"\n')
        with open(os.path.join(tmp, "host/scene/gltf.c"), "a", encoding="utf-8") as f:
            f.write('#include "debug_name_api.h"\n')
        return include_problems(tmp)


def main(argv):
    if len(argv) == 3 and argv[1] == "--plant":
        found = planted(argv[2])
        want = ['host/world/entity.c', 'host/scene/gltf.c']
        missed = [w for w in want if not any(p.startswith(w) for p in found)]
        return report([("a planted forbidden include fails the check",
                        [f"not found: the include planted in {m}" for m in missed] +
                        (found if missed else []))])
    root, archives = argv[1], argv[2:]
    checks = [("includes go to the same layer or below, never to plugins/",
               include_problems(root))]
    if archives:
        if not shutil.which("nm"):
            checks.append(("nm (binutils) is there", ["nm not found: install binutils"]))
        else:
            up, loops = call_problems(call_graph(archives))
            checks.append(("calls go to the same layer or below", up))
            checks.append(("no files call each other in a circle", loops))
    return report(checks)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
