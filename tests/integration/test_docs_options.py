"""docs/options.md is what run/docs-options makes from this binary's --help: every deck option with
its default and description. Fails (with the command to run) when an option changed and the page
was not regenerated."""
import difflib
import os
import subprocess
import sys

import hptest

a = hptest.args()
script = os.path.join(a.root, "run", "docs-options")
page = os.path.join(a.root, "docs", "options.md")
r = subprocess.run([sys.executable, script, "--hpt", a.hpt, "--stdout"], capture_output=True,
                   text=True, timeout=120)
hptest.check(r.returncode == 0, "run/docs-options renders the binary's --help", r.stderr)
current = open(page).read() if os.path.exists(page) else ""
diff = list(difflib.unified_diff(current.splitlines(), r.stdout.splitlines(), "docs/options.md",
                                 "hpt --help", lineterm="", n=0))
hptest.check(r.returncode == 0 and not diff,
             "docs/options.md matches hpt --help",
             "docs/options.md is out of date; run `run/docs-options` and commit the result:\n       "
             + "\n       ".join(diff[:20]))
hptest.finish()
