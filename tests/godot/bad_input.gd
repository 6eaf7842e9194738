extends SceneTree
# Bad inputs to SpeechattnLipSync: each line says what the binding answered (the library's status and message).
const LipSync = preload("res://speechattn_lipsync.gdns")

func _init():
	var args = Array(OS.get_cmdline_args())
	var model = args[args.find("--") + 1]
	var lipsync = LipSync.new()
	print("missing model: ", lipsync.load_model(model + ".missing"), " ", lipsync.get_error_code(), " ",
		lipsync.get_error())
	print("push before a model: ", lipsync.push(PoolRealArray([0.0]), 16000), " ", lipsync.get_error_code())
	print("unknown visemes: ", lipsync.load_model(model, {"visemes": "nope"}), " ", lipsync.get_error_code(), " ",
		lipsync.get_error())
	print("loaded: ", lipsync.load_model(model))
	var nan = PoolRealArray()
	for i in range(1600):
		nan.append(NAN)
	print("nan: ", typeof(lipsync.push(nan, 16000)), " ", lipsync.get_duration())
	print("beyond 2: ", lipsync.push(PoolRealArray([0.0, 1000.0]), 16000), " ", lipsync.get_error_code(), " ",
		lipsync.get_error())
	print("wrong type: ", lipsync.push("samples", 16000), " ", lipsync.get_error_code(), " ", lipsync.get_error())
	print("odd bytes: ", lipsync.push_int16(PoolByteArray([1, 2, 3]), 16000), " ", lipsync.get_error_code())
	print("finish: ", typeof(lipsync.finish()))
	print("push after finish: ", lipsync.push(PoolRealArray([0.0]), 16000), " ", lipsync.get_error_code(), " ",
		lipsync.get_error())
	print("finish twice: ", lipsync.finish(), " ", lipsync.get_error_code())
	print("restart: ", lipsync.restart(), " ", typeof(lipsync.push(PoolRealArray([0.0]), 16000)))
	quit()
