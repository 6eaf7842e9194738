# A mouth of one polygon whose width and opening follow Rhubarb's shapes (A-F, and G, H, X): the lips as an ellipse,
# the teeth as a bar where the shape shows them.
extends Node2D

const SIZES = {  # shape: [width, opening] in pixels
	"X": [60.0, 4.0],   # rest
	"A": [58.0, 2.0],   # closed: M B P
	"B": [64.0, 10.0],  # slightly open, teeth together: K S T and most consonants
	"C": [66.0, 24.0],  # open: EH AE
	"D": [70.0, 40.0],  # wide open: AA
	"E": [48.0, 26.0],  # slightly rounded: AO ER
	"F": [30.0, 20.0],  # puckered: UW OW W
	"G": [60.0, 8.0],   # upper teeth on the lower lip: F V
	"H": [62.0, 18.0],  # tongue up: L
}

var shape = "X" setget set_shape


func set_shape(value: String) -> void:
	if value != shape and SIZES.has(value):
		shape = value
		update()


func _draw() -> void:
	var size = SIZES[shape]
	var lips = PoolVector2Array()
	for i in range(32):
		var angle = TAU * i / 32
		lips.append(Vector2(cos(angle) * size[0] / 2, sin(angle) * size[1] / 2 + size[1] / 4))
	draw_colored_polygon(lips, Color(0.55, 0.1, 0.15))
	if shape in ["B", "C", "G"]:
		draw_rect(Rect2(-size[0] / 4, -size[1] / 4, size[0] / 2, max(2.0, size[1] / 4)), Color(0.95, 0.95, 0.9))
