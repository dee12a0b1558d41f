"""Judges of the text files git reads from the work tree: ``.gitattributes`` (and
``info/attributes``) and ``.gitmodules``. Each returns None when the change is
harmless, else why it is held (``ringfence/staging/judges.py`` calls them)."""

from __future__ import annotations

# Attributes that name a driver (``filter=``, ``diff=``, ``merge=``), or make git diff
# show no content ("Binary files differ") or merge without looking (``-diff``,
# ``!diff``, ``binary``, ``-merge``, with any ``=value``): a run's own edit to the
# file then stays out of the review (``_bad_word``).


def _words(line: str) -> list[str]:
    """The pattern, then the attributes, as git's ``parse_attr_line`` reads them: a
    pattern in double quotes (C-style, escapes allowed) ends at its closing quote,
    and the attributes start right after it, with or without a blank."""
    text = line.replace("\r", " ").replace("\t", " ")
    body = text.lstrip(" ")
    if body.startswith('"'):
        i = 1
        while i < len(body) and body[i] != '"':
            i += 2 if body[i] == "\\" else 1
        if i < len(body):                   # closed: git takes it as the pattern
            return [body[:i + 1]] + [w for w in body[i + 1:].split(" ") if w]
    return [w for w in text.split(" ") if w]


def _bad_word(word: str, macros: set[str]) -> str | None:
    # git's parse_attr: a leading "-" unsets, "!" unspecifies, and a value after
    # "=" is ignored for those two (``-diff=x`` is ``-diff``).
    sign = word[0] if word[:1] in ("-", "!") else ""
    name, eq, _ = word[len(sign):].partition("=")
    if eq and not sign and name in ("filter", "diff", "merge"):
        return f"names a filter/diff/merge driver ({word})"
    if (sign and name in ("diff", "merge")) or name == "binary":
        return f"makes git diff or merge skip the file's content ({word})"
    if name in macros:
        return f"uses a macro that sets a driver or hides the diff ({word})"
    return None


def judge_attributes(text: str, old_text: str) -> str | None:
    # git reads a line up to "\n" only (a bare CR is a blank inside the line);
    # Python's splitlines would split on CR, FF, VT and more.
    text, old_text = text.removeprefix("\ufeff"), old_text.removeprefix("\ufeff")  # git skips a BOM
    macros: set[str] = set()       # [attr]name definitions, old or new, that are bad
    defs = [w for w in (_words(ln) for ln in (old_text + "\n" + text).split("\n"))
            if w and w[0].startswith("[attr]")]
    for _ in range(4):                 # macros may use macros
        for words in defs:
            if any(_bad_word(w, macros) for w in words[1:]):
                macros.add(words[0][len("[attr]"):])
    before = set(old_text.split("\n"))
    for line in text.split("\n"):
        if line in before:
            continue
        words = _words(line)
        if not words or words[0].startswith("#"):
            continue
        for word in words[1:]:
            why = _bad_word(word, macros)
            if why:
                return why
    return None


_SUBMODULE_DATA = frozenset({"path", "url", "branch", "shallow", "ignore",
                             "fetchrecursesubmodules", "update"})


def judge_gitmodules(new_pairs) -> str | None:
    for key, value in new_pairs:
        section, _, var = key.partition(".")
        var = var.rpartition(".")[2].lower()
        v = (value or "").strip().lower()
        if section.lower() != "submodule" or var not in _SUBMODULE_DATA:
            return f"a .gitmodules key ringfence cannot judge ({key})"
        if var == "update" and v not in ("checkout", "rebase", "merge", "none"):
            return f"submodule update command ({value})"
        if var == "ignore" and v not in ("none", ""):
            return f"hides the submodule's changes from git status and diff ({value})"
        if var == "url" and v.startswith(("ext::", "fd::")):
            return f"a submodule url through a transport that runs a program ({value})"
    return None
