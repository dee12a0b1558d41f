"""Loose git objects: judged once per directory, not once per file (issue 19 item 10).

A ``git commit`` of a few hundred files writes one loose object per blob and tree,
``R/objects/XX/<38 hex>`` (``<62 hex>`` with sha256), most in a new ``objects/XX``
directory: the bulk of what a short git task leaves in its stage. Judging each
through ``Registry.lookup`` and ``entry.judge_entry`` costs tens of microseconds of
Python, and the answer is the same for all of them, so :func:`shortcut` computes
it once for a directory of the new subtree ``apply._subtree`` walks, and
:meth:`Shortcut.covers` says which of its entries may take it.

Why the answer is the same, and which entries never get it:

* ``Registry.lookup`` of ``R/objects/XX/N`` (``R`` the innermost git directory
  holding it, ``XX`` two hex digits, ``N`` 38 or 62) depends on the name ``N`` only
  through ``extra`` rows (hooksPath and include targets, ``write_protect`` entries,
  ringfence's private dirs, files holding a brokered credential: no shortcut when a
  row is at, above or below the directory), ``write_protect`` globs (no shortcut
  when the profile has any), and ``staging.inside.in_git_dir``, which answers ``git-object`` for
  every such name (the hook, attributes, exclude and alternates rows need other
  names or other depths). ``R`` depends only on the directory (``git_root`` looks
  at the parent). The directory's probe is a real ``lookup`` of a name of that
  shape, which must answer ``git-object``; it also reads, once, the hooksPath of a
  repository found up from the directory (``hookdirs.Owners``), as the first file's
  lookup would have; a row added later (the count of rows changes) ends the shortcut.
* ``entry.judge_entry`` of a REGULAR file of kind ``git-object`` that ``_subtree`` judges
  (no workspace counterpart is passed) is the new-repository verdict of ``R``
  (``Registry.new_repo_reason``, the whole repository judged once when the run
  created it): the shortcut's verdict. A directory ``R/objects/XX`` gets the same
  from ``judge_entry`` (a directory is judged by what it holds; ``lookup`` always
  answers below a git directory), and is still walked entry by entry.
* Everything else takes the full path: a symbolic link, a FIFO, socket or device
  node, any other name (``objects/info/alternates``, ``objects/info/http-alternates``,
  ``objects/pack/*``, a ``hooks`` dir or a ``config`` planted under ``objects/``,
  upper-case hex), and every directory that is not ``R/objects`` or ``R/objects/XX``.
* Within one walk of a new subtree, ``R/objects/XX`` takes its shortcut from the
  one of ``R/objects`` that covered it (:func:`derived`), which shows what the
  probe would without its lookup; where it cannot, the probe is made as before.
* The apply's generic steps still happen to every covered file: setuid and setgid
  bits and privileged extended attributes are stripped (``place.strip``), and no
  link on the way is followed.
"""

from __future__ import annotations

import stat

_HEX = frozenset("0123456789abcdef")
_ID_TAILS = (38, 62)       # an object id (sha1, sha256) less its two-digit directory


def _hex(name: str, lengths: tuple[int, ...]) -> bool:
    return len(name) in lengths and _HEX.issuperset(name)


class Shortcut:
    """The verdict shared by the loose objects (``files``) or the ``objects/XX``
    directories (not ``files``) of one directory."""

    __slots__ = ("files", "verdict", "rows")

    def __init__(self, files: bool, verdict: str | None, rows: int) -> None:
        self.files, self.verdict, self.rows = files, verdict, rows

    def covers(self, registry, name: str, st) -> bool:
        if len(registry.extra) != self.rows:
            return False
        if self.files:
            return stat.S_ISREG(st.st_mode) and _hex(name, _ID_TAILS)
        return stat.S_ISDIR(st.st_mode) and _hex(name, (2,))


def shortcut(registry, rel_dir: str) -> Shortcut | None:
    """The shortcut for the entries of ``rel_dir`` (a directory of the stage), or
    None when it is not a git directory's ``objects`` or ``objects/XX``."""
    parent, _, last = rel_dir.rpartition("/")
    if last == "objects":
        files, store, probe = False, rel_dir, "00"
    elif _hex(last, (2,)) and parent.rpartition("/")[2] == "objects":
        files, store, probe = True, parent, "0" * 38
    else:
        return None
    if registry.globs:
        return None
    rel = f"{rel_dir}/{probe}"
    hit = registry.lookup(rel)           # may add rows (a repository found up from here)
    if any(k == rel_dir or rel_dir.startswith(k + "/") or k.startswith(rel_dir + "/")
           for k in registry.extra):
        return None
    root = registry.git_root(rel)
    if hit is None or root is None or store != (f"{root}/objects" if root else "objects"):
        return None
    if files and hit[0] != "git-object":
        return None
    return Shortcut(files, registry.new_repo_reason(root), len(registry.extra))


def derived(registry, parent: Shortcut | None, rel_dir: str, entries) -> Shortcut | None:
    """The shortcut of a directory ``R/objects/XX`` (``rel_dir``, its ``entries``:
    ``os.DirEntry``) from ``parent``, the one of ``R/objects`` that covered the directory
    ``XX`` in the same walk of a new subtree (``apply._subtree``), without the
    probe's registry lookup; None when that is not shown here (the caller then asks
    :func:`shortcut`). What the probe would establish, and why it holds:

    * no ``extra`` row at, above or below ``XX``: ``parent`` found none at, above or
      below ``R/objects``, and after the owners' visit of ``XX`` that the probe's
      lookup would make, the count of rows is the one ``parent`` saw (rows are only
      ever added);
    * the kind ``git-object``: ``staging.inside.in_git_dir`` answers it for every
      ``objects/XX/<id>`` below the root ``R`` (and ``parent`` needs no globs);
    * the root ``R``: ``R`` is the innermost git directory at or above
      ``R/objects`` (``parent``'s probe), so at or above ``XX`` too unless ``XX``
      itself is one: after the run (in a new subtree the upper dir alone is the
      directory the host sees, and git's rule needs an entry named ``HEAD``; a
      whiteout so named counts too) or before it (``pre.is_git_dir``).
    """
    if parent is None or parent.files or any(e.name == "HEAD" for e in entries):
        return None
    owners = registry.owners
    if owners is not None and rel_dir not in owners.visited:
        registry._owned(f"{rel_dir}/{'0' * 38}")    # as the probe's lookup would
    if len(registry.extra) != parent.rows or registry.pre is None \
            or registry.pre.is_git_dir(rel_dir):
        return None
    return Shortcut(True, parent.verdict, parent.rows)
