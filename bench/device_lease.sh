#!/usr/bin/env bash
# One lease of a lent GPU machine (this workplace's device tool; JAX, no TensorFlow, no network), the checks of
# issue 35 in one command, each stage only while time is left, logs and JSON under $OUT:
#   setup   install the wheels carried in .whl/ (keras, optree, namex, ctranslate2, sentence-splitter,
#           pyahocorasick), put the shared corpora carried in .devdata/ where configs/gpu.yaml reads them
#   check   scripts/gpu_check.py --minutes $MINUTES on $CONFIG: prepare, train, score, convert (a first run:
#           empty compilation cache); again with NMT_ATTENTION=xla if it failed
#   again   a second run of the same config and programs (the cache warm), $AGAIN_MINUTES of training
#   bench   bench/bench_train_gpu.py --peak --compare-sync: steady-state step time, tokens/s, TFLOP/s, MFU, and
#           steps that wait for their logs against steps that don't (StepCallbacks), side by side
#   decode-compile  bench/bench_decode_compile.py on the check's prepared data: the scoring's decoding programs
#           compiled as each batch comes (before) against side by side (now), one round
#   bench-xla  the same with NMT_ATTENTION=xla (XLA's attention kernel instead of cuDNN's)
#   sweep   the bench for each batch_tokens,buckets in $SWEEP (default: 12288,4 12288,6 32768,4 32768,6)
# usage: bash bench/device_lease.sh [stage ...]     (default: setup check bench again decode-compile)
# measured with it (H100, 2026-11-26): see the README, "Training on a GPU"
# Prepare here first:  bench/device_lease.sh --carry   (downloads the wheels, copies the corpora)
set -u
STAGES=("$@"); [ ${#STAGES[@]} -eq 0 ] && STAGES=(setup check bench again decode-compile)
CONFIG=${CONFIG:-configs/gpu.yaml}; MINUTES=${MINUTES:-4}; AGAIN_MINUTES=${AGAIN_MINUTES:-0.5}
WORKDIR=${WORKDIR:-$(python3 -c "import yaml; print(yaml.safe_load(open('$CONFIG'))['workdir'])")}
DEADLINE=${DEADLINE:-570}            # seconds this command may use (the device tool's limit is 600)
OUT=${OUT:-/tmp/device-out}; mkdir -p "$OUT"
START=$(date +%s)
left() { echo $((DEADLINE - ($(date +%s) - START))); }
say() { echo "[$(($(date +%s) - START)) s] $*"; }
export PYTHONUNBUFFERED=1 KERAS_BACKEND=jax TF_CPP_MIN_LOG_LEVEL=3

if [ "${STAGES[0]}" = "--carry" ]; then       # here, before the lease: what the machine lacks
  mkdir -p .git/info; grep -qx "/.devdata/" .git/info/exclude 2>/dev/null || echo /.devdata/ >> .git/info/exclude
  mkdir -p .whl .devdata && cp -r ../shared/data .devdata/
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d .whl keras==3.15.1 optree==0.20.0 namex==0.1.0 ctranslate2==4.8.5 \
    sentence-splitter==1.4 pyahocorasick==2.3.1
  du -sh .whl .devdata; exit 0
fi

run_stage() {   # name, seconds needed at least, command...
  local name=$1 need=$2; shift 2
  if [ "$(left)" -lt "$need" ]; then say "$name: skipped, $(left) s left (needs $need)"; return 1; fi
  say "$name: $*"
  timeout "$(( $(left) - 5 ))" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  say "$name: exit $rc; errors/tracebacks in its log: $(grep -c -E 'Traceback|ERROR' "$OUT/$name.log")"
  tail -n "${TAIL:-25}" "$OUT/$name.log" | tr '\r' '\n' | tail -n "${TAIL:-25}"
  return $rc
}

for stage in "${STAGES[@]}"; do
  case $stage in
    setup)
      if [ -d .whl ]; then
        python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
          .whl/*.whl || exit 1
        export PYTHONPATH=/tmp/site
      fi
      [ -d .devdata/data ] && [ ! -d ../shared/data ] && mkdir -p ../shared && cp -r .devdata/data ../shared/
      { nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv
        python3 -c "import jax, keras, sys; print(sys.version.split()[0], 'jax', jax.__version__, 'keras',
keras.__version__, jax.devices())"
        python3 -c "import tensorflow" 2>&1 | tail -1; nproc; } > "$OUT/env.txt" 2>&1
      say "setup: $(tr '\n' ' ' < "$OUT/env.txt")" ;;
    check)
      export PYTHONPATH=${PYTHONPATH:-/tmp/site}
      if ! run_stage check 200 python3 scripts/gpu_check.py --config "$CONFIG" --workdir "$WORKDIR" \
          --minutes "$MINUTES"; then
        NMT_ATTENTION=xla run_stage check-xla 200 python3 scripts/gpu_check.py --config "$CONFIG" \
          --workdir "$WORKDIR" --minutes "$(python3 -c "print(min(2, $MINUTES))")"
      fi
      workdir=$WORKDIR
      cp "$workdir/gpu_check.json" "$OUT/" 2>/dev/null
      cp "$workdir/run/train_summary.json" "$OUT/check_train_summary.json" 2>/dev/null ;;
    again)
      export PYTHONPATH=${PYTHONPATH:-/tmp/site}
      workdir=$WORKDIR
      rm -rf "$workdir-again" && mkdir -p "$workdir-again" && ln -s "$(realpath "$workdir/prepared")" \
        "$workdir-again/prepared"
      run_stage again 90 python3 scripts/train.py --config "$CONFIG" --workdir "$workdir-again" \
        --set train.max_minutes="$AGAIN_MINUTES" --set train.final_bleu_sentences=0 --verbose 0
      cp "$workdir-again/run/train_summary.json" "$OUT/again_train_summary.json" 2>/dev/null ;;
    bench)
      export PYTHONPATH=${PYTHONPATH:-/tmp/site}
      # shellcheck disable=SC2086
      run_stage bench 60 python3 bench/bench_train_gpu.py --config "$CONFIG" --peak ${BENCH_ARGS:---steps 30 --rounds 3 --compare-sync} ;;
    decode-compile)
      export PYTHONPATH=${PYTHONPATH:-/tmp/site}
      run_stage decode-compile 90 python3 bench/bench_decode_compile.py --config "$CONFIG" --workdir "$WORKDIR" \
        --rounds 1 ;;
    bench-xla)    # the same with XLA's attention kernel: the side-by-side ratio of cuDNN flash attention
      export PYTHONPATH=${PYTHONPATH:-/tmp/site}
      # shellcheck disable=SC2086
      NMT_ATTENTION=xla run_stage bench-xla 60 python3 bench/bench_train_gpu.py --config "$CONFIG" \
        ${BENCH_ARGS:---steps 30 --rounds 3} ;;
    sweep)        # throughput of batch sizes and bucket counts, one line each (sweep.jsonl); $SWEEP overrides
      export PYTHONPATH=${PYTHONPATH:-/tmp/site}
      for variant in ${SWEEP:-12288,4 12288,6 32768,4 32768,6}; do
        tokens=${variant%,*} buckets=${variant#*,}; name="sweep-$tokens-$buckets"
        TAIL=1 run_stage "$name" 60 python3 bench/bench_train_gpu.py --config "$CONFIG" \
          --set train.batch_tokens="$tokens" --set train.buckets="$buckets" --steps 30 --rounds 3 \
          && tail -n 1 "$OUT/$name.log" >> "$OUT/sweep.jsonl"
        cat "$OUT/$name.log" >> "$OUT/sweep.log"; rm -f "$OUT/$name.log"
      done ;;
    *) echo "unknown stage $stage"; exit 2 ;;
  esac
done
say "lease script done"
