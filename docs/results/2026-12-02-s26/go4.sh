#!/usr/bin/env bash
# Call 4 (2026-12-02, twenty-sixth session): stall reasons of one n-body force launch, base
# (the bundle's cubin), field2 and ncall (as in go3.sh). Same binaries of 31f8e3b.
set -u
SAVE=$OUT
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-base; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
E=$PWD/gpu-bundle/extra
declare -A DIR=([base]=$B/cubin [field2]=$E/field2 [ncall]=$E/ncall)
M='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio|l1tex__t_sector_hit_rate\.pct|l1tex__t_sectors_pipe_lsu_mem_global_op_ld\.sum|l1tex__t_sectors_pipe_tex_mem_texture\.sum|smsp__inst_executed_op_global_ld\.sum|gpu__time_duration\.sum|smsp__sass_inst_executed_op_ldgsts\.sum'
for s in base field2 ncall; do
  { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    echo "commit: bundle $(cat gpu-bundle/COMMIT) (models cubin 74351f504e77762e); $s (see go3.sh)"
    echo "command: ncu --kernel-name regex:Body__compute_force\$ --launch-skip 3 --launch-count 1 --metrics '$M' nbody --backend cuda --no-progress --impl dynasoar --steps 6"
    DYNASOAR_CUBIN_DIR=${DIR[$s]} timeout 120 ncu --kernel-name 'regex:Body__compute_force$' --launch-skip 3 --launch-count 1 --metrics "$M" $B/bin/nbody --backend cuda --no-progress --impl dynasoar --steps 6
  } > $SAVE/ncu-stalls-$s.txt 2>&1
done
paste <(grep -E "^\s+(smsp|l1tex|gpu)" $SAVE/ncu-stalls-base.txt | awk '{print $1, $NF}') <(grep -E "^\s+(smsp|l1tex|gpu)" $SAVE/ncu-stalls-field2.txt | awk '{print $NF}') <(grep -E "^\s+(smsp|l1tex|gpu)" $SAVE/ncu-stalls-ncall.txt | awk '{print $NF}') | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | column -t
