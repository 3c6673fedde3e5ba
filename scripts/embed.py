#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""embed.py IN OUT NAME: write OUT, a C header holding the bytes of IN as the string
`static const char NAME[]` (the inspector's page, built into ecs-host: no files to
install, nothing fetched from the network), and NAME_SCRIPTS, the CSP source list of the
SHA-256 hashes of its inline <script> elements ("'sha256-...' ..."), so that the page's
Content-Security-Policy allows its own scripts and nothing else."""
import base64
import hashlib
import re
import sys

src, dst, name = sys.argv[1:4]
data = open(src, "rb").read()
out = ["/* generated from %s by scripts/embed.py: do not edit */\n" % src.split("/")[-1],
       "#pragma GCC diagnostic push\n",
       "#pragma GCC diagnostic ignored \"-Woverlength-strings\"\n",
       "static const char %s[] =\n" % name]
for line in data.split(b"\n"):
    text = ""
    for b in line + b"\n":
        ch = chr(b)
        text += "\\%03o" % b if b < 32 or b >= 127 or ch in '"\\?' else ch
    out.append('    "%s"\n' % text)
out.append("    ;\n#pragma GCC diagnostic pop\n")
hashes = ["'sha256-%s'" % base64.b64encode(hashlib.sha256(m).digest()).decode()
          for m in re.findall(rb"<script>(.*?)</script>", data, re.S)]
out.append("#define %s_SCRIPTS \"%s\"\n" % (name.upper(), " ".join(hashes)))
open(dst, "w").write("".join(out))
