#!/usr/bin/env bash
# Export the default model from its run and measure it: the figures the README quotes.
#   bash bench/default_model.sh [RUN_DIR]     (after: speechattn train recipes/default.yaml --out runs/default)
# Needs the prepared synth-en, speechocean762, ljspeech and real-dev manifests (see recipes/).
set -euo pipefail
run=${1:-runs/default}
out=$run/report
mkdir -p "$out" speechattn/runtime/models
[ -f "$run/best.pt" ] || { echo "$run/best.pt: no such checkpoint (train first)" >&2; exit 1; }
python - "$run/best.pt" <<'PY'  # the shipped checkpoint: weights and config only (no optimizer state)
import sys, torch
from speechattn.model.encoder import load, save_checkpoint
source = sys.argv[1]
payload = torch.load(source, map_location="cpu", weights_only=True)
save_checkpoint(load(source), "speechattn/runtime/models/default.pt", step=payload.get("step"), trained_from=source)
PY
speechattn export speechattn/runtime/models/default.pt -o speechattn/runtime/models/default.onnx
# int8: 8-bit weights (no calibration), verified on speech
speechattn export speechattn/runtime/models/default.pt -o speechattn/runtime/models/default-int8.onnx --int8 \
    --verify-audio speechattn/runtime/samples/please-enter-your-password.wav || echo "int8 export refused (see above)"
speechattn stream-check speechattn/runtime/models/default.onnx speechattn/runtime/samples/this-no-longer-appears-to-be-the-case.wav > "$out/stream-check-fp32.txt"
speechattn stream-check speechattn/runtime/models/default-int8.onnx speechattn/runtime/samples/this-no-longer-appears-to-be-the-case.wav > "$out/stream-check-int8.txt"
synth=data/synth-en/synth-en_supervisions_test.jsonl.gz
ocean=data/speechocean762/speechocean762_supervisions_dev.jsonl.gz
asterisk=data/real-dev/real-dev_supervisions_dev.jsonl.gz
lj=data/ljspeech/ljspeech_supervisions_dev.jsonl.gz
model=speechattn/runtime/models/default.pt
speechattn eval $model $synth --chunk-frames full,8 --json > "$out/synth-test.json"
for set in ocean asterisk lj; do
    manifest=${!set}
    for decoder in bigram hysteresis; do
        speechattn eval $model $manifest --decoder $decoder --json > "$out/$set-$decoder.json"
    done
done
speechattn eval $model $ocean --chunk-frames 8 --confusion "$out/confusion-speechocean762.png" --json > /dev/null
[ -f speechattn/runtime/models/default-int8.onnx ] && speechattn eval speechattn/runtime/models/default-int8.onnx $ocean $asterisk $lj --chunk-frames 8 --json > "$out/int8-real.json"
speechattn eval speechattn/runtime/models/default.onnx $ocean $asterisk $lj --chunk-frames 8 --json > "$out/fp32-real.json"
python bench/pocketsphinx_peer.py $asterisk $ocean $lj --model speechattn/runtime/models/default.onnx --json "$out/peer.json"
