#!/usr/bin/env bash
# Build Rhubarb Lip Sync 1.14.0 from source for bench/mouth_languages.py (the peer `rhubarb`): data/rhubarb/build.
#
#   apt-get install cmake g++ libboost-all-dev googletest pocketsphinx-en-us
#   bash bench/build_rhubarb.sh [CLONE]     # CLONE: a git clone or mirror of github.com/DanielSWolf/rhubarb-lip-sync
#
# Two changes to the v1.14.0 tree, neither in what it computes from audio, so it builds offline with Debian's CMake
# 3.25: `cmake_policy(SET CMP0167 OLD)` only where CMake knows the policy (3.30+), and googletest from Debian's
# source (/usr/src/googletest) instead of a download.  Where the clone lacks the large files of its acoustic model
# (lib/cmusphinx-en-us-5.2: mdef, means, variances) or its word language model (en-us.lm.bin), the script says so
# and fills them in: the language model from Debian's pocketsphinx-en-us (the same file: git hash 24b9a575), the
# acoustic model as a whole with the PTM en-us model that the pocketsphinx copy inside Rhubarb's own tree ships
# (lib/pocketsphinx-rev13216/model/en-us/en-us) -- then the peer is Rhubarb 1.14.0's code with another acoustic model
# of the same CMU Sphinx en-us 5.2 family, and the figures must say so.
set -euo pipefail
cd "$(dirname "$0")/.."
clone="${1:-https://github.com/DanielSWolf/rhubarb-lip-sync}"
root="$(realpath -m "${RHUBARB_ROOT:-data/rhubarb}")"  # bench/mouth_languages.py reads data/rhubarb/build/rhubarb/rhubarb
mkdir -p "$root"
if [ ! -d "$root/src/.git" ]; then
  git clone --no-checkout -q "$clone" "$root/src"
fi
cd "$root/src"
git read-tree v1.14.0
missing=()
while IFS= read -r path; do
  if ! git cat-file -e "$(git rev-parse "v1.14.0:$path")" 2>/dev/null; then missing+=("$path"); fi
done < <(git ls-tree -r --name-only v1.14.0 rhubarb/lib/cmusphinx-en-us-5.2 rhubarb/lib/pocketsphinx-rev13216/model)
git ls-files | grep -v -F -x -f <(printf '%s\n' "${missing[@]:-}") | git checkout-index --stdin -f
lib=rhubarb/lib
for path in "${missing[@]:-}"; do
  case "$path" in
    "") ;;
    */en-us.lm.bin)
      echo "the clone lacks $path: taking Debian's pocketsphinx-en-us copy"
      cp /usr/share/pocketsphinx/model/en-us/en-us.lm.bin "$path" ;;
    "$lib"/cmusphinx-en-us-5.2/*)
      echo "the clone lacks $path: Rhubarb's acoustic model is replaced by pocketsphinx's PTM en-us model" ;;
    *) echo "the clone lacks $path and nothing replaces it" >&2; exit 1 ;;
  esac
done
if printf '%s\n' "${missing[@]:-}" | grep -q cmusphinx-en-us-5.2; then
  rm -rf "$lib/cmusphinx-en-us-5.2" && mkdir "$lib/cmusphinx-en-us-5.2"
  cp "$lib"/pocketsphinx-rev13216/model/en-us/en-us/* "$lib/cmusphinx-en-us-5.2/"
fi
sed -i 's/^cmake_policy(SET CMP0167 OLD).*/if(POLICY CMP0167)\n  cmake_policy(SET CMP0167 OLD)  # legacy Boost integration\nendif()/' \
  rhubarb/CMakeLists.txt
cd "$root"
mkdir -p build && cd build
cmake ../src -DCMAKE_BUILD_TYPE=Release -DFETCHCONTENT_SOURCE_DIR_GOOGLETEST=/usr/src/googletest \
  -DFETCHCONTENT_FULLY_DISCONNECTED=ON >cmake.log
make -j"$(nproc)" rhubarb >make.log
./rhubarb/rhubarb --version
