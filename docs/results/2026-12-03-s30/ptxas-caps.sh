#!/usr/bin/env bash
# Registers and spills of the allocating updates under the caps tried in go2.sh and go3.sh: the
# bundle's PTX (c897ebf, models PTX d153a411b9cf00c6, built here with DYNASOAR_GPU_ARCH=sm_90
# as scripts/gpu-bundle.sh does) assembled by ptxas 13 with -v, as it is (`base`) and as
# scripts/cubin-variant.py writes each variant (its log). Run on the development machine.
set -u
PTX=${PTX:-/tmp/base.ptx}
PTXAS=.tools/ptxas/nvidia/cu13/bin/ptxas
echo "machine: development machine ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), no GPU); $($PTXAS --version | tail -1)"
echo "commit: bundle c897ebf+changes (models PTX $(python3 scripts/ptx_digest.py $PTX))"
echo "command: bash docs/results/2026-12-03-s30/ptxas-caps.sh (ptxas -arch=sm_90 -O3 -v; scripts/cubin-variant.py --ptx PTX --out DIR --cap PATTERN=N ...)"
K='dynasoar_do__(GolHeap__(Alive|Candidate)__update|OceanHeap__(Fish|Shark)__update|GenerationHeap__(Alive|Candidate)__update|StructureHeap__Spring__compute_force)'
echo "== base (the caps of examples/apps/build.rs at c897ebf)"
$PTXAS -arch=sm_90 -O3 -v $PTX -o /tmp/ptxas-caps-base.cubin 2>&1 | python3 -c "
import re, sys
cur = None
for l in sys.stdin:
    m = re.search(r\"Compiling entry function '(\S+)'\", l)
    if m: cur = m.group(1); continue
    if cur and re.match(r'$K', cur) and ('spill' in l or 'Used' in l): print(' ', cur + ':', l.split(':', 1)[-1].strip() if 'Used' in l else l.strip())
"
# Each variant: its name, then its caps (as in go2.sh and go3.sh).
G=GolHeap; O=OceanHeap; E=GenerationHeap; S=StructureHeap__Spring__compute_force
while read -r v caps; do
  echo "== $v: $caps"
  args=(); for c in $caps; do args+=(--cap "$c"); done
  python3 scripts/cubin-variant.py --ptx $PTX --out /tmp/ptxas-caps-$v "${args[@]}" 2>&1 | grep -E 'dynasoar_do__' | grep -E "$K"
done <<VARIANTS
g68 ${G}__Alive__update=68 ${G}__Candidate__update=68
g72 ${G}__Alive__update=72 ${G}__Candidate__update=72
g76 ${G}__Alive__update=76 ${G}__Candidate__update=76
g80 ${G}__Alive__update=80 ${G}__Candidate__update=80
g96 ${G}__Alive__update=96 ${G}__Candidate__update=96
g0 ${G}__Alive__update=0 ${G}__Candidate__update=0
a72 ${G}__Alive__update=72
c72 ${G}__Candidate__update=72
cap80 ${O}__Shark__update=80 ${O}__Fish__update=80
cap96 ${O}__Shark__update=96 ${O}__Fish__update=96
cap0 ${O}__Shark__update=0 ${O}__Fish__update=0
s96 ${O}__Shark__update=96
s80 ${O}__Shark__update=80
gen80 ${E}__Alive__update=80 ${E}__Candidate__update=80
gen72 ${E}__Alive__update=72 ${E}__Candidate__update=72
gen0 ${E}__Alive__update=0 ${E}__Candidate__update=0
st72 $S=72
st64 $S=64
st56 $S=56
VARIANTS
