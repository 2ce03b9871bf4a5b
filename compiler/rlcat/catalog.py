"""The catalog on disk: recipes, models, datasets, platform profiles and results, found by name.

Files are named after their entry (`recipes/geo3k_megatron_4_4.yaml` holds recipe
`geo3k_megatron_4_4`), so a lookup opens one file instead of parsing the whole catalog.

Catalog folders may come from a pull request, so the walk that finds entries trusts nothing on
disk: it follows a link only while it stays inside the catalog folder it sits in, diagnoses link
loops, unreadable files and folders and anything but a regular file where an entry is expected, and
never opens a file (what it learns comes from `lstat`/`stat`). `rlcat validate` collects its files
with the same walk, so validation and lookups see the same entries with the same kinds.
"""

from __future__ import annotations

import errno
import filecmp
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Literal

from rlcat.diagnostics import Diagnostic, Note, RlcatError, diag, has_errors, suggestion_hint
from rlcat.inside import inside, link_out, link_target

PACKAGE_DIR = Path(__file__).resolve().parent
ENTRY_SUFFIXES = (".yaml", ".yml")  # `x.yml` is entry `x` exactly as `x.yaml` is


@cache
def builtin_root() -> Path:
    """The folder holding catalog/, recipes/ and schemas/.

    In a wheel they are copied to rlcat/_data; in a checkout (editable install) they sit at the
    repository's top level, two folders above this package (compiler/rlcat).
    """
    packaged = PACKAGE_DIR / "_data"
    if packaged.is_dir():
        return packaged
    return PACKAGE_DIR.parent.parent


@cache
def repo_root() -> Path | None:
    """The rlcat checkout this package runs from (generators write there), or None for an installed
    wheel. Only a pyproject.toml that declares the rlcat project counts: an installed rlcat may sit
    in a site-packages inside some unrelated project, whose root must not be written to."""
    pyproject = PACKAGE_DIR.parent.parent / "pyproject.toml"
    try:
        declares_rlcat = 'name = "rlcat"' in pyproject.read_text(encoding="utf-8")
    except OSError:
        return None
    return pyproject.parent if declares_rlcat else None


def user_roots(extra: list[Path] | None = None) -> list[Path]:
    """User catalog folders: --catalog options first, then RLCAT_PATH entries."""
    roots = list(extra or [])
    env = os.environ.get("RLCAT_PATH", "")
    roots += [Path(p) for p in env.split(os.pathsep) if p]
    return roots


def schemas_dir() -> Path:
    return builtin_root() / "schemas"


def display_path(path: Path) -> str:
    """A short, stable name for a file in diagnostics and provenance: relative to its data root."""
    return _display(str(path), os.getcwd())


@cache
def _display(path: str, cwd: str) -> str:
    # cached: validating a thousand recipes asks for the same few names thousands of times.
    # The name as given comes first, then with its folder resolved; never the file itself resolved:
    # a link is named as the link (a link loop cannot even be resolved).
    absolute = os.path.abspath(path)
    parent_resolved = os.path.join(os.path.realpath(os.path.dirname(absolute)), os.path.basename(absolute))
    for candidate in (absolute, parent_resolved):
        for base in (str(builtin_root()), cwd):
            if inside(candidate, base):
                return Path(os.path.relpath(candidate, base)).as_posix()
    return path


Kind = Literal["recipe", "model", "dataset", "platform", "result"]
KIND_DIRS: dict[Kind, str] = {
    "recipe": "recipes",
    "model": "catalog/models",
    "dataset": "catalog/datasets",
    "platform": "catalog/platforms",
    "result": "catalog/results",
}
_KIND_OF_FOLDER: dict[tuple[str, ...], Kind] = {tuple(d.split("/")): k for k, d in KIND_DIRS.items()}


def kind_at(parts: Sequence[str]) -> Kind:
    """The kind of the entry file at `parts` (relative to its catalog root, as given: never a link's
    target): the nearest folder that names a kind decides (`catalog/models/...` a model, `recipes/...`
    a recipe); a file under neither is a recipe, as in a user folder that holds recipes directly."""
    folders = tuple(parts[:-1])
    for end in range(len(folders), 0, -1):
        pair, last = folders[max(end - 2, 0) : end], folders[end - 1 : end]
        kind = _KIND_OF_FOLDER.get(pair) or _KIND_OF_FOLDER.get(last)
        if kind is not None:
            return kind
    return "recipe"


# --- the walk --------------------------------------------------------------------------------------


@dataclass
class Walk:
    """What a walk found: entry files (paths as walked, never resolved) and what is wrong on disk."""

    files: list[Path] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)


@dataclass(frozen=True)
class _Seen:
    """One path as `lstat` (and, for a link that stays inside the boundary, `stat`) sees it."""

    type: Literal["folder", "file", "other", "problem"]
    real: str = ""
    is_link: bool = False
    problem: Diagnostic | None = None
    # whether the problem is about a folder, or may be: such a problem is reported whatever the name
    maybe_folder: bool = False


_FILE_TYPES = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def _look(path: Path, boundary: str, real_folder: str | None = None) -> _Seen:
    """What `path` is, following a link only when its target is inside `boundary` (a real path).
    `real_folder` is the resolved folder `path` sits in, when known. Nothing is opened: a FIFO or a
    device is only stat'ed, so the walk never blocks on one."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return _Seen("problem", problem=diag("RLC001", f"no such file or folder: {path}", file=str(path)))
    except OSError as exc:
        return _Seen("problem", problem=_unreadable(path, exc.strerror or str(exc)), maybe_folder=True)
    is_link = stat.S_ISLNK(info.st_mode)
    if is_link:
        try:
            real = os.path.realpath(path, strict=True)
        except OSError as exc:
            return _Seen("problem", is_link=True, problem=_broken_link(path, exc))
        problem = link_out(path, boundary, display_path(path))
        if problem is not None:
            return _Seen("problem", real, True, problem, maybe_folder=os.path.isdir(real))
        try:
            info = os.stat(real)
        except OSError as exc:
            return _Seen(
                "problem", real, True, _unreadable(path, exc.strerror or str(exc)), maybe_folder=True
            )
    else:
        real = os.path.join(real_folder, path.name) if real_folder else os.path.realpath(path)
    if stat.S_ISDIR(info.st_mode):
        return _Seen("folder", real, is_link)
    if not stat.S_ISREG(info.st_mode):
        name = display_path(path)
        what = _FILE_TYPES.get(stat.S_IFMT(info.st_mode), "not a regular file")
        problem = diag("RLC012", f"not a regular file: {name} is {what}; not read", file=name)
        return _Seen("other", real, is_link, problem)
    if not os.access(real, os.R_OK):
        return _Seen("problem", real, is_link, _unreadable(path, "permission denied"))
    return _Seen("file", real, is_link)


def _unreadable(path: Path, reason: str) -> Diagnostic:
    name = display_path(path)
    return diag("RLC001", f"cannot read {name}: {reason}", file=name)


def _broken_link(path: Path, exc: OSError) -> Diagnostic:
    """A link that cannot be resolved: a loop, a dangling link, or one through an unreadable folder."""
    name, target = display_path(path), link_target(path)
    if exc.errno == errno.ELOOP:
        return diag(
            "RLC011",
            f"link loop: {name} -> {target} never reaches a file; not followed",
            file=name,
            hint="replace the link with the file it should name",
        )
    if exc.errno == errno.ENOENT:
        return diag("RLC001", f"{name} is a link to {target}, which does not exist", file=name)
    return diag("RLC001", f"cannot follow the link {name} -> {target}: {exc.strerror or exc}", file=name)


# The kernel's file systems: what they list changes as it is read (processes come and go), they
# hold links to every file of the machine, and no recipe is ever kept there.
KERNEL_FOLDERS = ("/proc", "/sys")


def kernel_folder(path: Path) -> Diagnostic | None:
    """RLC012 when `path` (resolved) is in /proc or /sys: nothing there is read as a catalog."""
    real = os.path.realpath(path)
    found = next((top for top in KERNEL_FOLDERS if inside(real, top)), None)
    if found is None:
        return None
    name = display_path(path)
    return diag(
        "RLC012",
        f"{name}: {found} is the kernel's view of the machine, not a folder of files; not read",
        file=name,
        hint="name the folder that holds recipes/ and catalog/ (or the recipe files)",
    )


def walk_entries(
    start: Path, boundary: Path, *, folder_only: bool = False, suffixes: tuple[str, ...] = ENTRY_SUFFIXES
) -> Walk:
    """The entry files at `start`: `start` itself when it is a file (any name: it was asked for by
    name), else every file under it whose name ends in one of `suffixes` (`.yaml`/`.yml`; `rlcat
    lint` walks `.sh`), recursively, in a stable order.

    Hidden files and folders (a name starting with `.`) under `start` are skipped. A link is followed
    only when its target is inside `boundary` (the catalog root, or the folder being validated); a
    link out, a link loop, an unreadable file or folder, and anything but a regular file where an
    entry is expected are diagnostics, and none of them is read. With `folder_only`, a `start` that
    is not a folder is a diagnostic too.
    """
    walk = Walk()
    kernel = kernel_folder(start)
    if kernel is not None:
        walk.problems.append(kernel)
        return walk
    boundary_real = os.path.realpath(boundary)
    top = _look(start, boundary_real)
    if top.type == "file" and not folder_only:
        walk.files.append(start)
        return walk
    if top.type != "folder":
        name = display_path(start)
        walk.problems.append(top.problem or diag("RLC012", f"{name} is a file, not a folder", file=name))
        return walk
    visited = {top.real}
    tree = [(start, top.real)]  # the folders themselves, walked first (depth first)
    # Folder links inside the boundary are followed after the tree, so that a link into the tree is
    # seen as the second way in that it is (and skipped), never the folder it points at.
    linked: list[tuple[Path, str]] = []
    while tree or linked:
        if tree:
            folder, real = tree.pop()
        else:
            folder, real = linked.pop(0)
            if real in visited:
                continue  # a second way into a folder walked already: its entries are in
            visited.add(real)
        for child in _visible_children(folder, walk):
            seen = _look(child, boundary_real, real)
            is_entry_name = child.name.endswith(suffixes)
            if seen.type == "folder" and seen.is_link and inside(real, seen.real):
                walk.problems.append(_loop(child))
            elif seen.type == "folder" and seen.is_link:
                linked.append((child, seen.real))
            elif seen.type == "folder" and seen.real not in visited:
                visited.add(seen.real)
                tree.append((child, seen.real))
            elif seen.type == "file" and is_entry_name:
                walk.files.append(child)
            elif seen.problem is not None and (is_entry_name or seen.maybe_folder):
                # a README that cannot be read, or a dangling link without an entry's name, is no
                # entry and is left alone; anything that is, or may hold, an entry is reported
                walk.problems.append(seen.problem)
    walk.files.sort()
    return walk


def collect_files(
    paths: Iterable[Path], catalog: Catalog | None, suffixes: tuple[str, ...] = ENTRY_SUFFIXES
) -> tuple[list[Path], list[Diagnostic]]:
    """The files a command was given to read (`rlcat validate`: entries; `rlcat lint`: `.sh`
    scripts): each file named, and the files under each folder named (walk_entries, recursive), in
    a stable order; and what is wrong on disk: missing paths, links out of the folder read, link
    loops, unreadable files and folders, FIFOs and devices.

    The folder read, which no link is followed out of, is the catalog root the path sits in (with a
    `catalog`), else the folder given, or the folder a given file sits in."""
    files: list[Path] = []
    problems: list[Diagnostic] = []
    for path in paths:
        walk = walk_entries(path, read_boundary(path, catalog), suffixes=suffixes)
        files += walk.files
        problems += walk.problems
    return list(dict.fromkeys(files)), problems


def read_boundary(path: Path, catalog: Catalog | None) -> Path:
    """The folder no link is followed out of when `path` is read: the catalog root it sits in, else
    the folder given, or the folder a given file sits in (inside.link_leaves)."""
    root = catalog.root_of(path) if catalog is not None else None
    if root is not None:
        return root
    if os.path.isdir(path) and not os.path.islink(path):
        return path
    return Path(os.path.abspath(path)).parent


def _visible_children(folder: Path, walk: Walk) -> list[Path]:
    """The children of a folder that are not hidden, sorted; an unreadable folder is a diagnostic."""
    try:
        with os.scandir(folder) as entries:
            names = sorted(e.name for e in entries if not e.name.startswith("."))
    except OSError as exc:
        name = display_path(folder)
        walk.problems.append(diag("RLC001", f"cannot read folder {name}: {exc.strerror or exc}", file=name))
        return []
    return [folder / n for n in names]


def _loop(link: Path) -> Diagnostic:
    name = display_path(link)
    return diag(
        "RLC011",
        f"link loop: {name} -> {link_target(link)} leads back to a folder it sits in; not followed",
        file=name,
        hint="remove the link: following it would walk the same folders forever",
    )


# --- the catalog -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Conflict:
    """An RLC206 or RLC207 finding and the entry files it is about (absolute, as walked)."""

    diagnostic: Diagnostic
    files: frozenset[str]


@dataclass
class _Table:
    """The entries of one kind over every root: the file of each name (the first root wins), what
    the walks found wrong, and the entries that replace a built-in one or share a name."""

    names: dict[str, Path] = field(default_factory=dict)
    problems: list[Diagnostic] = field(default_factory=list)
    conflicts: list[_Conflict] = field(default_factory=list)
    replaced: dict[str, _Conflict] = field(default_factory=dict)  # name → its RLC206 finding


@dataclass
class Catalog:
    """Search roots in order (user roots first, the built-in catalog last); the first match wins.

    An entry of a user root that replaces a built-in one is a warning (RLC206); two entries of one
    kind and name in one root are an error (RLC207), as is anything wrong on disk in the catalog's
    folders (links out of the root, loops, unreadable files, FIFOs): a lookup refuses to guess and
    raises them.
    """

    roots: list[Path] = field(default_factory=list)
    _tables: dict[Kind, _Table] = field(default_factory=dict, repr=False)
    _distinct: list[tuple[Path, bool]] | None = field(default=None, repr=False)
    _root_spellings: list[tuple[Path, list[str]]] | None = field(default=None, repr=False)
    _located: dict[str, tuple[Path, tuple[str, ...]] | None] = field(default_factory=dict, repr=False)

    @classmethod
    def default(cls, extra: list[Path] | None = None) -> Catalog:
        return cls([*user_roots(extra), builtin_root()])

    def names(self, kind: Kind) -> dict[str, Path]:
        """Every entry of a kind, name → file (recursive: nested folders are searched too). Raises
        the catalog's problems on disk, if it has any."""
        problems = self.problems()
        if has_errors(problems):
            raise RlcatError(problems)
        return self._table(kind).names

    def problems(self) -> list[Diagnostic]:
        """What is wrong on disk in any kind's folders (links out, loops, unreadable or non-regular
        files, two entries with one name), each once. A catalog with one is refused as a whole: a
        pull request that plants a link among the platforms must not pass `list` or a compile that
        happens not to read the platforms."""
        unique: dict[tuple[str, str | None, str], Diagnostic] = {}
        for kind in KIND_DIRS:
            for d in self._table(kind).problems:
                unique.setdefault((d.code, d.file, d.message), d)
        return list(unique.values())

    def find(
        self,
        kind: Kind,
        name: str,
        *,
        file: str | None = None,
        line: int | None = None,
        key: str | None = None,
    ) -> Path:
        """The file of a named entry, or a diagnostic with close names."""
        table = self.names(kind)
        if name in table:
            return table[name]
        code = {"recipe": "RLC201", "platform": "RLC204"}.get(kind, "RLC202")
        where = ", ".join(dict.fromkeys(display_path(r / KIND_DIRS[kind]) for r in self.roots))
        raise RlcatError(
            [
                diag(
                    code,
                    f"unknown {kind} '{name}'",
                    file=file,
                    line=line,
                    key=key,
                    hint=suggestion_hint(name, table) or f"{kind}s are looked up in: {where}",
                )
            ]
        )

    def replaced_builtins(self, files: Iterable[str | Path | None]) -> list[Diagnostic]:
        """RLC206 warnings for those of `files` (entry files a compile used, as paths or as
        diagnostics name them) that replace a built-in entry of the same kind and name."""
        wanted = {display_path(Path(f)) for f in files if f is not None}
        return [
            replacement.diagnostic
            for kind in KIND_DIRS
            for replacement in self._table(kind).replaced.values()
            if replacement.diagnostic.file in wanted
        ]

    def conflicts_of(self, path: Path) -> list[Diagnostic]:
        """The RLC206 and RLC207 findings about one entry file (what `rlcat validate` reports for it,
        and what stops `rlcat compile PATH`). A file outside every search root has no table: its
        twin of the other suffix beside it (`x.yml` beside `x.yaml`) is the same RLC207 there."""
        if self._locate(path) is None:
            twin = _twin(path)
            if twin is None:
                return []
            first, second = sorted([path, twin], key=lambda p: p.suffix != ".yaml")
            return [
                _duplicate(kind_at(Path(os.path.abspath(path)).parts), path.stem, first, second).diagnostic
            ]
        absolute = os.path.abspath(path)
        table = self._table(self.kind_of(path))
        return [c.diagnostic for c in table.conflicts if absolute in c.files]

    def root_of(self, path: Path) -> Path | None:
        """The nearest search root that holds `path`, or None."""
        located = self._locate(path)
        return located[0] if located else None

    def kind_of(self, path: Path) -> Kind:
        """The kind of entry a file is, from the folders it sits in as given (below its search root),
        never from where a link leads: the kind a lookup gives it."""
        located = self._locate(path)
        return kind_at(located[1] if located else Path(os.path.abspath(path)).parts)

    def _locate(self, path: Path) -> tuple[Path, tuple[str, ...]] | None:
        """The nearest search root holding `path` and the parts of `path` below it. The path is
        compared as given, then with its folder resolved, never the file itself: a link is named
        and placed by its own name."""
        # asked for the same file by validate, lookups and kind checks alike: resolve it once
        key = os.path.abspath(path)
        if key not in self._located:
            self._located[key] = self._find_root(path)
        return self._located[key]

    def _find_root(self, path: Path) -> tuple[Path, tuple[str, ...]] | None:
        if self._root_spellings is None:
            self._root_spellings = [(root, _spellings(root, whole=True)) for root in self.roots]
        for absolute in _spellings(path):
            below = [
                (len(base), root, Path(os.path.relpath(absolute, base)).parts)
                for root, bases in self._root_spellings
                for base in bases
                if inside(absolute, base)
            ]
            if below:
                _, root, parts = max(below, key=lambda found: found[0])
                return root, parts
        return None

    def _table(self, kind: Kind) -> _Table:
        if kind not in self._tables:
            self._tables[kind] = self._build(kind)
        return self._tables[kind]

    def _distinct_roots(self) -> list[tuple[Path, bool]]:
        """The search roots, each once (validate adds the roots it sees, the built-in one among them),
        and whether each is the built-in catalog."""
        if self._distinct is None:
            builtin = os.path.realpath(builtin_root())
            seen: set[str] = set()
            self._distinct = []
            for root in self.roots:
                real = os.path.realpath(root)
                if real not in seen:
                    seen.add(real)
                    self._distinct.append((root, real == builtin))
        return self._distinct

    def _build(self, kind: Kind) -> _Table:
        table = _Table()
        later: dict[str, list[tuple[Path, bool]]] = {}  # every entry of each name, in search order
        for root, is_builtin in self._distinct_roots():
            folder = root / KIND_DIRS[kind]
            if kind == "recipe" and not is_builtin and not os.path.lexists(folder):
                folder = root  # a user folder may hold recipe files directly
            if not os.path.lexists(folder):
                continue
            walk = walk_entries(folder, root, folder_only=True)
            table.problems += walk.problems
            in_root: dict[str, Path] = {}
            for path in walk.files:
                if kind_at(path.relative_to(root).parts) != kind:
                    continue  # catalog/models/... in a folder of recipes is a model, not a recipe
                name = path.stem  # `x.yml` is entry `x`, as `x.yaml` is
                if name in in_root:
                    duplicate = _duplicate(kind, name, in_root[name], path)
                    table.problems.append(duplicate.diagnostic)
                    table.conflicts.append(duplicate)
                    continue
                in_root[name] = path
                table.names.setdefault(name, path)
                later.setdefault(name, []).append((path, is_builtin))
        for name, path in table.names.items():
            # the first entry of a name wins; one it hides in a later folder (rlcat's own, or another
            # user folder's) is reported, unless it is the same file by two names or a copy of it (a
            # recipes repository that vendors rlcat's own entries replaces nothing)
            for hidden, is_builtin in later[name][1:]:
                if os.path.realpath(path) == os.path.realpath(hidden):
                    continue
                if filecmp.cmp(path, hidden, shallow=False):
                    continue
                table.replaced[name] = _replacement(kind, name, path, hidden, is_builtin)
                table.conflicts.append(table.replaced[name])
                break
        return table


def _spellings(path: Path, *, whole: bool = False) -> list[str]:
    """`path` absolute as given, then with its folder (or, `whole`, itself) resolved: two ways to
    compare paths without ever resolving a file's own link."""
    absolute = os.path.abspath(path)
    if whole:
        return list(dict.fromkeys([absolute, os.path.realpath(absolute)]))
    folder, name = os.path.split(absolute)
    return list(dict.fromkeys([absolute, os.path.join(os.path.realpath(folder), name)]))


def _twin(path: Path) -> Path | None:
    """The entry file of the same name with the other suffix beside `path` (`x.yml` for `x.yaml`)."""
    if path.suffix not in ENTRY_SUFFIXES:
        return None
    for suffix in ENTRY_SUFFIXES:
        twin = path.with_suffix(suffix)
        if suffix != path.suffix and os.path.lexists(twin):
            return twin
    return None


def _duplicate(kind: Kind, name: str, first: Path, second: Path) -> _Conflict:
    shown = display_path(second)
    return _Conflict(
        diag(
            "RLC207",
            f"two {kind}s named '{name}' in one catalog folder: {display_path(first)} and {shown}",
            file=shown,
            hint="rename or remove one; a lookup must not depend on which file it happens to find first",
        ),
        frozenset({os.path.abspath(first), os.path.abspath(second)}),
    )


def _replacement(kind: Kind, name: str, path: Path, hidden: Path, builtin: bool) -> _Conflict:
    # the hidden file by its full path: relative to the working folder, a user's catalog can name
    # its own file exactly as rlcat names the built-in one
    whose = f"rlcat's built-in {kind}" if builtin else f"the {kind} of a later catalog folder"
    return _Conflict(
        diag(
            "RLC206",
            f"{kind} '{name}' replaces {whose} {os.path.abspath(hidden)}",
            file=display_path(path),
            hint=f"give the entry a new name unless replacing {whose} is intended",
        ),
        frozenset({os.path.abspath(path)}),
    )


# How a finding moved off a file it pointed at names that file (resolve.findings.relocate, guards).
_NOTE_PREFIX: dict[Kind, str] = {
    "recipe": "inherited from",
    "model": "from model",
    "dataset": "from dataset",
    "platform": "from platform profile",
}


def origin_note(file: str, line: int | None, col: int | None = None) -> Note:
    """ "inherited from gsm8k_qwen3_8b_fsdp, built-in, line 26": the entry a file holds, whether it is
    built-in or which file it is, and the line. A built-in file is named in words only: the user's
    repository has no such file, so no reporter may point at it."""
    kind = kind_at(Path(file).parts)
    builtin = is_builtin_file(file)
    text = f"{_NOTE_PREFIX[kind]} {Path(file).stem}, {'built-in' if builtin else file}"
    text += f", line {line}" if line else ""
    return Note(text) if builtin else Note(text, file, line, col)


def shown_file(file: str) -> str:
    """A file as an origin names it to a person: a built-in file that is no file of the working
    folder is `built-in recipes/x.yaml` (in a team's repository, `recipes/x.yaml` would read as the
    team's own file); any other file as diagnostics name it."""
    if os.path.isabs(file) or os.path.lexists(file) or not is_builtin_file(file):
        return file
    return f"built-in {file}"


def is_builtin_file(file: str) -> bool:
    """Whether a file as diagnostics name it (catalog.display_path) is one of rlcat's built-in
    recipes or catalog entries. Built-in files are named relative to the built-in root, so a relative
    name that is not a file of the working folder names one there."""
    root = builtin_root()
    name = os.path.normpath(file)
    here = Path(os.path.abspath(name))
    where = here if os.path.lexists(name) else root / name
    return any(where.is_relative_to(root / folder) for folder in ("recipes", "catalog"))
