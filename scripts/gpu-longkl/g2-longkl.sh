#!/usr/bin/env bash
# GPU step 2 for longkl: join the model, wait for the build, KL by depth at 128K (rotation on/off),
# a second reference-only run (determinism), then hand back the run directories.
t0=$(date +%s)
cat /tmp/models/smollm2.part-a .gpu2/part-b > /tmp/models/smollm2.gguf && rm -f /tmp/models/smollm2.part-a
sha256sum /tmp/models/smollm2.gguf; cat .gpu2/smollm2.sha256
for i in $(seq 1 70); do [ -x /tmp/llama/build/bin/llama-server ] && [ -x /tmp/llama/build/bin/llama-perplexity ] && break; sleep 5; done
echo "build waited $(( $(date +%s)-t0 )) s"; tail -3 /tmp/build.log
[ -x /tmp/llama/build/bin/llama-perplexity ] || { cp /tmp/build.log $OUT/; exit 3; }
export LD_LIBRARY_PATH=/tmp/k/lib KVSWEEP_LLAMA_BIN=/tmp/llama/build/bin
K=/tmp/k/bin/kvsweep
cp .gpu2/*.json /tmp/k/configs/
t1=$(date +%s)
timeout 300 $K run /tmp/k/configs/gpu-longkl.json -o /tmp/runs/g > /tmp/runs/run.out 2> /tmp/runs/run.err; echo "run rc=$? wall=$(( $(date +%s)-t1 )) s"
tail -25 /tmp/runs/run.out; tail -8 /tmp/runs/run.err
t2=$(date +%s)
timeout 90 $K run /tmp/k/configs/gpu-longkl-ref.json -o /tmp/runs/r > /tmp/runs/ref.out 2> /tmp/runs/ref.err; echo "ref rc=$? wall=$(( $(date +%s)-t2 )) s"
tail -4 /tmp/runs/ref.err
nvidia-smi --query-gpu=name,memory.used --format=csv
cd /tmp/runs && tar czf $OUT/gpu-runs.tgz --exclude='*.gguf' --exclude='*.bin' --exclude='*.kld' --exclude='*-corpus.txt' . ; ls -la $OUT
echo "total $(( $(date +%s)-t0 )) s"
