#!/usr/bin/env bash
# Call 3: Nsight Compute of structure's force kernel, DSL (`Spring::compute_force`) against the
# SOA baseline's (`structure_soa_compute`), one launch each at the same point of a 100-step run
# (launch 2,001 of the kernel), memory counters: the bytes each moves per spring.
set -u
export DYNASOAR_DATA=gpu-bundle/data
B=/tmp/b-old; mkdir -p $B; [[ -d $B/bin ]] || xz -dc gpu-bundle/old/payload.tar.xz | tar xf - -C $B
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_atom.sum,lts__t_sectors_srcunit_tex_op_red.sum,lts__t_sector_op_read_hit_rate.pct,lts__t_sector_op_write_hit_rate.pct,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,smsp__inst_executed.sum,smsp__thread_inst_executed.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct,smsp__warp_issue_stalled_membar_per_warp_active.pct,smsp__warp_issue_stalled_drain_per_warp_active.pct
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/old/COMMIT) (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s13/go3.sh (ncu --metrics ... -k regex:K --launch-skip 2000 --launch-count 1 structure --steps 100 [--impl soa] --backend cuda --no-progress)"
  for side in "dsl Spring__compute_force" "soa structure_soa_compute"; do
    set -- $side
    extra=""; [[ $1 == soa ]] && extra="--impl soa"
    echo "=== $1 ($2)"
    DYNASOAR_CUBIN_DIR=$B/cubin timeout 200 ncu --metrics $M -k "regex:$2" --launch-skip 2000 --launch-count 1 $B/bin/structure --steps 100 $extra --backend cuda --no-progress 2>&1 | grep -v "^==PROF==" | tail -40
  done
} > $OUT/ncu-structure-force.txt 2>&1
cat $OUT/ncu-structure-force.txt
