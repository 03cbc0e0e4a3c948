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
for v in g68 g72 g76 g80 g96 g0 a72 c72 cap80 cap96 cap0 s96 s80 gen80 gen72 gen0 st72 st64 st56; do
  case $v in
    g*[0-9]) n=${v#g}; caps=(--cap GolHeap__Alive__update=$n --cap GolHeap__Candidate__update=$n);;
  esac
  case $v in
    a72) caps=(--cap GolHeap__Alive__update=72);; c72) caps=(--cap GolHeap__Candidate__update=72);;
    cap*) n=${v#cap}; caps=(--cap OceanHeap__Shark__update=$n --cap OceanHeap__Fish__update=$n);;
    s*[0-9]) n=${v#s}; [[ $v == st* ]] || caps=(--cap OceanHeap__Shark__update=$n);;
    gen*) n=${v#gen}; caps=(--cap GenerationHeap__Alive__update=$n --cap GenerationHeap__Candidate__update=$n);;
  esac
  [[ $v == st* ]] && caps=(--cap StructureHeap__Spring__compute_force=${v#st})
  echo "== $v: ${caps[*]}"
  python3 scripts/cubin-variant.py --ptx $PTX --out /tmp/ptxas-caps-$v "${caps[@]}" 2>&1 | grep -E 'dynasoar_do__' | grep -E "$K"
done
