# The demo scene: plays a WAV and moves the mouth with its Rhubarb cues.  The clip is pushed to SpeechattnLipSync a
# second ahead of what plays.  A cue is final once the next shape has begun, often later than that; until the cue
# of the sound being heard is final, the mouth takes the shape with the most weight in that sound's 10 ms frame (the
# weights come about 0.2 s after their audio), as a live source would show it.
extends Node2D

const Wav = preload("res://wav.gd")
const LipSync = preload("res://speechattn_lipsync.gdns")
const AHEAD_SECONDS = 1.0

export var model_path = "res://bin/default-int8.onnx"
export var wav_path = "res://bin/sample.wav"

var lipsync
var wav = {}
var pushed_bytes = 0
var cues = []
var shapes = PoolStringArray()
var frame_shapes = PoolStringArray()  # the heaviest shape of each 10 ms frame so far
var finished = false


func _ready() -> void:
	wav = Wav.read(ProjectSettings.globalize_path(wav_path))
	if wav.has("error"):
		push_error(wav.error)
		return
	lipsync = LipSync.new()
	if not lipsync.load_model(ProjectSettings.globalize_path(model_path), {"visemes": "rhubarb"}):
		push_error(lipsync.get_error())
		lipsync = null
		return
	shapes = lipsync.get_shapes()
	var sample = AudioStreamSample.new()
	sample.format = AudioStreamSample.FORMAT_16_BITS
	sample.mix_rate = wav.rate
	sample.stereo = wav.channels == 2
	sample.data = wav.pcm
	$Player.stream = sample
	$Player.play()


func _process(_delta: float) -> void:
	if lipsync == null:
		return
	# what is heard now (Godot's recipe for syncing to audio: the mix's position, less the output's latency)
	var now = $Player.get_playback_position() + AudioServer.get_time_since_last_mix() - AudioServer.get_output_latency()
	var bytes_per_frame = 2 * wav.channels
	var wanted = min(wav.pcm.size(), int((now + AHEAD_SECONDS) * wav.rate) * bytes_per_frame)
	if wanted > pushed_bytes:
		var update = lipsync.push_int16(wav.pcm.subarray(pushed_bytes, wanted - 1), wav.rate, wav.channels)
		pushed_bytes = wanted
		take(update)
	if pushed_bytes == wav.pcm.size() and not finished:
		finished = true
		take(lipsync.finish())
	$Mouth.shape = shape_at(now)


func take(update) -> void:
	if update == null:
		push_error(lipsync.get_error())
		return
	cues += update.cues
	for frame in range(update.num_frames):
		var best = 0
		for shape in range(update.num_shapes):
			if update.weights[frame * update.num_shapes + shape] > update.weights[frame * update.num_shapes + best]:
				best = shape
		frame_shapes.append(shapes[best])


func shape_at(seconds: float) -> String:
	for cue in cues:
		if cue.start <= seconds and seconds < cue.end:
			return cue.shape
	var frame = int(seconds * 100)
	return frame_shapes[frame] if frame >= 0 and frame < frame_shapes.size() else $Mouth.shape
