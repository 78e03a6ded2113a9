"""Dump ICU's UTS #39 confusable skeleton of every assigned code point.

It also names, from the character names, the base letter of each Latin
letter that is that letter decorated ("LATIN LETTER SMALL CAPITAL R",
"LATIN SMALL LETTER L WITH STROKE"): lines "L <code point hex> <letter>".
The confusables table leaves most of those out, and they read as their
letter.

Run by skelgen (go generate ./sanitize); it needs Debian's python3-icu.
The first line names the versions, each further line is
"<code point hex> <skeleton code points hex, space-separated>" for every
code point whose skeleton is not its own NFD.
"""
import re
import sys
import unicodedata

import icu

checker = icu.SpoofChecker()
nfd = icu.Normalizer2.getNFDInstance()
print("icu=%s unicode=%s pyicu=%s" % (icu.ICU_VERSION, icu.UNICODE_VERSION, icu.VERSION))
for cp in range(0x110000):
    if 0xD800 <= cp <= 0xDFFF or not icu.Char.isdefined(cp):
        continue
    c = chr(cp)
    sk = checker.getSkeleton(0, c)
    if sk != nfd.normalize(c):
        print("%X %s" % (cp, " ".join("%X" % ord(x) for x in sk)))
latin = re.compile(r"^LATIN (?:SMALL |CAPITAL )?LETTER (?:SMALL CAPITAL |DOTLESS )?([A-Z])(?: WITH .*)?$")
for cp in range(0x80, 0x110000):
    m = latin.match(unicodedata.name(chr(cp), ""))
    if m:
        print("L %X %s" % (cp, m.group(1).lower()))
sys.stdout.flush()
