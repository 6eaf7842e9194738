# The demo's script mode: a WAV through SpeechattnLipSync, its phones and Rhubarb cues printed as lines, then quit.
#
#     godot3-server --path DEMO -s res://cues.gd -- [MODEL.onnx [FILE.wav [PIECE_SECONDS]]]
#
# prints "phone START END PHONE CONFIDENCE" and "cue START END SHAPE" (seconds; the end not cut at the audio's end),
# the audio pushed in pieces of PIECE_SECONDS (0.1) as a game pushes what it plays.  Exit status 1 on an error,
# with the library's message on stderr.
extends SceneTree

const Wav = preload("res://wav.gd")
const LipSync = preload("res://speechattn_lipsync.gdns")


func _init() -> void:
	var args = Array(OS.get_cmdline_args())
	var given = args.slice(args.find("--") + 1, args.size() - 1) if args.has("--") else []
	var model = given[0] if given.size() > 0 else ProjectSettings.globalize_path("res://bin/default-int8.onnx")
	var path = given[1] if given.size() > 1 else ProjectSettings.globalize_path("res://bin/sample.wav")
	var piece_seconds = float(given[2]) if given.size() > 2 else 0.1
	quit(run(model, path, piece_seconds))


func run(model: String, path: String, piece_seconds: float) -> int:
	var wav = Wav.read(path)
	if wav.has("error"):
		printerr(wav.error)
		return 1
	var lipsync = LipSync.new()
	if not lipsync.load_model(model, {"visemes": "rhubarb"}):
		printerr(lipsync.get_error_code(), ": ", lipsync.get_error())
		return 1
	var piece_bytes = max(1, int(piece_seconds * wav.rate)) * 2 * wav.channels
	var updates = []
	for start in range(0, wav.pcm.size(), piece_bytes):
		var end = min(start + piece_bytes, wav.pcm.size())
		updates.append(lipsync.push_int16(wav.pcm.subarray(start, end - 1), wav.rate, wav.channels))
	updates.append(lipsync.finish())
	for update in updates:
		if update == null:
			printerr(lipsync.get_error_code(), ": ", lipsync.get_error())
			return 1
		for segment in update.segments:
			print("phone %.2f %.2f %s %.9f" % [segment.start, segment.end, segment.phone, segment.confidence])
		for cue in update.cues:
			print("cue %.2f %.2f %s" % [cue.start, cue.end, cue.shape])
	return 0
