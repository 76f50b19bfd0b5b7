"""The embedded store's files on disk: refuse a damaged store, and say what `doctor` can recover.

A redis-server that meets a damaged append-only file loads what it can and carries on (a cut
file is truncated, an emptied one is "empty", a missing manifest starts a new store over the
old files): the user sees a smaller graph. So the store keeps its own record, `store.sums`,
written by the last user after a clean stop: the size of every file the manifest lists and a
CRC-32 of each incremental file. Before a server starts, the files are checked against it:

- a file shorter than recorded, missing, or whose recorded bytes changed is damage;
- files in the append-only directory but no manifest is damage (never a new, empty store);
- a half-written last entry, written after the last clean stop (a crash mid-write), is what a
  crash leaves: the server drops it (it was never acknowledged) and needs no recovery step.
  A cut further back than the record reaches cannot be told from that, and is not caught.

Damage stops the command (StoreError, exit 3) and changes no file. `lineagegraph doctor` says
what can be recovered and, with --repair, does it on the files after copying them aside.
The base snapshot's content is checked by the server itself (its RDB checksum).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import stat
import subprocess
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from lineagegraph.errors import StoreError

AOF_DIR = "appendonlydir"
MANIFEST = "appendonly.aof.manifest"
SUMS_FILE = "store.sums"
DOCTOR_HINT = (
    "nothing was changed; run `lineagegraph doctor` to see what can be recovered "
    "(`lineagegraph doctor --repair` recovers it, after keeping a copy of the files)"
)
CHUNK = 1 << 20
AOF_FILE = re.compile(r"^appendonly\.aof\.(\d+)\.(base\.rdb|base\.aof|incr\.aof)$")


class DamagedStore(StoreError):
    """The store's files do not hold what was written (exit code 3, like any store error)."""


@dataclass
class Finding:
    """One problem with one file, and what `doctor --repair` does about it."""

    file: str
    problem: str
    recovery: str


@dataclass
class Diagnosis:
    data_dir: Path
    findings: list[Finding] = field(default_factory=list)


def open_nofollow(path: Path, flags: int, mode: int = 0o600) -> int:
    """os.open that refuses a symbolic link (another user's link must not redirect a write)."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno == 40:  # ELOOP: the last component is a link
            raise StoreError(
                f"{str(path)!r} is a symbolic link; the store's files must be its own: remove "
                "the link (the store never follows one)"
            ) from None
        raise


def _manifest_files(aof_dir: Path) -> list[tuple[str, str]]:
    """(name, type) per line of the manifest: type b (base) or i (incremental)."""
    files = []
    for line in (aof_dir / MANIFEST).read_text(errors="replace").splitlines():
        words = line.split()
        if len(words) >= 6 and words[0] == "file":
            files.append((words[1], words[words.index("type") + 1]))
    return files


def _crc(path: Path, size: int) -> int:
    """CRC-32 of the first `size` bytes."""
    crc = 0
    with open(path, "rb") as f:
        left = size
        while left > 0:
            chunk = f.read(min(CHUNK, left))
            if not chunk:
                break
            crc = zlib.crc32(chunk, crc)
            left -= len(chunk)
    return crc


def record(data_dir: Path) -> None:
    """Write `store.sums` for the files as they are now (only after a clean stop)."""
    aof_dir = data_dir / AOF_DIR
    if not (aof_dir / MANIFEST).is_file():
        return
    files = {}
    for name, kind in _manifest_files(aof_dir):
        path = aof_dir / name
        size = path.stat().st_size
        files[name] = {"size": size, **({"crc32": _crc(path, size)} if kind == "i" else {})}
    tmp = data_dir / f"{SUMS_FILE}.tmp"
    fd = open_nofollow(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with os.fdopen(fd, "w") as fh:
        json.dump({"files": files}, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, data_dir / SUMS_FILE)


def _recorded(data_dir: Path) -> dict[str, dict[str, int]]:
    try:
        fd = open_nofollow(data_dir / SUMS_FILE, os.O_RDONLY)
    except FileNotFoundError:
        return {}
    with os.fdopen(fd) as fh:
        try:
            return dict(json.load(fh)["files"])
        except (ValueError, KeyError, TypeError):
            return {}


def links(data_dir: Path, names: tuple[str, ...]) -> list[str]:
    """The store's entries that are symbolic links (the server would follow them)."""
    found = [n for n in names if (data_dir / n).is_symlink()]
    aof_dir = data_dir / AOF_DIR
    if aof_dir.is_dir() and not aof_dir.is_symlink():
        found += [f"{AOF_DIR}/{p.name}" for p in aof_dir.iterdir() if p.is_symlink()]
    return found


def diagnose(data_dir: Path) -> Diagnosis:
    """Every problem with the append-only files that a server start would not report, or
    would repair by losing data (without starting one, and changing nothing)."""
    found = Diagnosis(data_dir)
    aof_dir = data_dir / AOF_DIR
    present = sorted(p.name for p in aof_dir.iterdir()) if aof_dir.is_dir() else []
    if not (aof_dir / MANIFEST).exists():
        if any(AOF_FILE.match(name) for name in present):
            found.findings.append(
                Finding(
                    f"{AOF_DIR}/{MANIFEST}",
                    f"is missing while {AOF_DIR} holds {', '.join(present)} (a server started "
                    "now would begin an empty store over them)",
                    "write a manifest listing the newest base and the incremental files after it",
                )
            )
        return found
    recorded = _recorded(data_dir)
    for name, _kind in _manifest_files(aof_dir):
        path = aof_dir / name
        was = recorded.get(name)
        if was is None or not path.is_file():  # a missing file: the server refuses to start
            continue
        size = path.stat().st_size
        if size < was["size"]:
            found.findings.append(
                Finding(
                    f"{AOF_DIR}/{name}",
                    f"is {size} bytes but was {was['size']} at the store's last clean stop (cut "
                    "or emptied)",
                    "keep what the file still holds; the rest is lost",
                )
            )
        elif "crc32" in was and _crc(path, was["size"]) != was["crc32"]:
            found.findings.append(
                Finding(
                    f"{AOF_DIR}/{name}",
                    f"has changed in its first {was['size']} bytes since the store's last clean "
                    "stop (overwritten)",
                    "keep the writes that still read whole; the overwritten ones are lost",
                )
            )
    return found


def check_before_start(data_dir: Path) -> None:
    """Raise DamagedStore naming every damaged file, before a server could touch them."""
    found = diagnose(data_dir)
    if found.findings:
        problems = "; ".join(f"{f.file} {f.problem}" for f in found.findings)
        raise DamagedStore(
            f"the embedded store in {data_dir} is damaged: {problems}. {DOCTOR_HINT}"
        )


def check_aof(redis_server: Path, data_dir: Path, *, fix: bool) -> tuple[bool, str]:
    """redis-check-aof (the server binary under that name) on the manifest: (valid, report)."""
    manifest = data_dir / AOF_DIR / MANIFEST
    if not manifest.is_file():
        return True, ""
    done = subprocess.run(
        ["redis-check-aof", *(["--fix"] if fix else []), str(manifest)],
        executable=str(redis_server),
        input="y\n",
        capture_output=True,
        text=True,
        timeout=3600,
    )
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    wanted = ("not valid", "Expected", "ok_up_to", "truncate", "Successfully", "Bad file")
    report = "\n".join(
        line for line in lines if any(w in line for w in wanted) and "diff=0" not in line
    )
    return done.returncode == 0 and "not valid" not in done.stdout, report


def keep_copy(data_dir: Path) -> Path:
    """Copy the append-only files and their record aside, into the data directory."""
    copy = data_dir / time.strftime("damaged-%Y%m%dT%H%M%S")
    copy.mkdir(mode=0o700)
    aof_dir = data_dir / AOF_DIR
    if aof_dir.is_dir():
        shutil.copytree(aof_dir, copy / AOF_DIR, symlinks=True)
    for name in (SUMS_FILE, "falkordb.rdb"):
        if (data_dir / name).is_file():
            shutil.copy2(data_dir / name, copy / name)
    return copy


def write_manifest(data_dir: Path) -> str:
    """A manifest for the files present: the newest base, then the incremental files from it."""
    aof_dir = data_dir / AOF_DIR
    parsed = [(int(m[1]), m[2], m[0]) for p in aof_dir.iterdir() if (m := AOF_FILE.match(p.name))]
    bases = sorted(item for item in parsed if item[1].startswith("base"))
    start = bases[-1][0] if bases else 0
    lines = [f"file {bases[-1][2]} seq {start} type b"] if bases else []
    incr = [(seq, name) for seq, kind, name in sorted(parsed) if kind == "incr.aof"]
    lines += [f"file {name} seq {seq} type i" for seq, name in incr if seq >= start]
    text = "\n".join(lines) + "\n"
    fd = open_nofollow(aof_dir / MANIFEST, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    return text


def forget_record(data_dir: Path) -> None:
    """After a repair: the files as they are now are the store (the next clean stop records)."""
    with contextlib.suppress(FileNotFoundError):
        (data_dir / SUMS_FILE).unlink()


def own_data_dir(data_dir: Path) -> None:
    """Create the data directory (0700), or refuse one this user does not own alone.

    Root harvesting into another user's directory would write its pid, log and lock through
    links that user planted; a directory others may write lets them plant such links.
    """
    try:
        data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.stat(data_dir)
    except OSError as exc:
        raise not_writable(data_dir, exc) from None
    if not stat.S_ISDIR(st.st_mode):
        raise not_writable(data_dir, NotADirectoryError(20, "not a directory"))
    if not os.access(data_dir, os.W_OK | os.X_OK, effective_ids=True):
        raise not_writable(data_dir, PermissionError(13, "Permission denied"))
    change = "choose another with --data-dir or LINEAGEGRAPH_GRAPH__DATA_DIR"
    if st.st_uid != os.geteuid():
        raise StoreError(
            f"the embedded store's data directory {str(data_dir)!r} belongs to uid "
            f"{st.st_uid}, not to this user (uid {os.geteuid()}); the store uses only a "
            f"directory of its own user: run as that user, or {change}"
        )
    if st.st_mode & 0o022:
        raise StoreError(
            f"the embedded store's data directory {str(data_dir)!r} may be written by others "
            f"(mode {stat.S_IMODE(st.st_mode):o}), who could replace its files: make it "
            f"yours alone (chmod 700 {str(data_dir)!r}), or {change}"
        )


def not_writable(data_dir: Path, exc: OSError) -> StoreError:
    return StoreError(
        f"the embedded store's data directory {str(data_dir)!r} is not writable "
        f"({exc.strerror or exc}); choose another with --data-dir or "
        "LINEAGEGRAPH_GRAPH__DATA_DIR"
    )


def repair_plan(data_dir: Path, redis_server: Path, names: tuple[str, ...]) -> list[Finding]:
    """Everything wrong with the store's files: links, damage, and what redis-check-aof finds."""
    found = [
        Finding(name, "is a symbolic link", "none: remove the link yourself")
        for name in links(data_dir, names)
    ]
    if found:
        return found  # nothing is read through a link
    found = diagnose(data_dir).findings
    valid, report = check_aof(redis_server, data_dir, fix=False)
    if not valid:
        said = "; ".join(report.splitlines())
        found.append(
            Finding(
                f"{AOF_DIR}/{MANIFEST}",
                f"lists a file that does not read whole (redis-check-aof: {said})",
                "cut the file after its last whole write (redis-check-aof --fix); the rest is lost",
            )
        )
    return found


def repair(data_dir: Path, redis_server: Path, findings: list[Finding]) -> Path:
    """Do what `findings` say can be done, on the files after copying them aside; the copy."""
    if any(f.recovery.startswith("none") for f in findings):
        raise StoreError(
            "doctor cannot repair: "
            + "; ".join(f"{f.file} {f.problem}" for f in findings if f.recovery.startswith("none"))
        )
    copy = keep_copy(data_dir)
    if not (data_dir / AOF_DIR / MANIFEST).exists() and (data_dir / AOF_DIR).is_dir():
        write_manifest(data_dir)
    if not check_aof(redis_server, data_dir, fix=False)[0]:
        check_aof(redis_server, data_dir, fix=True)
    valid, report = check_aof(redis_server, data_dir, fix=False)
    if not valid:
        raise StoreError(
            f"the repair did not make the files whole ({report}); the copy of "
            f"the damaged files is in {copy}"
        )
    forget_record(data_dir)
    return copy
