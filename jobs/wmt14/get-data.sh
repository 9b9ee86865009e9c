#!/usr/bin/env bash
# Downloads the WMT14 data of the paper's setup (Vaswani et al. 2017, section 5.1) for one language
# pair, checks every file's size and SHA-256, and extracts what the pair needs into DIR, in the
# archives' own layout: configs/preprocess/wmt14-PAIR.yaml reads it from there. For a machine with
# internet access; resumable (curl -C -, or wget -c without curl): run it again after a break.
#
#   jobs/wmt14/get-data.sh PAIR DIR [--mirror URL] [--checksums FILE] [--list]
#     PAIR   en-de (4.5M pairs: Europarl v7, Common Crawl, News Commentary v9) or
#            en-fr (36M: the same three, the UN corpus and the 10^9 French-English corpus)
#     DIR    the raw data folder (jobs/wmt14/run.sh reads NMT_WMT14_RAW, default data/wmt14);
#            both pairs can share one: the archives they have in common are fetched once
#     --mirror URL      fetch each file as URL/NAME instead of from statmt.org: a local mirror,
#                       an http(s) or file:// URL or a plain folder (or NMT_WMT14_MIRROR)
#     --checksums FILE  check against FILE's table (this script's format, below) instead of the
#                       one in this script: for a mirror of other files, e.g. the CTest's
#                       miniature tree (or NMT_WMT14_CHECKSUMS)
#     --list            print the files PAIR needs, with what is known of each, and exit
#
# Newstest2013 (dev) comes from WMT14's dev.tgz; newstest2014 (test) from test-full.tgz, the full
# set of 3,003 sentences (sacreBLEU's wmt14/full), which the paper's and later papers' figures use,
# not test-filtered.tgz's 2,737 (EN-DE).
#
# Checks: each file's size and SHA-256 against the table below, and its MD5 where one is published.
# Where no SHA-256 is published that this script could verify, it is trusted on first use: the
# SHA-256 of the first download is recorded in DIR/downloads/trusted-on-first-use.sha256 (sha256sum
# format) with a loud warning, and every later run checks against that record. A file that fails a
# check is refused, named, and (a fresh download) removed; the script exits 1.
#
# Layout (DIR): downloads/ (the archives, kept for re-checks; *.part while downloading), then the
# archive members as WMT packs them: training/europarl-v7.de-en.en, commoncrawl.de-en.en (top
# level in its archive), training/news-commentary-v9.de-en.en, un/undoc.2000.fr-en.en,
# giga-fren.release2.fixed.en.gz (kept gzipped: nmt-preprocess reads gzip), dev/newstest2013-*.sgm,
# test-full/newstest2014-*.sgm.
# Exit status: 0 done, 1 a download, check or extraction failed (named), 2 usage.
set -euo pipefail

usage() { sed -n '2,/^[^#]/{/^#/p}' "$0"; exit 2; }

# name, size in bytes, SHA-256, MD5 ('-': not known), URL (statmt.org's WMT14 page,
# https://www.statmt.org/wmt14/translation-task.html, links these files). Sources of the figures:
#   - the four training archives: size and SHA-256 as TensorFlow Datasets records them for the same
#     URLs (tensorflow_datasets/url_checksums/wmt13_translate.txt and wmt14_translate.txt);
#   - test-full.tgz: MD5 as sacreBLEU's test-set table lists it (wmt14/full); no size or SHA-256
#     found, so those are trusted on first use;
#   - WMT14's dev.tgz: nothing found; trusted on first use. (Later dev.tgz archives, e.g. WMT19's,
#     have published checksums but are other files.)
default_table='
training-parallel-europarl-v7.tgz 657632379 0224c7c710c8a063dfd893b0cc0830202d61f4c75c17eb8e31836103d27d96e7 - https://www.statmt.org/wmt13/training-parallel-europarl-v7.tgz
training-parallel-commoncrawl.tgz 918311367 c7a74e2ea01ac6c920123108627e35278d4ccb5701e15428ffa34de86fa3a9e5 - https://www.statmt.org/wmt13/training-parallel-commoncrawl.tgz
training-parallel-nc-v9.tgz 80418416 cb8953f292298e6877ae433c98912b927cb0766b303f4540512ddd286c748485 - https://www.statmt.org/wmt14/training-parallel-nc-v9.tgz
training-parallel-un.tgz 2365634246 29141b5c1eba149a94f7a59d3b1a834b2e47fe0f8758d68dcd77a3d3f497ee47 - https://www.statmt.org/wmt13/training-parallel-un.tgz
training-giga-fren.tar 2595102720 3ff8319f6919393520559bfbc7ad6a747ec81b3abc7be9993b338d4b017b4d9a - https://www.statmt.org/wmt10/training-giga-fren.tar
dev.tgz - - - https://www.statmt.org/wmt14/dev.tgz
test-full.tgz - - a8cd784e006feb32ac6f3d9ec7eb389a https://www.statmt.org/wmt14/test-full.tgz
'

# What each pair extracts from each archive (paths inside the archives).
pair_members='
en-de training-parallel-europarl-v7.tgz training/europarl-v7.de-en.en training/europarl-v7.de-en.de
en-de training-parallel-commoncrawl.tgz commoncrawl.de-en.en commoncrawl.de-en.de
en-de training-parallel-nc-v9.tgz training/news-commentary-v9.de-en.en training/news-commentary-v9.de-en.de
en-de dev.tgz dev/newstest2013-src.en.sgm dev/newstest2013-ref.de.sgm
en-de test-full.tgz test-full/newstest2014-deen-src.en.sgm test-full/newstest2014-deen-ref.de.sgm
en-fr training-parallel-europarl-v7.tgz training/europarl-v7.fr-en.en training/europarl-v7.fr-en.fr
en-fr training-parallel-commoncrawl.tgz commoncrawl.fr-en.en commoncrawl.fr-en.fr
en-fr training-parallel-un.tgz un/undoc.2000.fr-en.en un/undoc.2000.fr-en.fr
en-fr training-parallel-nc-v9.tgz training/news-commentary-v9.fr-en.en training/news-commentary-v9.fr-en.fr
en-fr training-giga-fren.tar giga-fren.release2.fixed.en.gz giga-fren.release2.fixed.fr.gz
en-fr dev.tgz dev/newstest2013-src.en.sgm dev/newstest2013-ref.fr.sgm
en-fr test-full.tgz test-full/newstest2014-fren-src.en.sgm test-full/newstest2014-fren-ref.fr.sgm
'

say() { echo "get-data.sh: $*"; }
die() { echo "get-data.sh: $*" >&2; exit 1; }

pair='' dir='' list=0
mirror=${NMT_WMT14_MIRROR:-}
checksums=${NMT_WMT14_CHECKSUMS:-}
while (($# > 0)); do
  case $1 in
    --mirror) (($# >= 2)) || usage; mirror=$2; shift 2 ;;
    --mirror=*) mirror=${1#--mirror=}; shift ;;
    --checksums) (($# >= 2)) || usage; checksums=$2; shift 2 ;;
    --checksums=*) checksums=${1#--checksums=}; shift ;;
    --list) list=1; shift ;;
    -h | --help) usage ;;
    -*) echo "get-data.sh: unknown option $1" >&2; usage ;;
    *)
      if [[ -z "$pair" ]]; then pair=$1
      elif [[ -z "$dir" ]]; then dir=$1
      else echo "get-data.sh: too many arguments: $1" >&2; usage
      fi
      shift ;;
  esac
done
[[ "$pair" == en-de || "$pair" == en-fr ]] || { echo "get-data.sh: PAIR must be en-de or en-fr" >&2; usage; }
[[ -n "$dir" || $list == 1 ]] || usage

table=$default_table
table_source="this script's table"
if [[ -n "$checksums" ]]; then
  [[ -f "$checksums" ]] || { echo "get-data.sh: --checksums $checksums: no such file" >&2; exit 2; }
  table=$(cat "$checksums")
  table_source=$checksums
fi
# A plain folder as a mirror is the same as its file:// URL.
if [[ -n "$mirror" && "$mirror" != *://* ]]; then
  [[ -d "$mirror" ]] || { echo "get-data.sh: --mirror $mirror: no such folder" >&2; exit 2; }
  mirror=file://$(cd "$mirror" && pwd)
fi
mirror=${mirror%/}

# The archives of PAIR, in order, and each one's fields from the table.
mapfile -t archives < <(awk -v p="$pair" '$1 == p { print $2 }' <<< "$pair_members")
lookup() {  # NAME -> "size sha256 md5 url", or nothing
  awk -v n="$1" '$1 == n && !/^#/ { print $2, $3, $4, $5; exit }' <<< "$table"
}
for name in "${archives[@]}"; do
  fields=$(lookup "$name")
  [[ -n "$fields" ]] || die "$name is not in $table_source"
  read -r size sha md5 url <<< "$fields"
  [[ $size == - || $size =~ ^[0-9]+$ ]] || die "$table_source: $name: size '$size' is not a number or -"
  [[ $sha == - || $sha =~ ^[0-9a-f]{64}$ ]] || die "$table_source: $name: '$sha' is not a SHA-256 or -"
  [[ $md5 == - || $md5 =~ ^[0-9a-f]{32}$ ]] || die "$table_source: $name: '$md5' is not an MD5 or -"
  [[ -n "$url" ]] || die "$table_source: $name: no URL"
done

if ((list)); then
  echo "WMT14 $pair: the files (size and SHA-256 from $table_source; '-': trusted on first use)"
  for name in "${archives[@]}"; do
    read -r size sha md5 url <<< "$(lookup "$name")"
    [[ -n "$mirror" ]] && url="$mirror/$name (a mirror of $url)"
    printf '  %-34s %12s  sha256 %s  md5 %s\n    %s\n' "$name" "$size" "$sha" "$md5" "$url"
  done
  exit 0
fi

mkdir -p "$dir/downloads"
dir=$(cd "$dir" && pwd)
downloads=$dir/downloads
tofu=$downloads/trusted-on-first-use.sha256
touch "$tofu"

file_size() { stat -c %s "$1"; }

# Downloads URL into PART, resuming a partial PART when the final size is known (a file of unknown
# size is small here: it starts again). curl where there is one (it resumes file:// too), else wget.
download() {  # NAME URL PART SIZE
  local name=$1 url=$2 part=$3 size=$4 have=0
  [[ -f "$part" ]] && have=$(file_size "$part")
  if [[ $size != - ]] && ((have > size)); then
    say "$name: the partial download is larger than $size bytes: starting again"
    rm -f "$part"; have=0
  elif [[ $size == - ]] && ((have > 0)); then
    rm -f "$part"; have=0
  fi
  if [[ $size != - ]] && ((have == size)); then return 0; fi
  if ((have > 0)); then say "$name: resuming at $have bytes"; else say "$name: downloading $url"; fi
  local status=0
  if command -v curl > /dev/null; then
    curl --fail --location --retry 3 --continue-at - --silent --show-error --output "$part" "$url" ||
      status=$?
  elif [[ "$url" == http* ]]; then
    wget --continue --tries=3 --quiet --output-document="$part" "$url" || status=$?
  else
    die "$name: curl is needed for $url"
  fi
  ((status == 0)) || die "$name: the download from $url failed (exit $status); run this again to resume ($part is kept)"
}

# Checks FILE as NAME: size, SHA-256 (published or recorded on first use), MD5. Sets `checked`.
verify() {  # NAME FILE SIZE SHA MD5
  local name=$1 file=$2 size=$3 sha=$4 md5=$5 actual recorded how
  actual=$(file_size "$file")
  if [[ $size != - && $actual != "$size" ]]; then
    echo "get-data.sh: $name: $actual bytes, expected $size ($table_source)" >&2
    return 1
  fi
  actual=$(sha256sum "$file" | cut -d' ' -f1)
  if [[ $sha != - ]]; then
    if [[ $actual != "$sha" ]]; then
      echo "get-data.sh: $name: SHA-256 $actual, expected $sha ($table_source)" >&2
      return 1
    fi
    how="size and SHA-256 as published"
  else
    recorded=$(awk -v n="$name" '$2 == n { print $1; exit }' "$tofu")
    if [[ -n "$recorded" ]]; then
      if [[ $actual != "$recorded" ]]; then
        echo "get-data.sh: $name: SHA-256 $actual differs from the one recorded at its first download, $recorded ($tofu)" >&2
        return 1
      fi
      how="SHA-256 as recorded at its first download (no published one)"
    else
      printf '%s  %s\n' "$actual" "$name" >> "$tofu"
      cat >&2 <<BANNER
================================================================================================
  TRUST ON FIRST USE: $name
  No published SHA-256 of this file is known to this script. The SHA-256 of this download,
    $actual
  is now recorded in
    $tofu
  and every later run checks the file against it. That catches later changes and corruption,
  not a wrong first copy: compare it with another copy (a colleague's, the cluster's shared
  data) and add it to the table in jobs/wmt14/get-data.sh.
================================================================================================
BANNER
      how="SHA-256 recorded now, trusted on first use"
    fi
  fi
  if [[ $md5 != - ]]; then
    actual=$(md5sum "$file" | cut -d' ' -f1)
    if [[ $actual != "$md5" ]]; then
      echo "get-data.sh: $name: MD5 $actual, expected $md5 ($table_source)" >&2
      return 1
    fi
    how="$how; MD5 as published"
  fi
  checked=$how
}

# Extracts MEMBERS of NAME into DIR, unless the stamp says this very file was extracted already.
extract() {  # NAME FILE MEMBERS...
  local name=$1 file=$2 stamp
  shift 2
  stamp="$downloads/.$name.$pair.extracted"
  local want
  want="$(sha256sum "$file" | cut -d' ' -f1) $*"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    local member missing=0
    for member in "$@"; do [[ -f "$dir/$member" ]] || missing=1; done
    if ((missing == 0)); then say "$name: already extracted"; return 0; fi
  fi
  local flags=-xf
  [[ "$name" == *.tgz || "$name" == *.tar.gz ]] && flags=-xzf
  tar "$flags" "$file" -C "$dir" -- "$@" 2> "$downloads/.tar-errors" ||
    die "$name: could not extract $* ($(tr '\n' ' ' < "$downloads/.tar-errors"))"
  printf '%s' "$want" > "$stamp"
  say "$name: extracted $*"
}

for name in "${archives[@]}"; do
  read -r size sha md5 url <<< "$(lookup "$name")"
  [[ -n "$mirror" ]] && url=$mirror/$name
  file=$downloads/$name
  if [[ -f "$file" ]]; then
    verify "$name" "$file" "$size" "$sha" "$md5" ||
      die "$name: $file fails its check (above); remove it and run this again to download it anew"
    say "$name: have it ($checked)"
  else
    download "$name" "$url" "$file.part" "$size"
    if ! verify "$name" "$file.part" "$size" "$sha" "$md5"; then
      rm -f "$file.part"
      die "$name: the download from $url fails its check (above): refused and removed"
    fi
    mv "$file.part" "$file"
    say "$name: downloaded, $(file_size "$file") bytes ($checked)"
  fi
  mapfile -t members < <(awk -v p="$pair" -v n="$name" '$1 == p && $2 == n { for (i = 3; i <= NF; i++) print $i }' <<< "$pair_members")
  extract "$name" "$file" "${members[@]}"
done
rm -f "$downloads/.tar-errors"

say "WMT14 $pair is in $dir (the layout configs/preprocess/wmt14-$pair.yaml reads)."
say "next: NMT_WMT14_RAW=$dir jobs/wmt14/run.sh $pair base   (docs/wmt14.md)"
