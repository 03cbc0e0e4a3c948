#!/usr/bin/env bash
# Call 5: the GPU suite on the final main (its bundle), and Sugarscape's --compare (its cap).
set -u
B=/tmp/dynasoar-bundle; rm -rf $B; mkdir -p $B
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT > $OUT/commit.txt; ls $B/cubin > $OUT/cubins.txt
OUT=$OUT/suite bash gpu-bundle/run.sh tests > $OUT/gpu-tests.txt 2>&1
DYNASOAR_DATA=$PWD/gpu-bundle/data $B/bin/sugarscape --backend cuda --compare --no-progress > $OUT/sugarscape-compare.txt 2>&1
tail -3 $OUT/gpu-tests.txt; grep -v "^app=" $OUT/sugarscape-compare.txt
