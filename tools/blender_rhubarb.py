"""The Blender Rhubarb Lipsync add-on (scaredyfish/blender-rhubarb-lipsync), run unchanged against speechattn-rhubarb.

    python tools/blender_rhubarb.py [--addon DIR|ZIP|GITDIR] [--rhubarb PATH] [--audio WAV] [--keep DIR]
Needs blender (Debian's 3.4.1: the add-on uses the legacy pose library, which Blender 3.5 removed) and, unless
--no-xvfb, xvfb-run (apt-get install blender xvfb xauth).  Without --addon it clones the add-on from GitHub.

What it does:
  1. installs the add-on's files, as its release zip lays them out (scripts/addons/blender-rhubarb-lipsync), in a
     temporary scripts folder (BLENDER_USER_SCRIPTS), with a temporary config folder: the user's Blender is untouched;
  2. starts Blender with its window on a virtual X server (Xvfb) and this same file as the --python script.  Not
     `blender -b`: the add-on's operator is modal, woken by a window-manager timer, and a background Blender has no
     event loop, so the operator would never be called back.  Inside Blender this file then, as a user would:
     enables the add-on; sets its preference "Rhubarb lipsync executable"; adds an armature, enters pose mode,
     selects its bone and builds a pose library of nine poses (one per Rhubarb shape A-H and X, told apart by the
     bone's height); picks them in the add-on's panel, with the sound file and start frame; and presses the panel's
     button (the operator invoked in the Properties editor's context).  The real event loop then runs the operator:
     it starts the command, waits for it on its timer, reads its JSON and keys the bone;
  3. checks the result against `speechattn-rhubarb -f json` run here on the same file: the add-on called the command
     with the arguments it passes to Rhubarb; the operator finished; it read every cue (start and shape) the command
     reports; and the armature's action has keys at exactly the frames the add-on's rule gives for those cues
     (round(start * fps) + start frame, plus its "hold" key of the previous shape 4 frames before a cue that comes
     more than 4 frames after the last key), each holding the pose of the cue's shape.

The preference names a small wrapper in the temporary folder that records its arguments and execs speechattn-rhubarb:
the add-on chmods the file it runs to 0744 (meant for the binary its zip ships), which would otherwise change the
installed command's mode (or fail, where the command is not the user's own).

Exit status 0 when every check passes, 1 otherwise (the reason on stderr).  The add-on itself is not modified.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ADDON_URL = "https://github.com/scaredyfish/blender-rhubarb-lipsync.git"
ADDON_COMMIT = "b6631c7ced4f69ea216a34e1651e7571d365304d"  # 2023-09-22, the repository's last commit; add-on 3.0.1
ADDON_MODULE = "blender-rhubarb-lipsync"  # the folder name in the add-on's release zips (its package.sh)
SAMPLE = ROOT / "speechattn" / "runtime" / "samples" / "this-no-longer-appears-to-be-the-case.wav"
SHAPES = "ABCDEFGHX"
HOLD_FRAMES = 4  # RhubarbLipsyncOperator.hold_frame_threshold


class CheckFailed(Exception):
    pass


# --- inside Blender ---------------------------------------------------------------------------------------------------

def blender_main(config_path: str) -> None:
    """Runs in Blender (this file given to --python): set the scene up, press the button, wait, write what was keyed."""
    import gc
    import traceback

    import addon_utils
    import bpy

    config = json.loads(Path(config_path).read_text())
    state = {"waited": 0.0, "invoked": None}
    step = 0.25

    def finish(result: dict) -> None:
        result.update(blender=bpy.app.version_string, invoked=state["invoked"])
        Path(config["result"]).write_text(json.dumps(result, indent=1))
        bpy.ops.wm.quit_blender()

    def window_area(kind: str):
        window = bpy.context.window_manager.windows[0]
        area = next(area for area in window.screen.areas if area.type == kind)
        region = next(region for region in area.regions if region.type == "WINDOW")
        return dict(window=window, screen=window.screen, area=area, region=region)

    def set_up() -> None:
        addon_utils.enable(ADDON_MODULE, default_set=True)
        if ADDON_MODULE not in bpy.context.preferences.addons:
            raise RuntimeError(f"the add-on {ADDON_MODULE} could not be enabled (see Blender's output)")
        module = sys.modules[ADDON_MODULE]
        # Edit > Preferences > Add-ons > Rhubarb Lipsync: the executable (the recognizer stays at its default).
        preferences = bpy.context.preferences.addons[ADDON_MODULE].preferences
        preferences.executable_path = config["executable"]

        with bpy.context.temp_override(**window_area("VIEW_3D")):
            bpy.ops.object.select_all(action="DESELECT")
            bpy.ops.object.armature_add(location=(0, 0, 0))
            armature = bpy.context.object
            bpy.ops.object.mode_set(mode="POSE")
            bpy.ops.pose.select_all(action="SELECT")
            bone = armature.pose.bones[0]
            # The pose library: one pose per shape, the bone raised by (i + 1) / 10 for the i-th.
            bpy.ops.poselib.new()
            library = armature.pose_library
            for index, shape in enumerate(SHAPES):
                bone.location = (0.0, 0.0, (index + 1) / 10)
                bpy.ops.poselib.pose_add(frame=index + 1, name=f"Mouth {shape}")
            bone.location = (0.0, 0.0, 0.0)
            # The add-on's panel (Properties > Armature data): a pose per Rhubarb shape, the sound, the start frame.
            for shape in SHAPES:
                setattr(library.mouth_shapes, f"mouth_{shape.lower()}", f"Mouth {shape}")
            library.mouth_shapes.sound_file = config["audio"]
            library.mouth_shapes.start_frame = config["start_frame"]
        bpy.context.scene.render.fps, bpy.context.scene.render.fps_base = config["fps"], 1.0
        # The Properties editor shows the armature's data tab, where the add-on's panel is.
        window_area("PROPERTIES")["area"].spaces.active.context = "DATA"
        state["armature"], state["library"], state["module"] = armature.name, library.name, module

    def press() -> None:
        """The panel's "Rhubarb lipsync" button: the operator invoked in the Properties editor's context (once the
        editor has been redrawn, so that its context is the new armature, as it is for a user)."""
        with bpy.context.temp_override(**window_area("PROPERTIES")):
            if bpy.context.object is None or bpy.context.object.name != state["armature"]:
                raise RuntimeError(f"the Properties editor shows {bpy.context.object}, not the armature")
            if not bpy.ops.object.rhubarb_lipsync.poll():
                raise RuntimeError("the add-on's button is disabled (its operator's poll() is False)")
            state["invoked"] = sorted(bpy.ops.object.rhubarb_lipsync("INVOKE_DEFAULT"))
        if state["invoked"] == ["RUNNING_MODAL"] and not running():
            raise RuntimeError("the running operator cannot be seen (no live instance of its class)")

    def running() -> bool:
        """Whether the operator is still modal: Blender keeps its Python instance until modal() has returned
        FINISHED or CANCELLED.  (A modal operator's end is not listed in window_manager.operators.)"""
        operator_class = state["module"].op_blender_rhubarb.RhubarbLipsyncOperator
        definition = operator_class.__dict__.get("bl_rna")  # the class's RNA definition is of the class too
        return any(type(thing) is operator_class and thing is not definition for thing in gc.get_objects())

    def keyed() -> dict:
        armature = bpy.data.objects[state["armature"]]
        library = bpy.data.actions[state["library"]]
        action = armature.animation_data.action if armature.animation_data else None
        module = state["module"]
        return dict(
            addon_version=".".join(map(str, module.bl_info["version"])), addon_name=module.bl_info["name"],
            fps=bpy.context.scene.render.fps, start_frame=library.mouth_shapes.start_frame,
            # what the operator looks up: mouth_shapes['mouth_a'] is the pose's index among the library's markers
            pose_index={shape: library.mouth_shapes[f"mouth_{shape.lower()}"] for shape in SHAPES},
            poses=[dict(name=marker.name, frame=marker.frame,
                        height=library.fcurves.find('pose.bones["Bone"].location', index=2).evaluate(marker.frame))
                   for marker in library.pose_markers],
            fcurves=[dict(path=curve.data_path, index=curve.array_index,
                          keys=[list(point.co) for point in curve.keyframe_points])
                     for curve in (action.fcurves if action else [])],
            ended=not running(), waited=state["waited"])

    def tick():
        try:
            if "armature" not in state:
                set_up()
                return step
            if state["invoked"] is None:
                press()
                if state["invoked"] != ["RUNNING_MODAL"]:
                    finish(dict(error=f"the operator's invoke returned {state['invoked']}, not RUNNING_MODAL"))
                    return None
                return step
            if not running():
                finish(keyed())
                return None
            state["waited"] += step
            if state["waited"] > config["wait"]:
                finish(dict(keyed(), error=f"the operator had not finished after {config['wait']} s"))
                return None
            return step
        except Exception:
            finish(dict(error=traceback.format_exc()))
            return None

    bpy.app.timers.register(tick, first_interval=1.0)  # once the window is up


# --- outside Blender --------------------------------------------------------------------------------------------------

def install_addon(source: str | None, commit: str, scripts: Path) -> str:
    """The add-on's files into scripts/addons/ADDON_MODULE; returns where they came from."""
    target = scripts / "addons" / ADDON_MODULE
    target.parent.mkdir(parents=True)
    if source is None:  # a clone of the pinned commit
        clone = scripts.parent / "addon-clone"
        if subprocess.run(["git", "clone", "-q", ADDON_URL, str(clone)]).returncode != 0:
            raise CheckFailed(f"could not clone {ADDON_URL}: give the add-on with --addon")
        source = str(clone)
    path = Path(source)
    if path.is_file() and zipfile.is_zipfile(path):  # a release zip: blender-rhubarb-lipsync/{*.py,bin/...}
        with zipfile.ZipFile(path) as archive:
            archive.extractall(scripts / "zip")
        folder = next((init.parent for init in sorted((scripts / "zip").rglob("__init__.py"))), None)
        if folder is None:
            raise CheckFailed(f"{path}: no add-on (__init__.py) in the zip")
        shutil.move(str(folder), target)
        return f"{path.name}"
    if (path / "__init__.py").exists() and not (path / ".git").exists():  # an unpacked folder, taken as it is
        shutil.copytree(path, target)
        return f"{path}"
    git = ["git", "--git-dir", str(path)] if (path / "objects").is_dir() else ["git", "-C", str(path)]
    try:
        full = subprocess.run([*git, "rev-parse", "--verify", f"{commit}^{{commit}}"], check=True,
                              capture_output=True, text=True).stdout.strip()
        archive = subprocess.run([*git, "archive", "--format=tar", full], check=True, capture_output=True).stdout
    except subprocess.CalledProcessError as error:
        raise CheckFailed(f"{source}: not the add-on's folder, zip or git repository with commit {commit} "
                          f"({error.stderr.strip() if isinstance(error.stderr, str) else error})") from None
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(target, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    return f"commit {full}"


def write_wrapper(path: Path, command: str, arguments_file: Path) -> None:
    """The executable the add-on is pointed at: records its arguments, then becomes the real command."""
    path.write_text(f"#!{sys.executable}\n"
                    "import json, os, sys\n"
                    f"open({str(arguments_file)!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
                    f"os.execv({command!r}, [{command!r}, *sys.argv[1:]])\n")
    path.chmod(0o755)


def expected_keys(cues: list[dict], fps: int, start_frame: int) -> dict[int, str]:
    """The add-on's modal(): frame -> shape keyed there (a later key at a frame replaces an earlier one)."""
    keys, last_frame, previous = {}, 0, None
    for cue in cues:
        frame = round(cue["start"] * fps) + start_frame
        if frame - last_frame > HOLD_FRAMES:
            keys[frame - HOLD_FRAMES] = previous  # None: the library's first pose (index 0), as the add-on starts
        keys[frame] = cue["value"]
        previous, last_frame = cue["value"], frame
    return keys


def check(result: dict, reference: dict | str, called: list[str] | None, audio: Path, log: str) -> list[str]:
    """What the add-on did, compared with the command's own output; returns the summary lines."""
    if "error" in result:
        raise CheckFailed(f"in Blender: {result['error']}")
    expected_call = ["-f", "json", "--machineReadable", "--extendedShapes", "GHX", "-r", "pocketSphinx", str(audio)]
    if called != expected_call:
        raise CheckFailed(f"the add-on called the command with {called}, expected {expected_call}")
    if not result["ended"]:
        raise CheckFailed("the operator did not finish")
    for complaint in ("Error!!!", "An exception of type"):  # what its modal() prints where it cancels
        if complaint in log:
            raise CheckFailed(f"the operator printed {complaint!r}")
    if isinstance(reference, str):
        raise CheckFailed(reference)
    cues = reference["mouthCues"]
    # The add-on prints "start: S frame: F value: V" for each cue it read from the command's stdout.
    read = [(float(start), value) for start, _, value in
            re.findall(r"^start: (\S+) frame: (\S+) value: (\S+)$", log, re.MULTILINE)]
    if read != [(cue["start"], cue["value"]) for cue in cues]:
        raise CheckFailed(f"the add-on read the cues {read}, the command reports "
                          f"{[(cue['start'], cue['value']) for cue in cues]}")

    fps, start_frame = result["fps"], result["start_frame"]
    keys = expected_keys(cues, fps, start_frame)
    heights = [pose["height"] for pose in result["poses"]]
    height_of = {shape: heights[result["pose_index"][shape]] for shape in SHAPES}
    height_of[None] = heights[0]
    if sorted(height_of[shape] for shape in SHAPES) != sorted(heights) or len(set(heights)) != len(SHAPES):
        raise CheckFailed(f"the pose library is not one distinct pose per shape: {result['poses']}")
    curves = result["fcurves"]
    channels = {(curve["path"], curve["index"]) for curve in curves}
    wanted = {('pose.bones["Bone"].' + path, index) for path, count in
              (("location", 3), ("rotation_quaternion", 4), ("scale", 3)) for index in range(count)}
    if channels != wanted:
        raise CheckFailed(f"keyed channels {sorted(channels)}, expected the bone's location, rotation and scale")
    for curve in curves:
        frames = [frame for frame, _ in curve["keys"]]
        if frames != sorted(keys):
            raise CheckFailed(f"{curve['path']}[{curve['index']}] is keyed at frames {frames}, "
                              f"expected {sorted(keys)}")
    height = next(curve for curve in curves if curve["path"].endswith(".location") and curve["index"] == 2)
    for frame, value in height["keys"]:
        shape = keys[int(frame)]
        if abs(value - height_of[shape]) > 1e-6:
            raise CheckFailed(f"frame {frame:g} holds height {value:g}, not the pose of shape {shape} "
                              f"({height_of[shape]:g})")

    cue_frames = {round(cue["start"] * fps) + start_frame for cue in cues}
    shown = ", ".join(f"{cue['start']:.2f} {cue['value']} -> frame {round(cue['start'] * fps) + start_frame}"
                      for cue in cues[:5])
    return [
        f"the add-on ran: {audio.name} given as {' '.join(expected_call[:-1])} FILE",
        f"speechattn-rhubarb -f json: {len(cues)} cues over {reference['metadata']['duration']:.2f} s; "
        f"the add-on read the same {len(read)}",
        f"keyframes: {len(keys)} frames on each of the bone's {len(curves)} channels at {fps} fps from frame "
        f"{start_frame} ({len(cue_frames)} cue frames, {len(keys) - len(cue_frames)} hold keys), "
        f"each frame holding its shape's pose",
        f"first cues: {shown}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Run the Blender Rhubarb Lipsync add-on, unchanged, against speechattn-rhubarb and check the "
                    "keyframes it makes against the command's own cues.",
        epilog="Needs blender (3.4: the add-on uses the legacy pose library) and xvfb-run: "
               "apt-get install blender xvfb xauth.")
    parser.add_argument("--addon", help="the add-on: its folder, a release zip, or a git repository (a clone or a "
                                        f"bare one) holding --commit; default: a clone of {ADDON_URL}")
    parser.add_argument("--commit", default=ADDON_COMMIT, help="the add-on's commit, for a git repository "
                                                               "(default: %(default)s)")
    parser.add_argument("--rhubarb", help="the command the add-on runs (default: speechattn-rhubarb on PATH, or "
                                          "beside this Python)")
    parser.add_argument("--blender", default=shutil.which("blender"), help="Blender (default: %(default)s)")
    parser.add_argument("--audio", type=Path, default=SAMPLE, help="the sound file (default: %(default)s)")
    parser.add_argument("--fps", type=int, default=24, help="the scene's frame rate (default: %(default)s)")
    parser.add_argument("--start-frame", type=int, default=1, help="the panel's start frame (default: %(default)s)")
    parser.add_argument("--no-xvfb", action="store_true", help="open Blender's window on $DISPLAY, not on Xvfb")
    parser.add_argument("--timeout", type=float, default=300, help="seconds Blender may take (default: %(default)s)")
    parser.add_argument("--keep", type=Path, help="work in this (new) folder and keep it: the add-on, the "
                                                  "wrapper, Blender's log, the result")
    args = parser.parse_args(argv)

    try:
        command = args.rhubarb or shutil.which("speechattn-rhubarb") or str(Path(sys.executable).with_name(
            "speechattn-rhubarb"))
        if not Path(command).is_file():
            raise CheckFailed(f"{command}: no such command (pip install -e . installs speechattn-rhubarb)")
        if not args.blender:
            raise CheckFailed("blender is not on PATH (apt-get install blender)")
        xvfb = None if args.no_xvfb else shutil.which("xvfb-run")
        if not args.no_xvfb and not xvfb:
            raise CheckFailed("xvfb-run is not on PATH (apt-get install xvfb xauth), and the add-on's modal operator "
                              "needs Blender's event loop, which `blender -b` does not run; or use --no-xvfb")
        audio = args.audio.resolve()
        command = str(Path(command).resolve())
        if args.keep:
            args.keep.mkdir(parents=True)
            return run(args, args.keep.resolve(), command, xvfb, audio)
        with tempfile.TemporaryDirectory(prefix="blender-rhubarb-") as work:
            return run(args, Path(work), command, xvfb, audio)
    except CheckFailed as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        return 1


def run(args, work: Path, command: str, xvfb: str | None, audio: Path) -> int:
    version = subprocess.run([args.blender, "-b", "--factory-startup", "--version"], capture_output=True, text=True,
                             timeout=120).stdout.splitlines()
    addon_from = install_addon(args.addon, args.commit, work / "scripts")
    wrapper, called_file = work / "bin" / "speechattn-rhubarb", work / "arguments.json"
    wrapper.parent.mkdir()
    write_wrapper(wrapper, command, called_file)
    config, result_file, log_file = work / "config.json", work / "result.json", work / "blender.log"
    config.write_text(json.dumps(dict(executable=str(wrapper), audio=str(audio), fps=args.fps,
                                      start_frame=args.start_frame, result=str(result_file),
                                      wait=max(10.0, args.timeout - 60))))
    for folder in ("config", "tmp"):
        (work / folder).mkdir()
    environment = dict(os.environ, BLENDER_USER_SCRIPTS=str(work / "scripts"), BLENDER_USER_CONFIG=str(work / "config"),
                       TMPDIR=str(work / "tmp"), TEMP=str(work / "tmp"))
    blender = [args.blender, "--factory-startup", "--python", str(Path(__file__).resolve()), "--",
               "--in-blender", str(config)]
    if xvfb:
        blender = [xvfb, "-a", "-s", "-screen 0 1280x800x24", *blender]
    try:
        with open(log_file, "w") as log:
            done = subprocess.run(blender, stdout=log, stderr=subprocess.STDOUT, env=environment,
                                  timeout=args.timeout)
    except subprocess.TimeoutExpired:
        raise CheckFailed(f"Blender did not quit within {args.timeout:g} s; its output:\n"
                          f"{log_file.read_text()[-3000:]}") from None
    log = log_file.read_text()
    if not result_file.exists():
        raise CheckFailed(f"Blender exited with status {done.returncode} without a result; its output:\n{log[-3000:]}")
    # The reference: the command's own JSON for the same file.
    done = subprocess.run([command, "-f", "json", str(audio)], capture_output=True, text=True, timeout=300)
    try:
        reference = json.loads(done.stdout)
        reference["mouthCues"]
    except (ValueError, TypeError, KeyError):
        reference = f"{command} -f json {audio} (status {done.returncode}) wrote no Rhubarb JSON: " \
                    f"{(done.stdout or done.stderr)[:300]!r}"
    result = json.loads(result_file.read_text())
    called = json.loads(called_file.read_text()) if called_file.exists() else None
    try:
        lines = check(result, reference, called, audio, log)
    except CheckFailed as failure:
        raise CheckFailed(f"{failure}\nBlender's output (the end):\n{log[-3000:]}") from None
    print(f"{version[0] if version else 'Blender ?'}; add-on {result['addon_name']} {result['addon_version']} "
          f"({addon_from}); command {command}")
    print("\n".join(lines))
    print("OK: the add-on keyed the cues speechattn-rhubarb reported")
    return 0


if __name__ == "__main__":
    if "--in-blender" in sys.argv:  # blender --python tools/blender_rhubarb.py -- --in-blender CONFIG
        blender_main(sys.argv[sys.argv.index("--in-blender") + 1])
    else:
        sys.exit(main())
