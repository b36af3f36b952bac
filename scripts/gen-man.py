#!/usr/bin/env python3
"""Make the man pages from include/udcache.h (issue 17).

    scripts/gen-man.py [--check] HEADER MANDIR     (pages in MANDIR/man3)

Each kernel-doc comment of the header ("/** name() - summary ... */" before
one or more UDC_API declarations) becomes man/man3/udc_<name>.3 with NAME,
SYNOPSIS, DESCRIPTION, RETURN VALUE, ERRORS and CONCURRENCY (its "Context:"
and "Ordering:" paragraphs, and the header's general rules); the header's
opening comment and its public types become udcache.3.  The pages are
committed (no build dependency on Python); ctest's "man" runs this with
--check, which fails if the committed pages differ from the header's.
"""
import os
import re
import sys
import tempfile

VERSION_RE = re.compile(r"#define UDC_VERSION_(MAJOR|MINOR|PATCH) (\d+)")
# What a code means where the header names it with no words after it.
DEFAULT_MEANING = {
    "ENOMEM": "memory ran out; nothing changed",
    "ENAMETOOLONG": "the name is longer than UDC_NAME_MAX bytes",
    "ENOENT": "the name does not exist (the store's answer, or the cache's)",
}
# A plain comment that opens a group of functions: "/*\n * Mutations: ..."
GROUP_RE = re.compile(r"^/\*\n( \* [A-Z][a-z]+: .*?)\*/\n", re.S | re.M)
DOC_RE = re.compile(r"/\*\*\n(.*?)\*/\n((?:UDC_API[^;]*;\n)+)", re.S)
TITLE_RE = re.compile(r"^(udc_\w+)\(\) - (.*)$")
PARAM_RE = re.compile(r"^@(\w+):\s*(.*)$")
KEYWORD_RE = re.compile(r"^(Context|Ordering|Return|Memory):\s*(.*)$")
ERRNO_RE = re.compile(r"-?\b(E[A-Z]{2,})\b")
REF_RE = re.compile(r"\b(udc_\w+)\(\)")


def esc(text):
    """Escape text for roff: backslashes, minus signs, a leading dot or quote;
    @param in italics."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    text = re.sub(r"@(\w+)", r"\\fI\1\\fR", text)
    return "\n".join(("\\&" + l if l[:1] in ".'" else l) for l in text.split("\n"))


def uncomment(block):
    """The comment's lines without their leading ' * '."""
    out = []
    for line in block.split("\n"):
        line = line.rstrip()
        if line.startswith(" * "):
            out.append(line[3:])
        elif line.strip() == "*":
            out.append("")
        elif line.strip():
            out.append(line.strip().lstrip("*").strip())
    return out


def paragraphs(lines):
    """Blank-line separated paragraphs, each one string; a keyword line
    (Context:, Return:, ...) or a list item ("- ") starts one of its own."""
    paras, cur = [], []
    for line in lines:
        if not line.strip() or KEYWORD_RE.match(line) or line.strip().startswith("- "):
            if cur:
                paras.append(" ".join(cur))
            cur = [line.strip()] if line.strip() else []
            continue
        cur.append(line.strip())
    if cur:
        paras.append(" ".join(cur))
    return paras


def group_sections(comment):
    """A plain comment before a group of functions ("Mutations: ...
    Each returns 0 or -errno (...) ... Context: ..."): its Return (the
    "Each returns" sentence), Context and the rest, for the functions of the
    group whose own comment has none."""
    text = " ".join(l.strip() for l in uncomment(comment))
    out = {"Return": [], "Context": [], "body": []}
    text, _, context = text.partition("Context: ")
    if context:
        out["Context"].append(context.strip())
    m = re.search(r"Each returns (.*?\)) and ", text)
    if m:
        out["Return"].append(m.group(1))
    out["body"].append(text.strip())
    return out


def parse_doc(block, decls):
    lines = uncomment(block)
    titles = []
    while lines and TITLE_RE.match(lines[0]):
        m = TITLE_RE.match(lines.pop(0))
        # The summary is the title's first sentence; the rest is description.
        first, _, rest = m.group(2).partition(".  ")
        titles.append((m.group(1), first.rstrip(".")))
        if rest:
            lines.insert(0, rest)
    params = []
    while lines and (PARAM_RE.match(lines[0]) or (params and lines[0].startswith(" "))):
        line = lines.pop(0)
        m = PARAM_RE.match(line)
        if m:
            params.append([m.group(1), m.group(2)])
        else:
            params[-1][1] += " " + line.strip()
    sections = {"body": [], "Context": [], "Ordering": [], "Return": [], "Memory": []}
    for p in paragraphs(lines):
        m = KEYWORD_RE.match(p)
        if m:
            sections[m.group(1)].append(m.group(2))
        else:
            sections["body"].append(p)
    protos = [re.sub(r"\s+", " ", d.replace("UDC_API ", "")).strip()
              for d in re.findall(r"UDC_API[^;]*;", decls)]
    return titles, params, sections, protos


def unparen(what):
    """'(inside): after' -> 'inside: after'; a parenthesis left open by the
    cut at the next code is closed."""
    if what.startswith("("):
        depth = 0
        for i, ch in enumerate(what):
            depth += (ch == "(") - (ch == ")")
            if depth == 0:
                return (what[1:i] + what[i + 1:]).strip()
        return what[1:]
    return what + ")" if what.count("(") > what.count(")") else what


def function_page(titles, params, sections, protos, version, rules):
    names = [t[0] for t in titles]
    out = [f'.TH {names[0].upper()} 3 "" "udcache {version}" "udcache manual"', ".SH NAME"]
    out.append(", ".join(esc(n) for n in names) + " \\- " +
               esc("; ".join(t[1] for t in titles)))
    out += [".SH SYNOPSIS", ".nf", ".B #include <udcache.h>", ".PP"]
    out += [esc(p) for p in protos]
    out += [".fi", ".SH DESCRIPTION"]
    if params:
        for pname, ptext in params:
            out += [".TP", f".I {esc(pname)}", esc(ptext)]
        out.append(".PP")
    for p in sections["body"] + [("Memory: " + m) for m in sections["Memory"]]:
        out += [esc(p), ".PP"]
    if out[-1] == ".PP":
        out.pop()
    ret = " ".join(sections["Return"])
    out += [".SH RETURN VALUE", esc(ret) if ret else "None."]
    # Each code with the words after it, up to the next code.
    codes = []
    found = list(ERRNO_RE.finditer(ret))
    for i, m in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(ret)
        raw = ret[m.end():end]
        # "-ENOENT, the next thing": a code listed bare
        what = "" if raw.lstrip().startswith(",") else raw
        what = what.strip(" ,;:.").removesuffix(" or").removesuffix(" and")
        what = what.strip(" ,;:")
        what = unparen(what)
        codes.append((m.group(1), what or DEFAULT_MEANING.get(m.group(1), "")))
    out.append(".SH ERRORS")
    if codes:
        for code, what in codes:
            out += [".TP", f".B {code}", esc(what[0].upper() + what[1:] + ".") if what else
                    "(see RETURN VALUE)."]
    else:
        out.append("None: the call cannot fail.")
    out.append(".SH CONCURRENCY")
    for key in ("Context", "Ordering"):
        for p in sections[key]:
            out += [f".B {key}:", esc(p), ".PP"]
    out.append(esc(rules))
    refs = sorted(set(REF_RE.findall(" ".join(sections["body"] + sections["Context"] +
                                                  sections["Ordering"] + [ret]))) - set(names))
    out += [".SH SEE ALSO", ",\n".join([".BR udcache (3)"] + [f".BR {r} (3)" for r in refs])]
    return "\n".join(out) + "\n"


def overview_page(header, funcs, version):
    top = re.match(r"/\* SPDX[^\n]*\*/\n/\*\n(.*?)\*/", header, re.S).group(1)
    lines = uncomment(top)
    if lines and lines[0].startswith("udcache.h - "):
        lines.pop(0)
    out = ['.TH UDCACHE 3 "" "udcache %s" "udcache manual"' % version, ".SH NAME",
           "udcache \\- an embeddable name cache (a userspace dentry cache)",
           ".SH SYNOPSIS", ".nf", ".B #include <udcache.h>", ".PP",
           ".B cc prog.c $(pkg\\-config \\-\\-cflags \\-\\-libs udcache)", ".fi",
           ".SH DESCRIPTION"]
    for p in paragraphs(lines):
        if p.startswith("- "):
            out += [".IP \\(bu 2", esc(p[2:])]
        else:
            out += [".PP", esc(p)]
    out += [".SH TYPES", "The public types, as the header declares them:", ".PP", ".nf"]
    body = header[header.index("typedef uint64_t udc_ino;"):]
    for m in re.finditer(r"^(typedef [^\n]*;|enum \w+ \{.*?^\};|struct \w+ \{.*?^\};)"
                         r"|^#define (UDC_\w+)[^\n]*", body, re.S | re.M):
        out.append(esc(m.group(0)))
    out += [".fi", ".SH FUNCTIONS"]
    for names, summary in funcs:
        out += [".TP", ", ".join(f"{esc(n)}(3)" for n in names), esc(summary)]
    out += [".SH SEE ALSO", "README.md, CHANGELOG.md, docs/ABI.md and docs/ in the source tree."]
    return "\n".join(out) + "\n"


def generate(header_path, outdir):
    header = open(header_path).read()
    version = ".".join(m.group(2) for m in VERSION_RE.finditer(header))
    rules = ("These hold for every function (udcache(3)): any number of threads may call it "
             "at once, on any thread, with no registration; an error is a negative errno, "
             "and a call that fails changes nothing.")
    pages, funcs = {}, []
    groups = [(m.start(), m.group(1)) for m in GROUP_RE.finditer(header)]
    for m in DOC_RE.finditer(header):
        block, decls = m.group(1), m.group(2)
        titles, params, sections, protos = parse_doc(block, decls)
        group = [g for start, g in groups if start < m.start()]
        if group and not sections["Return"]:
            g = group_sections(group[-1])
            sections["Return"] = g["Return"]
            sections["Context"] = sections["Context"] or g["Context"]
            sections["body"] = sections["body"] + g["body"]
        if not titles:
            raise SystemExit("gen-man: a doc comment without 'name() - summary':\n" + block[:200])
        names = [t[0] for t in titles]
        declared = [re.search(r"\b(udc_\w+)\(", p).group(1) for p in protos]
        if sorted(names) != sorted(declared):
            raise SystemExit(f"gen-man: doc comment for {names} precedes {declared}")
        page = function_page(titles, params, sections, protos, version, rules)
        for n in names:
            pages[f"{n}.3"] = page if n == names[0] else f".so man3/{names[0]}.3\n"
        funcs.append((names, "; ".join(t[1] for t in titles)))
    pages["udcache.3"] = overview_page(header, funcs, version)
    os.makedirs(outdir, exist_ok=True)
    for name, text in pages.items():
        with open(os.path.join(outdir, name), "w") as f:
            f.write(text)
    return sorted(pages)


def main():
    args = sys.argv[1:]
    check = args[:1] == ["--check"]
    if check:
        args = args[1:]
    if len(args) != 2:
        raise SystemExit(__doc__)
    header, outdir = args[0], os.path.join(args[1], "man3")
    if not check:
        names = generate(header, outdir)
        print(f"gen-man: {len(names)} pages in {outdir}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        names = generate(header, tmp)
        have = sorted(n for n in os.listdir(outdir) if n.endswith(".3"))
        stale = [n for n in names if not os.path.exists(os.path.join(outdir, n)) or
                 open(os.path.join(outdir, n)).read() != open(os.path.join(tmp, n)).read()]
        extra = sorted(set(have) - set(names))
        if stale or extra:
            raise SystemExit(f"gen-man: {outdir} is not the header's: differ {stale}, "
                             f"extra {extra}; run scripts/gen-man.py {header} {outdir}")
        print(f"gen-man: the {len(names)} pages in {outdir} are the header's")


if __name__ == "__main__":
    main()
