#!/bin/sh
# Apply rtslib-fb-out-of-tree-backends.patch to rtslib-fb 2.2.4 as released
# on PyPI and run tests/ against the patched tree with Debian's python3.
#
#   docs/upstream/run-tests.sh [pytest arguments]
#
# VAAI_UPSTREAM_CACHE  where downloads are kept (default /var/cache/vaai/upstream)
# PYTHON               the interpreter (default /usr/bin/python3)
#
# Needs patch(1) and network access to PyPI on the first run.  pytest and
# pyudev are taken from the system when it has them (python3-pytest,
# python3-pyudev); otherwise pinned wheels are downloaded into the cache and
# unpacked into the temporary directory, never installed.  Nothing is
# written outside the cache and a temporary directory, which is removed.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-/usr/bin/python3}
cache=${VAAI_UPSTREAM_CACHE:-/var/cache/vaai/upstream}
version=2.2.4
patchfile=$here/rtslib-fb-out-of-tree-backends.patch

# name version file sha256 url, one a line; sha256 as PyPI lists it.
sdist="rtslib-fb $version rtslib_fb-$version.tar.gz 0084daa651a72b1cacd0eaaf162725df69b991f501cffe87e0f67e99224a7267 https://files.pythonhosted.org/packages/79/32/030eaf69d4f19cac2345a6fab1f18118355f7c9c83d6d84f758b00bbd3d9/rtslib_fb-$version.tar.gz"
pytest_wheels="pytest 8.3.5 pytest-8.3.5-py3-none-any.whl c69214aa47deac29fad6c2a4f590b9c4a9fdb16a403176fe154b79c0b4d4d820 https://files.pythonhosted.org/packages/30/3d/64ad57c803f1fa1e963a7946b6e0fea4a70df53c1a7fed304586539c2bac/pytest-8.3.5-py3-none-any.whl
pluggy 1.5.0 pluggy-1.5.0-py3-none-any.whl 44e1ad92c8ca002de6377e165f3e0f1be63266ab4d554740532335b9d75ea669 https://files.pythonhosted.org/packages/88/5f/e351af9a41f866ac3f1fac4ca0613908d9a41741cfcf2228f4ad853b697d/pluggy-1.5.0-py3-none-any.whl
iniconfig 2.0.0 iniconfig-2.0.0-py3-none-any.whl b6a85871a79d2e3b22d2d1b94ac2824226a63c6b741c88f7ae975f18b6778374 https://files.pythonhosted.org/packages/ef/a6/62565a6e1cf69e10f5727360368e451d4b7f58beeac6173dc9db836a5b46/iniconfig-2.0.0-py3-none-any.whl
packaging 24.2 packaging-24.2-py3-none-any.whl 09abb1bccd265c01f4a3aa3f7a7db064b36514d2cba19a2f694fe6150451a759 https://files.pythonhosted.org/packages/88/ef/eb23f262cca3c0c4eb7ab1933c3b1f03d021f2c48f54763065b6f0e321be/packaging-24.2-py3-none-any.whl"
pyudev_wheels="pyudev 0.24.3 pyudev-0.24.3-py3-none-any.whl e8246f0a014fe370119ba2bc781bfbe62c0298d0d6b39c94e83102a8a3f56960 https://files.pythonhosted.org/packages/9d/3b/c37870f68ceb067707ca7b04db364a1478fcd40c6194007fb6e492ff9a92/pyudev-0.24.3-py3-none-any.whl"

die() {
    echo "${0##*/}: $*" >&2
    exit 2
}

[ -x "$python" ] || die "$python not found"
command -v patch >/dev/null 2>&1 || die "needs patch(1): apt-get install patch"
[ -f "$patchfile" ] || die "$patchfile not found"
mkdir -p "$cache" 2>/dev/null && [ -w "$cache" ] ||
    die "cannot write to $cache; set VAAI_UPSTREAM_CACHE to a writable directory"

work=$(mktemp -d "${TMPDIR:-/tmp}/rtslib-upstream.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 1' HUP INT TERM

# fetch.py DIR LINES: for each line "name version file sha256 url", the file
# into DIR unless it is there with that sha256: from the URL, or if that fails
# with pip when there is one (it follows the local pip configuration, but
# prepares an sdist's metadata, which takes minutes); the sha256 is checked
# either way.
cat >"$work/fetch.py" <<'EOF'
import hashlib
import os
import subprocess
import sys
import urllib.request

dest, lines = sys.argv[1:]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


for line in lines.splitlines():
    if not line.strip():
        continue
    name, version, filename, digest, url = line.split()
    path = os.path.join(dest, filename)
    if os.path.isfile(path) and sha256(path) == digest:
        continue
    print("downloading %s" % url, file=sys.stderr)
    part = path + ".part"
    try:
        with urllib.request.urlopen(url, timeout=120) as r, open(part, "wb") as f:
            f.write(r.read())
        os.replace(part, path)
    except OSError as e:
        print("%s; trying pip download %s==%s" % (e, name, version), file=sys.stderr)
        kind = "--no-binary" if filename.endswith(".tar.gz") else "--only-binary"
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        kind, ":all:", "-d", dest, "%s==%s" % (name, version)], check=False)
        if not os.path.isfile(path):
            sys.exit("cannot download %s" % filename)
    if sha256(path) != digest:
        os.unlink(path)
        sys.exit("%s: sha256 is not %s; removed" % (path, digest))
EOF

# unpack.py DIR WHEEL...: pure-Python wheels, for which unzipping is installing.
cat >"$work/unpack.py" <<'EOF'
import sys
import zipfile

for wheel in sys.argv[2:]:
    with zipfile.ZipFile(wheel) as z:
        z.extractall(sys.argv[1])
EOF

"$python" "$work/fetch.py" "$cache" "$sdist"
tar -xzf "$cache/rtslib_fb-$version.tar.gz" -C "$work"
src=$work/rtslib_fb-$version

patch -d "$src" -p1 --dry-run --batch < "$patchfile" >"$work/dry-run.log" 2>&1 || {
    cat "$work/dry-run.log" >&2
    die "${patchfile##*/} does not apply to rtslib-fb $version"
}
patch -d "$src" -p1 --batch --quiet < "$patchfile"
echo "${patchfile##*/} applies to rtslib-fb $version"

# pytest and pyudev: the system's, or pinned wheels unpacked here.
deps=$work/deps
wheels=
if ! "$python" -c 'import pytest' 2>/dev/null; then
    "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
        die "pytest is missing (apt-get install python3-pytest)"
    wheels=$pytest_wheels
fi
if ! "$python" -c 'import pyudev' 2>/dev/null; then
    wheels="$wheels
$pyudev_wheels"
fi
pythonpath=$src
if [ -n "$wheels" ]; then
    mkdir -p "$cache/wheels" "$deps"
    "$python" "$work/fetch.py" "$cache/wheels" "$wheels"
    # shellcheck disable=SC2046 # file names have no blanks
    "$python" "$work/unpack.py" "$deps" $(echo "$wheels" | while read -r _ _ file _; do
        if [ -n "$file" ]; then echo "$cache/wheels/$file"; fi; done)
    pythonpath=$src:$deps
fi

# The tests run from a copy, so that pytest writes nothing into the checkout.
cp -R "$here/tests" "$work/tests"
cd "$work"
export PYTHONPATH="$pythonpath" PYTHONDONTWRITEBYTECODE=1
imported=$("$python" -c 'import rtslib; print(rtslib.__file__)')
case $imported in
"$src"/*) ;;
*) die "rtslib is imported from $imported, not from the patched tree" ;;
esac
"$python" -m pytest -p no:cacheprovider -q "$work/tests" "$@"
