#!/bin/sh
# make.sh builds web/static/fonts/evident-hangul-{400,700}.v1.woff2, the
# screen's embedded Korean web font, from Debian's fonts-nanum (NanumGothic
# 3.021, SIL OFL 1.1). Run it from the repository root as root on Debian 12:
#
#	sh web/fontgen/make.sh
#
# It needs python3-fonttools and python3-brotli (apt-get install -y
# python3-fonttools python3-brotli) and downloads fonts-nanum with apt-get
# download (nothing is installed system-wide). What it keeps: Basic Latin,
# Latin-1, Hangul Jamo, general punctuation, arrows, enclosed numbers,
# geometric shapes, CJK symbols and punctuation (「」), compatibility jamo,
# all 11,172 Hangul syllables and the full-width forms. The subset is a
# Modified Version under the OFL, so it must not carry the Reserved Font Name
# "NanumGothic": the name table calls it "Evident Hangul".
#
# When the output changes, raise the .vN in the file names (the files are
# served with a year-long immutable cache) and in web/static/style.css.
set -eu
out=web/static/fonts
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
(cd "$work" && apt-get download fonts-nanum >/dev/null)
dpkg-deb -x "$work"/fonts-nanum_*.deb "$work/x"
src="$work/x/usr/share/fonts/truetype/nanum"
unicodes="U+0020-007E,U+00A0-00FF,U+1100-11FF,U+2000-206F,U+2190-21FF,U+2460-24FF,U+25A0-25FF,U+3000-303F,U+3130-318F,U+AC00-D7A3,U+FF01-FF60"
for pair in "NanumGothic 400 Regular" "NanumGothicBold 700 Bold"; do
	set -- $pair
	/usr/bin/python3 -m fontTools.subset "$src/$1.ttf" --unicodes="$unicodes" --flavor=woff2 \
		--layout-features='*' --no-hinting --desubroutinize --output-file="$work/$2.woff2" 2>/dev/null
	/usr/bin/python3 - "$work/$2.woff2" "$out/evident-hangul-$2.v1.woff2" "$3" <<'PY'
import sys
from fontTools.ttLib import TTFont
src, dst, style = sys.argv[1:4]
f = TTFont(src)
family, full, ps = "Evident Hangul", "Evident Hangul " + style, "EvidentHangul-" + style
names = f["name"]
for rec in list(names.names):
    if rec.nameID in (1, 3, 4, 6, 16, 17, 18, 21, 22):
        names.removeNames(nameID=rec.nameID)
for nid, val in ((1, family), (2, style), (3, ps + ";subset of NanumGothic 3.021"), (4, full), (6, ps),
                 (16, family), (17, style)):
    names.setName(val, nid, 3, 1, 0x409)
    names.setName(val, nid, 1, 0, 0)
f.flavor = "woff2"
f.save(dst)
PY
done
cp "$work/x/usr/share/doc/fonts-nanum/copyright" "$work/copyright"
{
	echo "Evident Hangul (web/static/fonts/evident-hangul-*.woff2) is a subset of"
	echo "NanumGothic 3.021 (Debian fonts-nanum 20200506-1), renamed as the SIL Open"
	echo "Font License 1.1 asks of a Modified Version (Reserved Font Name). It is made"
	echo "by web/fontgen/make.sh and stays under the same licence, copied below from"
	echo "the Debian package."
	echo
	sed -e 's/^ \.$//' -e 's/^ //' "$work/copyright"
} >"$out/OFL.txt"
ls -l "$out"
