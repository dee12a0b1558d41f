"""Small file operations for the run path, without importing shutil.

``import shutil`` also imports bz2, lzma and zlib: a few milliseconds that every
``ringfence run`` paid to copy one file and remove a dir of two entries.
"""

from __future__ import annotations

import os

_SMALL = 16          # entries per dir that remove_tree handles itself


def remove_tree(path: str) -> None:
    """``shutil.rmtree(path, ignore_errors=True)``: never follows a symlink (a
    link is unlinked, not descended); hands big or stubborn trees to shutil."""
    try:
        if os.path.islink(path):        # os.walk would follow it: never descend
            os.unlink(path)
            return
        for dirpath, dirnames, filenames in os.walk(path, topdown=False):
            if len(filenames) + len(dirnames) > _SMALL:
                raise OSError("large tree")
            for name in filenames:
                os.unlink(os.path.join(dirpath, name))
            for name in dirnames:
                full = os.path.join(dirpath, name)
                os.unlink(full) if os.path.islink(full) else os.rmdir(full)
        os.rmdir(path)
    except FileNotFoundError:
        pass
    except OSError:
        import shutil

        shutil.rmtree(path, ignore_errors=True)


def copy_file(src: str, dst: str) -> None:
    """``shutil.copyfile(src, dst)`` (contents only; raises OSError)."""
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        while chunk := fin.read(1 << 20):
            fout.write(chunk)
