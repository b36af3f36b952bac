#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/fuzz/make_corpus.py - write the seed corpus of fuzz_api (tests/fuzz/corpus/).

Each seed is a small hand-made op sequence; together they cover every op
of the harness.  The encoding mirrors the harness's decoding (get_dir,
get_ino, get_name, get_path in fuzz_input.c, get_faults in
fuzz_backend.c, the ops in fuzz_api.c): change both together.

Usage: tests/fuzz/make_corpus.py [outdir]   (default: tests/fuzz/corpus)
"""
import os
import sys

# ops (enum op in fuzz_api.c)
(ADD_FILE, ADD_DIR, ADD_NEG, REMOVE, RENAME, RMDIR, INVALIDATE, INVALIDATE_DIR, FILL_BEGIN,
 FILL_COMPLETE, FILL_ALL, LOOKUP, RESOLVE, WALK, SHRINK, SET_LIMIT, STATS, ADD_DOTDOT, BULK,
 CHECK) = range(20)

# names: index into valid_names, or the special bytes
N = {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4, "f": 5, "...": 6, "x y": 7, "ff": 8, "n64": 9,
     "n65": 10, "n255": 11, "l": 12, "": 0xe0, ".": 0xe1, "..": 0xe2, "/": 0xe3, "a/b": 0xe4,
     "nul": 0xe5, "a-nul": 0xe6, "n256": 0xe7, "n4097": 0xe8}
TOK = {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4, "f": 5, "l": 6, "..": 7, ".": 8, "": 9, "...": 10,
       "x y": 11}
REG, OTHER, UNKNOWN, SYMLINK, BADATTR = 0, 3, 4, 5, 7
LF = {"one": 1, "huge": 2, "intmin": 3, "4096": 4, "ino0": 5, "type7": 6, "flags1": 7,
      "eacces": 8, "4095": 9, "dotdot_reg": 10, "reenter": 11}
RF = {"hugeneg": 1, "longmin": 2, "4096": 3, "toolong": 4, "nul": 5, "zero": 6, "eacces": 7}


def cfg(keep=False, backend="full", limit=0):
    b = {"full": 0, "nolink": 2, "none": 3}[backend]
    return bytes([(1 if keep else 0) | b << 1 | limit << 3])


def d(ino):            # get_dir: 1..8
    return bytes([ino - 1])


def ino(i):            # get_ino
    if 1 <= i <= 8:
        return bytes([i - 1])
    if 100 <= i <= 103:
        return bytes([8 + i - 100])
    if 200 <= i <= 202:
        return bytes([12 + i - 200])
    return bytes([{0: 15, 12345: 16}[i]])


def name(n):
    if isinstance(n, bytes):   # raw
        return bytes([0xf0, len(n)]) + n
    return bytes([N[n]])


def path(toks, lead=False, trail=False):
    """A components path: mode = count << 4 | lead | trail << 1."""
    assert len(toks) < 16
    return bytes([len(toks) << 4 | int(lead) | int(trail) << 1]) + bytes(TOK[t] for t in toks)


def path_special(mode, *args):   # 11 alphabet, 12 long "a/", 13 long "./", 14 255/256, 15 raw
    return bytes([mode]) + bytes(args)


def raw_path(b):
    return bytes([15, len(b)]) + b


def lookup_fault(kind, rk=0, ra=0):
    # F.lookup = 1 + (b % 11) for b in 128..191
    for b in range(128, 192):
        if 1 + b % 11 == LF[kind]:
            return bytes([b]) + (bytes([rk, ra]) if kind == "reenter" else b"")
    raise ValueError(kind)


def link_fault(kind):
    for b in range(192, 256):
        if 1 + b % 7 == RF[kind]:
            return bytes([b])
    raise ValueError(kind)


NOFAULT = b"\x00"


def bumps(n, dir_):
    """Walk fault: the first n backend calls bump the rename seqcount."""
    return bytes([96, n - 1, dir_ - 1])

# op builders
def add_file(dir_, n, kind=REG, ib=0, cb=1, target=None):
    out = bytes([ADD_FILE]) + d(dir_) + name(n) + bytes([kind, ib, cb])
    if kind in (5, 6):
        out += target
    return out


def add_dir(p, n, dino):
    return bytes([ADD_DIR]) + d(p) + name(n) + bytes([dino - 2])


def add_neg(dir_, n, client=1):
    return bytes([ADD_NEG]) + d(dir_) + name(n) + bytes([client])


def remove(dir_, n):
    return bytes([REMOVE]) + d(dir_) + name(n)


def rename(od, on, nd, nn, give):
    return bytes([RENAME]) + d(od) + d(nd) + name(on) + name(nn) + bytes([int(give)])


def rmdir(p, n, give):
    return bytes([RMDIR]) + d(p) + name(n) + bytes([int(give)])


def invalidate(i, n):
    return bytes([INVALIDATE]) + ino(i) + name(n)


def invalidate_dir(i):
    return bytes([INVALIDATE_DIR]) + ino(i)


def fill_begin(dir_, bad=False):
    return bytes([FILL_BEGIN, (0xf0 if bad else 0) + dir_ - 1])


def fill_complete(dir_, mode):
    return bytes([FILL_COMPLETE]) + d(dir_) + bytes([mode])


def fill_all(dir_, by_resolve=False):
    return bytes([FILL_ALL]) + d(dir_) + bytes([int(by_resolve)])


def lookup(i, n):
    return bytes([LOOKUP]) + ino(i) + name(n)


def resolve(i, n, fault=NOFAULT):
    return bytes([RESOLVE]) + ino(i) + name(n) + fault


def walk(i, p, follow=False, fault=NOFAULT, flags=0):
    return bytes([WALK]) + ino(i) + p + bytes([int(follow) | flags]) + fault


def shrink(k):
    return bytes([SHRINK, k])


def set_limit(k):
    return bytes([SET_LIMIT, k])


def stats(k):
    return bytes([STATS, k])


def add_dotdot(dir_, bad=False):
    return bytes([ADD_DOTDOT]) + d(dir_) + bytes([int(bad)])


def bulk(dir_, mode, count):
    return bytes([BULK]) + d(dir_) + bytes([mode, count - 1])


CHK = bytes([CHECK])

# a small tree: /a (dir 2) holding b (file 100) and c (dir 3), /l -> a/b
TREE = (add_dir(1, "a", 2) + add_file(2, "b", REG, 0, 7) + add_dir(2, "c", 3) +
        add_file(1, "l", SYMLINK, 0, 9, path(["a", "b"])))

SEEDS = {
    "basic": cfg() + TREE + lookup(2, "b") + resolve(2, "b") + resolve(2, "x y") +
    lookup(2, "x y") + walk(1, path(["a", "b"], lead=True)) + walk(3, path([".."])) + CHK,
    "symlinks": cfg() + TREE + walk(1, path(["l"], lead=True), follow=True) +
    walk(1, path(["l"], trail=True)) + walk(1, path(["l"])) +
    add_file(1, "e", SYMLINK, 1, 0, path(["e"])) + walk(1, path(["e"]), follow=True) +
    add_file(2, "f", SYMLINK, 2, 0, path(["..", "a", "c"], lead=True)) +
    walk(2, path(["f", ".."])) + add_file(1, "d", SYMLINK, 3, 0, path([])) +
    walk(1, path(["d", "a"])) + walk(1, path(["a", "b", "c"])) + CHK,
    "rename": cfg() + TREE + resolve(2, "b") + rename(2, "b", 1, "f", True) +
    rename(1, "f", 3, "f", False) + rename(2, "c", 1, "c", True) + rename(1, "c", 1, "d", False) +
    resolve(3, "..") + walk(1, path(["d", "f"])) + rename(1, "d", 1, "d", True) + CHK,
    "rmdir": cfg() + TREE + add_file(3, "a", REG) + resolve(3, "a") + rmdir(2, "c", True) +
    lookup(3, "a") + add_dir(1, "c", 3) + rmdir(1, "c", False) + add_dir(2, "d", 4) +
    resolve(2, "d") + rmdir(2, "d", False) + walk(1, path(["a", "d"])) + CHK,
    "invalidate": cfg() + TREE + resolve(2, "b") + invalidate(2, "b") + lookup(2, "b") +
    resolve(3, "..") + invalidate(3, "..") + lookup(3, "..") + add_dotdot(3) + lookup(3, "..") +
    add_dotdot(3, bad=True) + invalidate_dir(2) + invalidate_dir(0) + invalidate(0, "a") + CHK,
    "fill": cfg() + TREE + fill_begin(2) + add_file(2, "d", REG, 1) + fill_complete(2, 0) +
    lookup(2, "e") + fill_begin(3) + fill_complete(3, 1) +
    fill_complete(3, 2) + fill_complete(3, 3) + fill_begin(2, bad=True) + fill_all(1) +
    fill_all(2, True) + invalidate(2, "b") + fill_all(2) + resolve(2, "f") + CHK,
    "lookup_faults": cfg() + TREE + b"".join(
        resolve(2, "d", lookup_fault(k)) + invalidate(2, "b") + resolve(2, "b", lookup_fault(k))
        for k in ("one", "huge", "intmin", "4096", "ino0", "type7", "flags1", "eacces", "4095")) +
    invalidate(3, "..") + resolve(3, "..", lookup_fault("dotdot_reg")) +
    resolve(3, "..", lookup_fault("type7")) + invalidate_dir(2) +
    walk(3, path(["..", "b"]), fault=lookup_fault("huge")) + CHK,
    "readlink_faults": cfg() + TREE + b"".join(
        walk(1, path(["l"]), follow=True, fault=link_fault(k)) for k in RF) + CHK,
    "reenter": cfg() + TREE + b"".join(
        invalidate_dir(2) + resolve(2, "d", lookup_fault("reenter", rk, 3)) + invalidate_dir(2) +
        resolve(2, "b", lookup_fault("reenter", rk, 4)) + lookup(2, "d") + lookup(2, "b")
        for rk in range(5)) + CHK,
    "memory": cfg(limit=1) + TREE + bulk(2, 0, 200) + bulk(2, 1, 200) + bulk(3, 2, 200) +
    bulk(2, 3, 200) + stats(0) + stats(1) + stats(2) + stats(3) + fill_all(2) + shrink(4) +
    set_limit(3) + bulk(1, 2, 256) + shrink(2) + set_limit(0) + stats(1) + CHK,
    "bad_names": cfg() + b"".join(
        lookup(1, n) + resolve(1, n) + add_file(1, n) + add_neg(1, n) + remove(1, n) +
        invalidate(1, n) + rmdir(1, n, True) + rename(1, n, 1, "a", False) +
        rename(1, "a", 1, n, False)
        for n in ("", ".", "..", "/", "a/b", "nul", "a-nul", "n256", "n4097")) +
    lookup(0, "a") + add_file(1, "a", BADATTR | 0 << 3) + add_file(1, "a", BADATTR | 1 << 3) +
    add_file(1, "a", BADATTR | 2 << 3) + add_file(1, "a", BADATTR | 3 << 3) +
    add_file(1, "a", BADATTR | 4 << 3) + lookup(1, b"\x01\x7f") + CHK,
    "keep_unlinked": cfg(keep=True) + TREE + resolve(2, "b") + remove(2, "b") + lookup(2, "b") +
    add_file(2, "e", OTHER, 2) + rename(2, "e", 2, "f", True) + lookup(2, "e") +
    add_neg(2, "e") + rmdir(2, "c", False) + CHK,
    "walk_retries": cfg() + TREE + add_file(3, "d", SYMLINK, 1, 0, path(["..", "..", "l"])) +
    invalidate_dir(1) + invalidate_dir(2) + invalidate_dir(3) +
    walk(1, path(["a", "c", "d"], lead=True), follow=True, fault=bumps(3, 2)) +
    invalidate_dir(2) + invalidate_dir(3) +
    walk(1, path(["a", "c", "d"], lead=True), follow=True, fault=bumps(24, 1)) +
    invalidate_dir(1) + invalidate_dir(2) + invalidate_dir(3) +
    walk(3, path(["..", "x y"]), fault=bumps(12, 3)) + CHK,
    "no_backend": cfg(backend="none") + TREE + resolve(2, "b") + resolve(2, "d") +
    walk(1, path(["a", "b"])) + walk(1, path(["l"]), follow=True) + fill_all(2, True) + CHK,
    "no_readlink": cfg(backend="nolink") + TREE + walk(1, path(["l"]), follow=True) +
    walk(1, path(["l"])) + walk(1, path(["l", "x y"])) + CHK,
    "long_paths": cfg() + TREE + walk(1, path_special(12, 3)) + walk(1, path_special(12, 12)) +
    walk(1, path_special(14, 0, 0)) + walk(1, path_special(14, 1, 1)) +
    add_file(1, "f", SYMLINK, 4, 0, path_special(13, 100)) + walk(1, path(["f", "a"])) +
    walk(1, raw_path(b"a\x00b")) + walk(1, raw_path(b"")) + walk(0, path(["a"])) +
    walk(0, path(["a"], lead=True)) + walk(1, path(["a"]), flags=0x0e) +
    walk(1, path(["a", "c", "", ".", "..", "..", "a"], lead=True, trail=True), flags=0x30) +
    walk(1, path_special(11, 5, 0, 1, 2, 3, 4, 5)) + CHK,
    "negatives": cfg(limit=2) + TREE + add_neg(2, "d", 0) + add_neg(2, "e", 2) + lookup(2, "d") +
    add_file(2, "d", UNKNOWN, 5) + walk(2, path(["d", "a"])) + fill_all(3) + add_neg(3, "x y") +
    resolve(3, "x y") + add_file(3, "n64", REG) + add_file(3, "n65", REG) +
    add_file(3, "n255", REG) + resolve(3, "n255") + lookup(3, "n65") + CHK,
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus")
    os.makedirs(out, exist_ok=True)
    for k, v in SEEDS.items():
        with open(os.path.join(out, k), "wb") as f:
            f.write(v)
    print(f"make_corpus.py: {len(SEEDS)} seeds in {out}")


if __name__ == "__main__":
    main()
