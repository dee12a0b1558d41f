"""Generate a node_modules-shaped tree of N files, deterministically and fast.

Each package is a directory holding ``package.json``, ``index.js`` and
``lib/0.js`` .. ``lib/{LIB-1}.js``; every fourth package has its own nested
``node_modules/`` with two sub-packages of the same shape (npm's layout when
versions conflict). Packages go under ``ROOT/node_modules/`` by default, or
under ``ROOT/<top>/`` (``--top src``) to measure the same shape outside
``node_modules``. The same N always gives the same paths and bytes.

The files are written with ``os.open``/``os.write`` in a tight loop (no
``pathlib``, no per-file ``makedirs``): about 300k files in a few seconds.

Usage: python bench/gen_tree.py ROOT N [--top node_modules]
"""

from __future__ import annotations

import argparse
import os
import sys

LIB = 8                       # lib/*.js files per package
PER_PACKAGE = 2 + LIB         # package.json, index.js, lib/*.js
NESTED_EVERY = 4              # every 4th package has a nested node_modules/
NESTED = 2                    # sub-packages in a nested node_modules/

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)


def _write(path: str, data: bytes) -> None:
    fd = os.open(path, _FLAGS, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _package(path: str, name: str) -> int:
    """One package directory; returns the number of files written."""
    os.mkdir(path)
    _write(path + "/package.json",
           b'{"name": "%s", "version": "1.0.0", "main": "index.js"}\n' % name.encode())
    _write(path + "/index.js", b"module.exports = require('./lib/0.js');\n")
    os.mkdir(path + "/lib")
    for i in range(LIB):
        _write(f"{path}/lib/{i}.js", b"exports.n = %d;\n" % i)
    return PER_PACKAGE


def generate(root: str, files: int, top: str = "node_modules",
             resume: dict | None = None) -> dict:
    """Write at least ``files`` files (rounded up to whole packages) under ``root``.

    Returns ``{"files": F, "dirs": D, "packages": P, "next": I}`` (D counts every
    directory created, ``root`` excluded). Passing that dict back as ``resume``
    grows the same tree to a larger ``files`` (the result is identical to
    generating the larger size at once), so a benchmark can measure 100, 10k,
    100k and 300k files while writing 300k files once."""
    base = os.path.join(root, top)
    if resume is None:
        os.makedirs(root, exist_ok=True)
        os.mkdir(base)
        written, dirs, packages, n = 0, 1, 0, 0
    else:
        written, dirs, packages, n = (resume["files"], resume["dirs"],
                                      resume["packages"], resume["next"])
    while written < files:
        name = f"pkg-{n:06d}"
        path = f"{base}/{name}"
        written += _package(path, name)
        dirs += 2
        packages += 1
        if n % NESTED_EVERY == NESTED_EVERY - 1:
            os.mkdir(path + "/node_modules")
            dirs += 1
            for k in range(NESTED):
                sub = f"dep-{k}"
                written += _package(f"{path}/node_modules/{sub}", sub)
                dirs += 2
                packages += 1
        n += 1
    return {"files": written, "dirs": dirs, "packages": packages, "next": n}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root")
    ap.add_argument("files", type=int)
    ap.add_argument("--top", default="node_modules")
    args = ap.parse_args(argv)
    info = generate(args.root, args.files, args.top)
    print(f"{info['files']:,} files in {info['dirs']:,} directories "
          f"({info['packages']:,} packages) under {os.path.join(args.root, args.top)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
