# A RIFF WAVE reader for 16-bit PCM files: the rate, the channel count and the samples as the bytes of int16
# little-endian (interleaved), which SpeechattnLipSync.push_int16 and an AudioStreamSample both take as they are.
extends Reference


static func read(path: String) -> Dictionary:
	var file = File.new()
	if file.open(path, File.READ) != OK:
		return {"error": "cannot open " + path}
	var riff = file.get_buffer(4).get_string_from_ascii()
	file.get_32()
	var wave = file.get_buffer(4).get_string_from_ascii()
	if riff != "RIFF" or wave != "WAVE":
		file.close()
		return {"error": path + " is not a RIFF WAVE file"}
	var wav = {}
	while file.get_position() + 8 <= file.get_len():
		var id = file.get_buffer(4).get_string_from_ascii()
		var size = file.get_32()
		var next = file.get_position() + size + (size & 1)  # chunks are padded to an even length
		if id == "fmt ":
			var format = file.get_16()
			wav["channels"] = file.get_16()
			wav["rate"] = file.get_32()
			file.get_32()  # bytes per second
			file.get_16()  # block align
			var bits = file.get_16()
			if format != 1 or bits != 16:
				file.close()
				return {"error": "%s: only 16-bit PCM is read here (format %d, %d bits)" % [path, format, bits]}
		elif id == "data":
			wav["pcm"] = file.get_buffer(size)
		file.seek(next)
	file.close()
	if not wav.has("rate") or not wav.has("pcm"):
		return {"error": path + " has no fmt or data chunk"}
	return wav
