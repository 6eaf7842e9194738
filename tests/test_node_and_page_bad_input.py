"""What bad input gets from the Node entry points (export/node/) and the browser pages (export/web/): every path
argument refused in one line when it is a device or a pipe, too big, or not UTF-8 text; names such as "constructor"
looked up in a table's own keys only; and the READMEs' JavaScript blocks run as written.

Needs Node.js and `npm ci` in export/node; the page tests also Debian's chromium and chromium-driver and `npm ci` in
export/web (the README's test command installs them)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from test_browser import browser  # noqa: F401  (its fixture: the same headless Chromium, its log kept)

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")
SAMPLE = ROOT / "speechattn" / "runtime" / "samples" / "this-no-longer-appears-to-be-the-case.wav"
SAMPLE_TEXT = "This no longer appears to be the case."
PROTOTYPE_NAMES = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"]


def needs_node_runtime() -> None:
    if not NODE:
        pytest.skip("Node.js is not installed (the README's test command installs it: apt-get install nodejs)")
    if not (ROOT / "export" / "node" / "node_modules" / "onnxruntime-node").exists():
        pytest.skip("onnxruntime-node is not installed: (cd export/node && npm ci)")


def node(*args, cwd: Path = ROOT, timeout: float = 60) -> subprocess.CompletedProcess:
    needs_node_runtime()
    return subprocess.run([NODE, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def one_line_error(result: subprocess.CompletedProcess, status: int, expected: str) -> None:
    assert result.returncode == status and result.stdout == "", (result.returncode, result.stdout[:300], result.stderr)
    assert result.stderr.startswith("error: ") and expected in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr  # no stack trace


@pytest.fixture
def inputs(tmp_path):
    """A FIFO nobody writes to, a directory, texts and dictionaries: Latin-1, over 50 MB (sparse), good ones."""
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    (tmp_path / "latin1.txt").write_bytes("This no longer appears to be the café.\n".encode("latin-1"))
    (tmp_path / "latin1.dict").write_bytes("CAFÉ K AE F EY\n".encode("latin-1"))
    for name in ("huge.txt", "huge.dict"):
        with open(tmp_path / name, "wb") as handle:
            handle.truncate(60_000_000)
    return tmp_path


def unchanged(tmp_path: Path) -> None:
    assert (tmp_path / "fifo").is_fifo() and (tmp_path / "latin1.txt").read_bytes().endswith("café.\n".encode("latin-1"))


# --- every path argument of every Node entry point: a device or a pipe, too big, not UTF-8 ---------------------

FOLLOW_CASES = {  # args after follow.mjs (in: the fixture's folder), the one line
    "audio fifo": (["{in}/fifo", SAMPLE_TEXT], "{in}/fifo: a pipe, not a file; give the audio as a file"),
    "audio /dev/zero": (["/dev/zero", SAMPLE_TEXT], "/dev/zero: a device, not a file; give the audio as a file"),
    "script fifo": ([SAMPLE, "{in}/fifo"], "{in}/fifo: a pipe, not a file; give the script as a file"),
    "script /dev/zero": ([SAMPLE, "/dev/zero"], "/dev/zero: a device, not a file; give the script as a file"),
    "script directory": ([SAMPLE, "{in}/folder"], "{in}/folder: a directory, not a script file"),
    "script over 50 MB": ([SAMPLE, "{in}/huge.txt"], "{in}/huge.txt: more than 50 MB, too big for a script file"),
    "script not UTF-8": ([SAMPLE, "{in}/latin1.txt"],
                         "{in}/latin1.txt: not UTF-8 text (byte 36: 0xe9); save it as UTF-8"),
    "model fifo": ([SAMPLE, SAMPLE_TEXT, "--model", "{in}/fifo"],
                   "{in}/fifo: a pipe, not a file; give the model as a file"),
    "model /dev/zero": ([SAMPLE, SAMPLE_TEXT, "--model", "/dev/zero"],
                        "/dev/zero: a device, not a file; give the model as a file"),
    "dictionary fifo": ([SAMPLE, SAMPLE_TEXT, "--dictionary", "{in}/fifo"],
                        "{in}/fifo: a pipe, not a file; give the dictionary as a file"),
    "dictionary /dev/zero": ([SAMPLE, SAMPLE_TEXT, "--dictionary", "/dev/zero"],
                             "/dev/zero: a device, not a file; give the dictionary as a file"),
    "dictionary directory": ([SAMPLE, SAMPLE_TEXT, "--dictionary", "{in}/folder"],
                             "{in}/folder: a directory, not a dictionary file"),
    "dictionary over 50 MB": ([SAMPLE, SAMPLE_TEXT, "--dictionary", "{in}/huge.dict"],
                              "{in}/huge.dict: more than 50 MB, too big for a dictionary file"),
    "dictionary not UTF-8": ([SAMPLE, SAMPLE_TEXT, "--dictionary", "{in}/latin1.dict"],
                             "{in}/latin1.dict: not UTF-8 text (byte 3: 0xc9); save it as UTF-8"),
    "dictionary missing": ([SAMPLE, SAMPLE_TEXT, "--dictionary", "{in}/none.dict"], "{in}/none.dict: no such file"),
}


@pytest.mark.parametrize("case", sorted(FOLLOW_CASES))
def test_follow_refuses_a_device_a_pipe_a_huge_or_non_utf8_file_in_one_line_with_status_1(inputs, case):
    """--dictionary /dev/zero filled memory and a FIFO hung for ever; a Latin-1 script or dictionary was read with
    U+FFFD in place of its letters, silently."""
    args, expected = FOLLOW_CASES[case]
    result = node("export/node/follow.mjs", *(str(a).replace("{in}", str(inputs)) for a in args), timeout=30)
    one_line_error(result, 1, expected.replace("{in}", str(inputs)))
    unchanged(inputs)


@pytest.mark.parametrize("script, what", [("check-vectors.mjs", "segmenter vectors"),
                                          ("check-align-vectors.mjs", "align vectors"),
                                          ("check-words.mjs", "words vectors")])
@pytest.mark.parametrize("path", ["fifo", "/dev/zero"])
def test_the_check_scripts_refuse_a_device_or_a_pipe_in_one_line(inputs, script, what, path):
    path = str(inputs / path) if path == "fifo" else path
    kind = "a pipe" if path.endswith("fifo") else "a device"
    one_line_error(node(f"export/node/{script}", path, timeout=30), 1, f"{path}: {kind}, not a file; give the {what} as a file")
    unchanged(inputs)


@pytest.mark.parametrize("path", ["fifo", "/dev/zero", "latin1.dict"])
def test_the_lexicon_helper_refuses_a_bad_user_dictionary_in_one_line(inputs, path):
    """lexicon.mjs exits 2 for any error (tests/test_words.py), and now a device or a pipe is one of them."""
    full = str(inputs / path) if path != "/dev/zero" else path
    expected = {"fifo": "a pipe, not a file", "/dev/zero": "a device, not a file", "latin1.dict": "not UTF-8 text"}[path]
    one_line_error(node("export/node/lexicon.mjs", "hello", "--user-dictionary", full, timeout=30), 2,
                   f"{full}: {expected}")


@pytest.mark.parametrize("args, expected", [
    (["--bigram", "{in}/fifo"], "{in}/fifo: a pipe, not a file; give the bigram as a file"),
    (["--bigram", "{in}/latin1.txt"], "{in}/latin1.txt: not UTF-8 text (byte 36: 0xe9); save it as UTF-8"),
    (["--bigram", "{in}/huge.txt"], "{in}/huge.txt: more than 50 MB, too big for a bigram file"),
])
def test_transcribe_reads_the_bigram_with_a_bound(inputs, args, expected):
    result = node("export/node/transcribe.mjs", SAMPLE, *(a.replace("{in}", str(inputs)) for a in args), timeout=30)
    one_line_error(result, 1, expected.replace("{in}", str(inputs)))


def test_a_file_that_grows_past_the_bound_while_read_is_refused_and_utf8_errors_name_the_byte(tmp_path):
    """files.mjs on its own: /proc files say size 0 and still have bytes; a genuine U+FFFD before the bad byte is
    not taken for it."""
    (tmp_path / "text").write_bytes("ok \ufffd then ".encode() + b"\xff")  # bytes 3-5 are U+FFFD itself
    script = f"""
        import {{ readBounded, readUtf8 }} from "./export/node/files.mjs";
        const status = readBounded("/proc/self/status", "status", 100000).toString();
        let error = "accepted";
        try {{ readBounded("/proc/self/status", "status", 10); }} catch (e) {{ error = e.message; }}
        let utf8 = "accepted";
        try {{ readUtf8({json.dumps(str(tmp_path / "text"))}, "text"); }} catch (e) {{ utf8 = e.message; }}
        console.log(JSON.stringify([status.startsWith("Name:"), error, utf8]));
    """
    result = node("--input-type=module", "-e", script)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [True, "/proc/self/status: more than 0.00001 MB, too big for a status file",
                                         f"{tmp_path / 'text'}: not UTF-8 text (byte 12: 0xff); save it as UTF-8"]


# --- names that are also Object.prototype's: looked up in own keys only ------------------------------------------

@pytest.mark.parametrize("name", PROTOTYPE_NAMES)
def test_transcribe_refuses_a_prototype_name_as_a_viseme_set_decoder_or_model_in_one_line(name):
    """--visemes constructor crashed with a TypeError (`name in VISEME_SETS` is true for it); --model constructor
    took `registry.models.constructor.file`, undefined, and crashed."""
    one_line_error(node("export/node/transcribe.mjs", SAMPLE, "--visemes", name), 2,
                   f"--visemes must be one of rhubarb, oculus, vrm, not {name}")
    one_line_error(node("export/node/transcribe.mjs", SAMPLE, "--decoder", name), 2,
                   f"--decoder must be one of bigram, hysteresis, not {name}")
    one_line_error(node("export/node/transcribe.mjs", SAMPLE, "--model", name), 1,
                   f"{name}: no such model file (or bundled model name: default, default-int8, file-int8, multilingual)")
    one_line_error(node("export/node/follow.mjs", SAMPLE, SAMPLE_TEXT, "--model", name), 1,
                   f"{name}: no such model file (or bundled model name: default, default-int8, file-int8, multilingual)")


def test_the_kits_tables_refuse_prototype_names_with_their_own_message():
    """The library under the entry points: viseme sets, a model phone named like a prototype member, align options,
    decoders and HeadAudio's visemes option throw the table's message, not a TypeError or silent garbage."""
    script = f"""
        import {{ CueMaker, frameWeights, shapeColumns }} from "./export/js/visemes.mjs";
        import {{ AlignOptions }} from "./export/js/align.mjs";
        import {{ newSegmenter }} from "./export/js/speechattn.mjs";
        import {{ HeadAudio }} from "./export/js/headaudio.mjs";
        const messages = [];
        const attempt = (make) => {{ try {{ make(); messages.push("accepted"); }} catch (e) {{ messages.push(`${{e.name}}: ${{e.message}}`); }} }};
        for (const name of {json.dumps(PROTOTYPE_NAMES)}) {{
          attempt(() => new CueMaker(name, ["sil"]));
          attempt(() => frameWeights(new Float32Array(1), 1, name, ["sil"]));
          attempt(() => shapeColumns("rhubarb", ["sil", name]));
          attempt(() => new AlignOptions(JSON.parse(`{{"${{name}}": 1}}`)));
          attempt(() => newSegmenter(name, ["sil"], null));
          attempt(() => new HeadAudio({{}}, {{ visemes: name }}));
        }}
        console.log(JSON.stringify(messages));
    """
    result = node("--input-type=module", "-e", script)
    assert result.returncode == 0, result.stderr
    messages = [re.sub(r"\(one of minFrames, .*\)$", "(one of minFrames, ...)", m) for m in json.loads(result.stdout)]
    for i, name in enumerate(PROTOTYPE_NAMES):
        assert messages[6 * i:6 * i + 6] == [
            f"Error: viseme set must be one of rhubarb, oculus, vrm, not {name}",
            f"Error: viseme set must be one of rhubarb, oculus, vrm, not {name}",
            f"Error: the rhubarb viseme set has no shape for {name}",
            f"Error: unknown align option {name} (one of minFrames, ...)",
            f"Error: decoder must be one of bigram, hysteresis, not {name}",
            f"Error: visemes must be one of oculus, vrm, not {name}"], name


def test_words_named_like_prototype_members_are_pronounced_as_python_pronounces_them(tmp_path):
    """The lexicon keeps its tables in Maps: "constructor" comes from CMUdict, "toString" from g2p, a user
    dictionary's "constructor" wins, as in the Python kit; and follow.mjs follows a script holding them."""
    from speechattn_export.words import Lexicon

    text = "constructor toString valueOf hasOwnProperty __proto__ prototype"
    (tmp_path / "user.dict").write_text("CONSTRUCTOR K AH N S T R AH K T ER\nvalueof V AE L Y UW AH V\n")
    for user in (None, tmp_path / "user.dict"):
        args = ["export/node/lexicon.mjs", text] + (["--user-dictionary", str(user)] if user else [])
        result = node(*args)
        assert result.returncode == 0, result.stderr
        ours = [json.loads(line) for line in result.stdout.splitlines()]
        python = Lexicon.load(user).words(text)
        assert [(w["text"], w["spoken"], w["pronunciations"], w["source"]) for w in ours] == [
            (w.text, w.spoken, [list(p) for p in w.pronunciations], w.source) for w in python]
        assert ours[0]["source"] == ("user" if user else "cmudict")
    result = node("export/node/follow.mjs", SAMPLE, text, "--dictionary", tmp_path / "user.dict")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.splitlines()[-1])
    assert summary["type"] == "summary" and summary["words"] == 6


# --- the READMEs' JavaScript blocks, as written ----------------------------------------------------------------

BLOCK = re.compile(r"```(?:js|mjs)\n(.*?)```", re.S)
BROWSER_ONLY = re.compile(r"AudioContext|audioCtx|TalkingHead|onnxruntime-web|renderer\.")


def readme_blocks(relative: str) -> tuple[list[str], list[str]]:
    """(the blocks that run in Node, the browser's) of a README, in order."""
    blocks = BLOCK.findall((ROOT / relative).read_text())
    return [b for b in blocks if not BROWSER_ONLY.search(b)], [b for b in blocks if BROWSER_ONLY.search(b)]


def as_one_module(blocks: list[str]) -> str:
    """The blocks in order, each after a marker line it prints (imports are hoisted, so a marker may precede one)."""
    return "".join(f'console.log("=== block {i}");\n{block}' for i, block in enumerate(blocks))


def printed_blocks(stdout: str) -> list[str]:
    return re.split(r"^=== block \d+\n", stdout, flags=re.M)[1:]


def link(target: Path, source: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(source)


def python_phones(path: Path = SAMPLE) -> list[str]:
    """`speechattn transcribe`'s phones with the model and chunk the READMEs' blocks stream (default.onnx, its 40 ms
    live chunk, one phase; a file with no model named gets the file model over two phases)."""
    import io

    from speechattn.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["transcribe", str(path), "--format", "json", "--model", "default", "--chunk-frames", "4"]) == 0
    return [s["phone"] for s in json.loads(out.getvalue())["segments"]]


def test_the_node_readmes_block_runs_as_written_from_export_node(tmp_path):
    """export/node/README.md's block imported "./speechattn.mjs" (not beside it) and used `fs` without importing it.
    Run from a copy of export/node's place in the repository (links to the real folders), it prints the phones
    `speechattn transcribe` finds in the recording it names."""
    needs_node_runtime()
    node_blocks, browser_blocks = readme_blocks("export/node/README.md")
    assert len(node_blocks) == 1 and not browser_blocks
    here = tmp_path / "repo" / "export" / "node"
    link(here / "node_modules", ROOT / "export" / "node" / "node_modules")
    for name in ("js", "models"):
        link(tmp_path / "repo" / "export" / name, ROOT / "export" / name)
    link(tmp_path / "repo" / "speechattn", ROOT / "speechattn")
    (here / "app.mjs").write_text(node_blocks[0])
    result = node("app.mjs", cwd=here, timeout=120)
    assert result.returncode == 0, result.stderr
    printed = [line.split(" ", 1)[0] for line in result.stdout.splitlines() if re.match(r"^[A-Za-z]+ \{", line)]
    assert printed == python_phones()


def test_the_js_readmes_blocks_run_in_node_as_one_module_as_written(tmp_path):
    """export/js/README.md's blocks, in order, in an app that has the package as `speechattn` and the files the page
    says to bring: the alignment block used an undefined `durationSeconds`, the follow-along block an undefined
    `lexicon` and `framesAsTheyCome`."""
    needs_node_runtime()
    node_blocks, browser_blocks = readme_blocks("export/js/README.md")
    assert len(node_blocks) == 4 and len(browser_blocks) == 2
    app = tmp_path / "app"
    link(app / "node_modules" / "speechattn", ROOT / "export" / "js")
    link(app / "node_modules" / "onnxruntime-node", ROOT / "export" / "node" / "node_modules" / "onnxruntime-node")
    for name, source in {"default.onnx": "export/models/default.onnx", "phone-bigram.json": "export/models/phone-bigram.json",
                         "g2p.onnx": "export/models/g2p.onnx", "cmudict.txt.gz": "export/lexicon/cmudict.txt.gz"}.items():
        link(app / name, ROOT / source)
    link(app / "speech.wav", SAMPLE)
    (app / "package.json").write_text('{"name": "app", "version": "1.0.0", "type": "module"}')
    (app / "app.mjs").write_text(as_one_module(node_blocks))
    result = node("app.mjs", cwd=app, timeout=180)
    assert result.returncode == 0, result.stderr
    phones, cues, aligned, followed = printed_blocks(result.stdout)
    assert phones.split() == python_phones()
    cue_lines = [line.split() for line in cues.splitlines()]
    assert len(cue_lines) >= 5 and all(shape in "ABCDEFGHX" and int(a) < int(b) for a, b, shape in cue_lines)
    # offline options: the words come at finish(), as alignmentDicts' objects (console.log's layout)
    assert re.findall(r"word: '(\w+)'", aligned) == ["hello", "world"] and "phones: [" in aligned, aligned
    heard = re.findall(r"word: '([^']+)'", followed)
    assert heard[:8] == SAMPLE_TEXT.rstrip(".").split(), followed


def test_the_js_readmes_browser_blocks_parse_and_import_what_the_package_exports(tmp_path):
    """The HeadAudio blocks need a browser, TalkingHead and three-vrm: here they are parsed as modules, and every
    name they import from `speechattn/...` is one that module exports (HeadAudio and CAPTURE_WORKLET_URL)."""
    needs_node_runtime()
    _, browser_blocks = readme_blocks("export/js/README.md")
    app = tmp_path / "app"
    link(app / "node_modules" / "speechattn", ROOT / "export" / "js")
    (app / "package.json").write_text('{"name": "app", "version": "1.0.0", "type": "module"}')
    for i, block in enumerate(browser_blocks):
        (app / f"block{i}.mjs").write_text(block)
        checked = node("--check", f"block{i}.mjs", cwd=app)
        assert checked.returncode == 0, checked.stderr
        for names, module in re.findall(r'import \{([^}]*)\} from "(speechattn[^"]*)"', block):
            wanted = [n.strip() for n in names.split(",")]
            probe = f"import * as m from {json.dumps(module)}; console.log(JSON.stringify(Object.keys(m)));"
            found = node("--input-type=module", "-e", probe, cwd=app)
            assert found.returncode == 0, found.stderr
            assert set(wanted) <= set(json.loads(found.stdout)), (module, wanted)


def test_the_web_readme_has_no_javascript_block_to_run():
    """export/web/README.md shows commands and URLs only; a block added there must be added to these tests."""
    assert readme_blocks("export/web/README.md") == ([], [])


# --- npm ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("folder", ["node", "web"])
def test_npm_ci_installs_with_no_warning_and_no_install_script(tmp_path, folder):
    """export/node/.npmrc held `onnxruntime-node-install=skip`, which npm 11 calls an unknown project config and
    will stop reading; npm 11 also warns of every dependency's install script not reviewed.  `ignore-scripts` is
    a setting every npm knows: no warning, and onnxruntime-node's CUDA download never runs (its CPU binary is in the
    package).  Installed from npm's cache into a copy, so the tree others use is not touched."""
    npm = shutil.which("npm")
    if not npm or not (ROOT / "export" / folder / "node_modules").exists():
        pytest.skip("npm, or the packages in npm's cache, are missing: (cd export/node && npm ci)")
    for name in ("package.json", "package-lock.json", ".npmrc"):
        shutil.copy(ROOT / "export" / folder / name, tmp_path / name)
    result = subprocess.run([npm, "ci", "--offline", "--no-audit", "--no-fund"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300)
    if result.returncode != 0 and "ENOTCACHED" in result.stderr:
        pytest.skip("the packages are not in npm's cache")
    assert result.returncode == 0, result.stderr
    assert "warn" not in (result.stdout + result.stderr).lower(), result.stdout + result.stderr
    if folder == "node":
        binaries = tmp_path / "node_modules" / "onnxruntime-node" / "bin" / "napi-v6" / "linux" / "x64"
        assert (binaries / "onnxruntime_binding.node").exists()
        assert not (binaries / "libonnxruntime_providers_cuda.so").exists()


# --- the pages ------------------------------------------------------------------------------------------------

@contextlib.contextmanager
def serving():
    """`speechattn web`'s server on a port of its own (a new origin: Chromium asks a new origin for its icon)."""
    import threading

    from speechattn.errors import SpeechattnError
    from speechattn.runtime.web import make_server

    try:
        server, url = make_server("127.0.0.1", 0)
    except SpeechattnError as error:  # onnxruntime-web not installed beside the page
        pytest.skip(str(error))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def server():
    with serving() as url:
        yield url


def page_state(browser, name: str, states: set[str], seconds: float = 60.0) -> dict:  # noqa: F811
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        state = browser.execute_script(f"return window.{name} && {{status: window.{name}.status, "
                                       f"error: window.{name}.error}}")
        if state and (state["status"] in states or state["status"] == "error"):
            return state
        time.sleep(0.2)
    raise AssertionError(f"the page did not reach {states}: {browser.find_element('id', 'status').text}")


@pytest.mark.slow
@pytest.mark.parametrize("page, name", [("", "speechattn"), ("avatar.html", "avatar")])
def test_the_pages_load_with_nothing_missing_in_the_browser_log(browser, page, name):  # noqa: F811
    """Every load asked for /favicon.ico and logged its 404; the pages now carry their icon inline."""
    with serving() as server:
        browser.get_log("browser")  # what earlier pages logged
        browser.get(server + page)
        assert page_state(browser, name, {"ready"})["status"] == "ready"
        time.sleep(1.0)  # the icon is asked for after the load
        log = browser.get_log("browser")
    assert not [entry for entry in log if "404" in entry["message"] or entry["level"] == "SEVERE"], log


@pytest.mark.slow
@pytest.mark.parametrize("value", PROTOTYPE_NAMES)
def test_the_pages_refuse_a_prototype_name_in_their_parameters_with_a_clear_message(browser, server, value):  # noqa: F811
    """avatar.html?visemes=constructor threw a TypeError inside loadModel once a sound started (VISEME_SETS'
    "constructor" is Object); now the page says so as it loads.  index.html?model=constructor names the model it
    could not find, and ?threads=constructor is refused rather than handed to onnxruntime-web as NaN threads."""
    browser.get(server + f"avatar.html?visemes={value}")
    state = page_state(browser, "avatar", {"ready"})
    assert state == {"status": "error", "error": f"?visemes={value}: must be one of oculus, vrm"}, state
    assert browser.find_element("id", "sample").get_attribute("disabled") == "true"
    browser.get(server + f"?model={value}")
    state = page_state(browser, "speechattn", {"ready"})
    assert state["status"] == "error" and state["error"].startswith(f"?model={value}: no such model ("), state
    browser.get(server + f"?threads={value}")
    state = page_state(browser, "speechattn", {"ready"})
    assert state == {"status": "error", "error": f"?threads={value}: must be a whole number from 1 to 999"}, state


@pytest.mark.parametrize("script, args, expected", [
    ("transcribe.mjs", [SAMPLE, SAMPLE], "give one AUDIO.wav, not 2 (node transcribe.mjs --help)"),
    ("transcribe.mjs", [], "give one AUDIO.wav, not 0"),
    ("transcribe.mjs", [""], "the audio path is empty"),
    ("follow.mjs", [SAMPLE], "give AUDIO.wav and TEXT, not 1 argument(s)"),
    ("follow.mjs", [SAMPLE, "missing.txt"], "missing.txt: no such script file"),  # was followed as the word
    ("follow.mjs", [SAMPLE, "some/file"], "some/file: no such script file"),
])
def test_a_wrong_command_line_is_one_line_on_stderr_not_the_usage_on_stdout(script, args, expected):
    """The usage text went to standard output (into the user's JSON file), with nothing on the terminal."""
    result = node(ROOT / "export" / "node" / script, *args)
    one_line_error(result, 1 if expected.startswith(("the audio", "missing", "some")) else 2, expected)
    helped = node(ROOT / "export" / "node" / script, "--help")
    assert helped.returncode == 0 and helped.stdout.startswith(f"usage: node {script}") and helped.stderr == ""
