"""Every reference in the project resolves inside the repository: no comment, script, deck or page
cites the engineering notes that live outside the checkout, and every docs/<page>.md named in the
tree exists (with its #anchor, when one is given, among the page's headings)."""
import os
import re

import hptest

SCANNED = ["src", "physics-style-modules", "io", "tests", "run", "cmake", "inputs", "docs",
           "CMakeLists.txt", "README.md"]
# Citations of the notes outside the repository, assembled so this file does not match itself.
NOTES = "|".join(["SPE" + "C", "DESI" + r"GN\.md", "PER" + r"F\.md", "TOOL" + "CHAIN", "PROTO" + "TYPE"])
OUTSIDE = re.compile(r"\b(" + NOTES + r")\b|\.\./shared/")
DOC_REF = re.compile(r"\bdocs/([A-Za-z0-9_./-]+\.md)(#[A-Za-z0-9_-]+)?")
# Relative links between markdown pages: [text](page.md#anchor).
MD_LINK = re.compile(r"\]\(([A-Za-z0-9_./-]+\.md)(#[A-Za-z0-9_-]+)?\)")
PENDING = set()  # files allowed to keep such a citation for now (none)


def files(root):
    for top in SCANNED:
        path = os.path.join(root, top)
        if os.path.isfile(path):
            yield top
        for d, dirs, names in os.walk(path):
            dirs[:] = sorted(x for x in dirs if not x.startswith("."))
            for n in sorted(names):
                yield os.path.relpath(os.path.join(d, n), root)


def text(root, rel):
    try:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            return f.read()
    except (UnicodeDecodeError, OSError):
        return None  # binary data (tests/data/*.h5)


def anchors(markdown):
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    out = set()
    for line in markdown.split("\n"):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            out.add(slug)
    return out


a = hptest.args()
me = os.path.relpath(os.path.abspath(__file__), os.path.abspath(a.root))
outside, broken, pending_seen = [], [], set()
for rel in files(a.root):
    body = text(a.root, rel)
    if body is None or rel == me:
        continue
    for no, line in enumerate(body.split("\n"), 1):
        if OUTSIDE.search(line):
            if rel in PENDING:
                pending_seen.add(rel)
            else:
                outside.append(f"{rel}:{no}: {line.strip()}")
        refs = [(os.path.join(a.root, "docs", m.group(1)), m.group(2)) for m in DOC_REF.finditer(line)]
        if rel.endswith(".md"):
            here = os.path.dirname(os.path.join(a.root, rel))
            refs += [(os.path.join(here, m.group(1)), m.group(2)) for m in MD_LINK.finditer(line)]
        for page, anchor in refs:
            name = os.path.relpath(page, a.root)
            if not os.path.isfile(page):
                broken.append(f"{rel}:{no}: {name} does not exist")
            elif anchor and anchor[1:] not in anchors(open(page, encoding="utf-8").read()):
                broken.append(f"{rel}:{no}: {name} has no heading for {anchor}")

hptest.check(not outside, "no reference to notes outside the repository",
             "point these to docs/ or say the point in place:\n       " + "\n       ".join(outside))
hptest.check(not broken, "every docs/*.md reference resolves", "\n       ".join(broken))
stale = sorted(PENDING - pending_seen)
hptest.check(not stale, "the pending list names only files that still cite outside notes",
             "remove from PENDING in tests/integration/test_doc_references.py: " + ", ".join(stale))
hptest.finish()
