#!/usr/bin/env bash
# Export the default model from its run and measure it: the figures the README quotes.
#   bash bench/default_model.sh [RUN_DIR]     (after: speechattn train recipes/default.yaml --out runs/default)
# Needs the prepared synth-en, speechocean762 and real-dev manifests (see recipes/).
set -euo pipefail
run=${1:-runs/default}
out=$run/report
mkdir -p "$out" speechattn/models
speechattn export "$run/best.pt" -o speechattn/models/default.onnx
speechattn export "$run/best.pt" -o speechattn/models/default-int8.onnx --int8 --verify-audio speechattn/samples/please-enter-your-password.wav || echo "int8 export refused (see above)"
synth=data/synth-en/synth-en_supervisions_test.jsonl.gz
ocean=data/speechocean762/speechocean762_supervisions_dev.jsonl.gz
asterisk=data/real-dev/real-dev_supervisions_dev.jsonl.gz
speechattn eval "$run/best.pt" $synth --chunk-frames full 8 --json > "$out/synth-test.json"
speechattn eval "$run/best.pt" $ocean --confusion "$out/confusion-speechocean762.png" --json > "$out/speechocean762-dev.json"
speechattn eval "$run/best.pt" $asterisk --confusion "$out/confusion-asterisk.png" --json > "$out/asterisk.json"
for m in 1 2 3 4 5; do  # the segmenter's minimum phone length, against PER
    speechattn eval "$run/best.pt" $ocean $asterisk --chunk-frames 8 --min-frames $m --json > "$out/min-frames-$m.json"
done
[ -f speechattn/models/default-int8.onnx ] && speechattn eval speechattn/models/default-int8.onnx $ocean $asterisk --chunk-frames 8 --json > "$out/int8-real.json"
python bench/pocketsphinx_peer.py $asterisk $ocean --model speechattn/models/default.onnx --json "$out/peer.json"
