#!/usr/bin/env bash
# Export the default model from its run and measure it: the figures the README quotes.
#   bash bench/default_model.sh [RUN_DIR]     (after: speechattn train recipes/default.yaml --out runs/default)
# Needs the prepared synth-en, speechocean762, ljspeech and real-dev manifests (see recipes/).
# It SHIPS the run: the clone's bundled default.pt, default.onnx, default-int8.onnx and docs/accuracy-latency.png
# are replaced by the run's (git checkout -- those files puts the bundled ones back).
set -euo pipefail
usage="usage: bash bench/default_model.sh [RUN_DIR]   (default runs/default; replaces this clone's bundled default model)"
case "${1:-}" in -h|--help) echo "$usage"; exit 0 ;; -*) echo "$usage" >&2; exit 2 ;; esac
run=${1:-runs/default}
out=$run/report
[ -f "$run/best.pt" ] || { echo "$run/best.pt: no such checkpoint (train first)" >&2; exit 1; }
mkdir -p "$out" speechattn/runtime/models
python - "$run/best.pt" <<'PY'  # the shipped checkpoint: weights and config only (no optimizer state)
import sys, torch
from speechattn.model.encoder import load, save_checkpoint
source = sys.argv[1]
payload = torch.load(source, map_location="cpu", weights_only=True)
save_checkpoint(load(source), "speechattn/runtime/models/default.pt", step=payload.get("step"), trained_from=source)
PY
speechattn export speechattn/runtime/models/default.pt -o export/models/default.onnx
# int8: 8-bit weights (no calibration), verified on speech
speechattn export speechattn/runtime/models/default.pt -o export/models/default-int8.onnx --int8 \
    --verify-audio speechattn/runtime/samples/please-enter-your-password.wav || echo "int8 export refused (see above)"
speechattn stream-check export/models/default.onnx speechattn/runtime/samples/this-no-longer-appears-to-be-the-case.wav > "$out/stream-check-fp32.txt"
speechattn stream-check export/models/default-int8.onnx speechattn/runtime/samples/this-no-longer-appears-to-be-the-case.wav > "$out/stream-check-int8.txt"
synth=data/synth-en/synth-en_supervisions_test.jsonl.gz
ocean=data/speechocean762/speechocean762_supervisions_dev.jsonl.gz
asterisk=data/real-dev/real-dev_supervisions_dev.jsonl.gz
lj=data/ljspeech/ljspeech_supervisions_dev.jsonl.gz
model=speechattn/runtime/models/default.pt
chunk=$(python -c "from speechattn.model.encoder import load; print(load('$model').config.default_chunk_frames)")
delay=$(python -c "from speechattn.model.encoder import load; print(load('$model').config.output_delay_frames)")
speechattn eval $model $synth --chunk-frames full,$chunk --json > "$out/synth-test.json"
for set in ocean asterisk lj; do
    manifest=${!set}
    for decoder in bigram hysteresis; do
        speechattn eval $model $manifest --decoder $decoder --json > "$out/$set-$decoder.json"
    done
done
speechattn eval $model $ocean --chunk-frames $chunk --confusion "$out/confusion-speechocean762.png" --json > /dev/null
[ -f export/models/default-int8.onnx ] && speechattn eval export/models/default-int8.onnx $ocean $asterisk $lj --chunk-frames $chunk --json > "$out/int8-real.json"
speechattn eval export/models/default.onnx $ocean $asterisk $lj --chunk-frames $chunk --json > "$out/fp32-real.json"
python tools/plot_accuracy_latency.py "$out" --delay "$delay" --default-chunk "$chunk" -o docs/accuracy-latency.png
python bench/level_robustness.py $model $ocean $asterisk $lj --levels=-45,-35,-25,-15 --json "$out/levels.json" > "$out/levels.txt"
# quiet microphones in noisy rooms: dev noise at 0-20 dB SNR, each mix at -45/-30/-15 dBFS, beside pocketsphinx
# (60 utterances a set: 12 minutes on two shared cores; docs/benchmarks.md)
python bench/level_robustness.py $model $asterisk $ocean $lj --snr clean,0,5,10,20 --levels=-45,-30,-15 \
    --peer pocketsphinx --onnx export/models/default-int8.onnx --limit 60 --json "$out/noisy-levels.json" > "$out/noisy-levels.txt"
# the shipped files streamed at their default settings (the ONNX file, as users run it) beside pocketsphinx
python bench/pocketsphinx_peer.py $asterisk $ocean $lj --model export/models/default.onnx --json "$out/peer.json"
# lip sync: the mouth's accuracy (Rhubarb, VRM and Oculus sets) beside pocketsphinx, through the same tables and rules,
# and from the transcript (+script: `transcribe --dialog`)
python bench/lipsync.py $asterisk $ocean $lj --model export/models/default.onnx --dialog --json "$out/lipsync.json" > "$out/lipsync.txt"
# known words: forced alignment beside pocketsphinx's aligner (synthetic voices and the dev sets, a damaged script),
# and follow-along (delays, recovery after a skipped sentence)
python bench/align.py --utterances 150 --deviate --manifests $asterisk $ocean $lj > "$out/align.txt"
python bench/follow.py $asterisk $ocean $lj > "$out/follow.txt"
python bench/follow.py $asterisk $ocean $lj --limit 100 >> "$out/follow.txt"
# the start of a stream: each utterance cut to its first phone, alone and after 320 ms of silence
python bench/onset.py $asterisk $ocean $lj --model $model --json "$out/onset.json" > "$out/onset.txt"
python - "$out" <<'PY'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
peer = json.loads((out / "peer.json").read_text())
latency = peer.pop("latency")
int8, fp32 = (json.loads((out / f"{k}-real.json").read_text())["results"][0] for k in ("int8", "fp32"))
print(f"\nthe shipped default at its default settings: chunk {latency['chunk_frames']} frames, output delay "
      f"{latency['output_delay_frames']}, decoder look-ahead {latency['decoder_lookahead_frames']}: final labels "
      f"{latency['final_ms']:.0f} ms after the audio (metadata final_latency_ms: {latency['metadata_final_latency_ms']})")
print(f"{'set':<40} {'speechattn':>17} {'pocketsphinx':>17}")
for name, row in peer.items():
    ours, theirs = row["speechattn"], row["pocketsphinx"]
    print(f"{name:<40} {100 * ours['frame_accuracy']:6.1f} % / {100 * ours['per']:4.1f} % "
          f"{100 * theirs['frame_accuracy']:6.1f} % / {100 * theirs['per']:4.1f} %")
print(f"int8 against fp32, the three real sets together: {100 * int8['frame_accuracy']:.2f} % / {100 * int8['per']:.2f} % "
      f"against {100 * fp32['frame_accuracy']:.2f} % / {100 * fp32['per']:.2f} % (frame accuracy / PER)")
print((out / "levels.txt").read_text())
print((out / "noisy-levels.txt").read_text().split("\n\n", 1)[-1])  # the grids
print((out / "lipsync.txt").read_text())
print((out / "onset.txt").read_text())
print((out / "align.txt").read_text())
print((out / "follow.txt").read_text())
PY
