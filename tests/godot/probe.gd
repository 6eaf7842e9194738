extends SceneTree
# The demo scene for two seconds of its clip: the shapes its mouth took, one line each.
var main
var shapes = []

func _init():
	main = load("res://main.tscn").instance()
	root.add_child(main)

func _idle(_delta):
	var shape = main.get_node("Mouth").shape
	if shapes.empty() or shapes[-1] != shape:
		shapes.append(shape)
	if main.get_node("Player").get_playback_position() > 2.0 or OS.get_ticks_msec() > 20000:
		for s in shapes:
			print("shape ", s)
		quit()
