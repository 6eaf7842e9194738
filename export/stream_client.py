"""Streaming client for a speechattn ONNX model.  Imports only numpy and onnxruntime.

Everything it needs (sample rate, hop, chunk sizes, phone names, state names, shapes and
dtypes) comes from the model's metadata; nothing about the model is hard-coded here.
Copy this file into your application as it is.

    model = StreamingModel("model.onnx")
    stream = model.new_stream()                 # one per audio source; the model is shared
    for piece in pieces_of_16khz_float32_audio:
        frames = stream.push(piece)             # any size, even 1 sample
        for index, label in zip(frames.frame_indices, frames.labels):
            ...                                 # frame i covers [i*10 ms, (i+1)*10 ms)
    frames = stream.finish()                    # the frames still waiting for their chunk

Many independent sources (a server with many microphones): one graph call steps them all.

    streams = model.new_stream_set()
    streams.add("alice"); streams.add("bob")    # join and leave at any time
    streams.push("alice", piece)                # buffered until a whole chunk is there
    for key, frames in streams.step().items():  # every stream with a whole chunk, one call per chunk
        ...
    last = streams.remove("bob")                # bob's remaining frames

See CONTRACT.md beside this file for the graph's inputs, outputs and metadata.
"""

from __future__ import annotations

import json
import os
import stat
import warnings
from dataclasses import dataclass

import numpy as np

CONTRACT_VERSIONS = ("1", "2")  # the contract versions this client reads (CONTRACT.md): 2 holds a cache a layer
# (kv_cache_0 ..), 1 all layers' in one tensor (kv_cache); nothing below depends on which, every state is generic
MAX_CALL_FRAMES = 256  # largest piece of audio (in hops) handed to one graph call
MAX_THREADS = 256  # num_threads: 1 .. this, as the command line's --threads (None: onnxruntime's default, all cores)
MAX_CHANNELS = 32  # a batch-1 stream takes (samples, channels) arrays of up to this many channels, averaged
# A file's pre-roll (file_preroll): a model whose streams start from empty caches (metadata stream_start "empty":
# trained at full context, such as the bundled file-int8) hears a word at the very start of a file better once it
# has heard the file's loudest second, from its first PREROLL_SEARCH_SECONDS, then PREROLL_GAP_SECONDS of digital
# silence (which moves no level estimate): the stream's level and context are set as by speech before the file.
PREROLL_SECONDS = 1.0
PREROLL_SEARCH_SECONDS = 4.0
PREROLL_GAP_SECONDS = 0.2


def input_file(path, what: str) -> str:
    """`path` as a string when it names a regular file; otherwise ValueError in one line: a device (/dev/zero never
    ends), a pipe (a FIFO's open waits for a writer that may never come), a directory, or nothing there.  Every path
    the kit's public API takes (models, dictionaries, the bigram) goes through here."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise ValueError(f"{path}: no such {what} file") from None
    except (OSError, ValueError, TypeError) as error:  # a name too long, a NUL byte, not a path at all
        raise ValueError(f"{str(path)[:60]}: cannot read the {what} ({getattr(error, 'strerror', None) or error})") \
            from None
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        kind = "a pipe" if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) else "a device"
        raise ValueError(f"{path}: {kind}, not a file; give the {what} as a file")
    if stat.S_ISDIR(mode):
        raise ValueError(f"{path}: a directory, not a {what} file")
    return str(path)


def read_bounded(path, what: str, max_bytes: int) -> bytes:
    """A regular file's bytes (input_file's checks first), at most `max_bytes`: more is a ValueError naming the file,
    found after reading max_bytes + 1, never the whole of a huge file."""
    name = input_file(path, what)
    try:
        with open(name, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as error:
        raise ValueError(f"{path}: cannot read the {what} ({error.strerror or error})") from None
    if len(data) > max_bytes:
        raise ValueError(f"{path}: more than {max_bytes / 1e6:g} MB; not a {what}")
    return data


def check_threads(num_threads) -> int | None:
    """None (onnxruntime's default: all cores) or a thread count from 1 to MAX_THREADS; ValueError otherwise."""
    if num_threads is None:
        return None
    if isinstance(num_threads, bool) or not isinstance(num_threads, (int, np.integer)) or \
            not 1 <= num_threads <= MAX_THREADS:
        raise ValueError(f"num_threads must be from 1 to {MAX_THREADS} (None: all cores), not {num_threads!r}")
    return int(num_threads)


def mono(samples: np.ndarray) -> np.ndarray:
    """One source's audio as (samples,): 1-D as it is; (samples, channels) with 2 .. MAX_CHANNELS channels and more
    samples than channels averaged to mono; (samples, 1) and (1, samples) (the contract's batch of one) as their one
    row or column.  Any other 2-D shape is ambiguous (is (2, 2) two stereo frames or two rows?) or channels-first:
    ValueError naming the shape."""
    if samples.ndim == 1:
        return samples
    if samples.ndim == 2:
        rows, columns = samples.shape
        if columns == 1 or rows * columns == 0:
            return samples.reshape(-1)
        if rows == 1 and columns > MAX_CHANNELS:
            return samples[0]
        if columns <= MAX_CHANNELS and rows > columns:
            return samples.mean(axis=1, dtype=np.float64).astype(np.float32)  # (samples, channels) -> (samples,)
        hint = (" (channels first? pass its transpose, audio.T)" if rows <= MAX_CHANNELS < columns else
                " is ambiguous (frames x channels, or rows of samples?): push mono 1-D audio, or at least one more "
                "frame than channels")
    else:
        hint = ""
    raise ValueError(f"audio must have shape (samples,) or (1, samples), or (samples, channels) with at most "
                     f"{MAX_CHANNELS} channels, got {samples.shape}{hint}")


@dataclass
class Frames:
    """Frames completed by one push: frame_indices (R,), log_probs (R, classes) for batch 1,
    or (B, R, classes) for a batched stream; labels are phone names (batch 1 only)."""

    frame_indices: np.ndarray
    log_probs: np.ndarray
    phones: tuple

    @property
    def posteriors(self) -> np.ndarray:
        return np.exp(self.log_probs)

    @property
    def label_indices(self) -> np.ndarray:
        return self.log_probs.argmax(axis=-1)

    @property
    def labels(self) -> list:
        indices = self.label_indices
        if indices.ndim != 1:
            raise ValueError("labels is for batch-1 streams; use label_indices for a batch")
        return [self.phones[i] for i in indices]

    def __len__(self) -> int:
        return len(self.frame_indices)


# onnxruntime's execution providers whose memory a stream set's state may stay in (I/O binding's device names)
DEVICES = {"CUDAExecutionProvider": "cuda"}
# where a model may be asked to run (serve --provider): onnxruntime's providers, the fallback for what they lack last
PROVIDERS = {"cpu": ["CPUExecutionProvider"], "cuda": ["CUDAExecutionProvider", "CPUExecutionProvider"]}


def providers_for(name: str | None) -> list | None:
    """onnxruntime's providers for "cpu" or "cuda" (None for None: onnxruntime's first available, as
    StreamingModel's default); ValueError in one line when this onnxruntime has no such provider (onnxruntime itself
    would warn and run on the CPU)."""
    import onnxruntime as ort

    if name is None:
        return None
    if name not in PROVIDERS:
        raise ValueError(f"provider {name!r}: one of {', '.join(PROVIDERS)}")
    wanted, available = PROVIDERS[name][0], ort.get_available_providers()
    if wanted not in available:
        offered = ", ".join(p.removesuffix("ExecutionProvider") for p in available)
        raise ValueError(f"this onnxruntime ({ort.__version__}) has no {wanted} (it offers {offered}): for a GPU, "
                         "install onnxruntime-gpu in place of onnxruntime, on a machine with an NVIDIA driver and the "
                         "CUDA libraries it was built for (1.31: CUDA 13)")
    return list(PROVIDERS[name])


class StreamingModel:
    """One loaded model, shared by any number of streams (the session is thread-safe for run())."""

    def __init__(self, path, providers=None, num_threads=None):
        """`path`: the ONNX file (ValueError in one line for a device, a pipe, a directory or nothing there);
        `num_threads`: 1 .. MAX_THREADS onnxruntime threads, None for all cores."""
        import onnxruntime as ort

        num_threads = check_threads(num_threads)
        path = input_file(path, "model")
        options = ort.SessionOptions()
        if num_threads:
            options.intra_op_num_threads = num_threads
            options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(
            str(path), sess_options=options, providers=providers or ort.get_available_providers()
        )
        if providers and self.session.get_providers()[0] != providers[0]:  # onnxruntime fell back to the next one
            raise ValueError(f"{path}: onnxruntime could not start {providers[0]} (its log above says why: the GPU's "
                             "driver, the CUDA or cuDNN libraries) and would run on "
                             f"{self.session.get_providers()[0]}")
        meta = self.session.get_modelmeta().custom_metadata_map
        if meta.get("model_type") != "speechattn-streaming-tagger":
            raise ValueError(f"{path}: not a speechattn streaming model (metadata model_type is missing)")
        if meta.get("contract_version") not in CONTRACT_VERSIONS:
            raise ValueError(f"{path}: contract version {meta.get('contract_version')} but this client reads "
                             f"{' and '.join(CONTRACT_VERSIONS)}")
        self.path = str(path)
        self.metadata = meta
        # where the graph runs: a stream set keeps its streams' state there between calls (run_bound)
        self.device = DEVICES.get(self.session.get_providers()[0], "cpu")
        try:
            self._read_metadata(meta)
        except (KeyError, ValueError, TypeError, AttributeError) as error:
            detail = f"key {error} is missing" if isinstance(error, KeyError) else str(error)
            raise ValueError(f"{path}: its metadata does not describe this graph ({detail})") from None

    def _read_metadata(self, meta) -> None:
        """Every value a client relies on, checked against sane bounds and against the graph itself, so a file whose
        metadata lies fails here with one message instead of hanging or allocating gigabytes later."""
        def number(key, low, high, kind=int):
            try:
                value = kind(meta[key])
            except ValueError:
                raise ValueError(f"{key} = {meta[key]!r} is not {'an integer' if kind is int else 'a number'}") from None
            if not low <= value <= high:
                raise ValueError(f"{key} = {meta[key]} is outside {low}..{high}")
            return value

        self.sample_rate = number("sample_rate", 1000, 192000)
        self.hop_samples = number("hop_samples", 1, 48000)
        self.frame_shift_ms = number("frame_shift_ms", 0.1, 1000.0, float)
        if abs(self.hop_samples * 1000 / self.frame_shift_ms - self.sample_rate) > 0.5:  # the Node client obeys them
            raise ValueError(f"sample_rate = {meta['sample_rate']}, hop_samples = {meta['hop_samples']} and "
                             f"frame_shift_ms = {meta['frame_shift_ms']} disagree ({self.hop_samples} samples every "
                             f"{self.frame_shift_ms:g} ms is {self.hop_samples * 1000 / self.frame_shift_ms:g} Hz)")
        self.phones = tuple(meta["phones"].split(","))
        if len(set(self.phones)) != len(self.phones) or not all(p and p.isprintable() and not any(
                c.isspace() for c in p) for p in self.phones):  # a space or newline breaks CTM and text output
            raise ValueError(f"phones = {json.dumps(meta['phones'][:80])} must be distinct names without spaces or "
                             "newlines")
        if "decoder_lookahead_frames" in meta:
            number("decoder_lookahead_frames", 0, 1000)
        self.allowed_chunk_frames = tuple(int(c) for c in meta["allowed_chunk_frames"].split(","))
        if not self.allowed_chunk_frames or not all(1 <= c <= 4096 for c in self.allowed_chunk_frames):
            raise ValueError(f"allowed_chunk_frames = {meta['allowed_chunk_frames']} must be sizes from 1 to 4096")
        self.default_chunk_frames = int(meta["default_chunk_frames"])
        if self.default_chunk_frames not in self.allowed_chunk_frames:
            raise ValueError(f"default_chunk_frames {self.default_chunk_frames} is not an allowed chunk size")
        # Look-ahead by output delay: the graph's output at frame t labels frame t - R.  Streams drop the first R
        # outputs and flush R frames of silence at the end, so frame i is always the audio's hop i.  0 for files
        # written before the key existed.
        self.output_delay_frames = int(meta.get("output_delay_frames", "0"))
        if not 0 <= self.output_delay_frames <= 1000:
            raise ValueError(f"output_delay_frames = {self.output_delay_frames} is outside 0..1000")
        config = json.loads(meta.get("model_config") or "{}")
        self._check_delay(meta, config)
        subsampling = config.get("frame_subsampling", 1) if isinstance(config, dict) else 1
        # the encoder's step in frames (S): a position stacks S frames, so the same audio S' < S frames later is
        # stacked differently and labelled anew (PhaseStream averages the S phases); 1 for files without the key
        self.frame_subsampling = subsampling if isinstance(subsampling, int) and 1 <= subsampling <= 64 else 1
        # PhaseStream's choices: the counts of evenly spaced shifts within the step (1, 2, 4 for S = 4)
        self.phase_counts = tuple(n for n in range(1, self.frame_subsampling + 1) if self.frame_subsampling % n == 0)
        self.states = json.loads(meta["states"])
        io = json.loads(meta["inputs"])
        self.audio_input, self.chunk_input, self.flush_input = io["audio"], io["chunk_frames"], io["flush"]
        self.log_probs_output = json.loads(meta["outputs"])["log_probs"]
        graph_inputs = {i.name: i for i in self.session.get_inputs()}
        graph_outputs = {o.name for o in self.session.get_outputs()}
        state_outputs = {spec["output"] for spec in self.states}
        if self.log_probs_output not in graph_outputs or self.log_probs_output in state_outputs:
            raise ValueError(f"log_probs output {self.log_probs_output!r} is not the graph's log-probabilities")
        for name in (self.audio_input, self.chunk_input, self.flush_input):
            if name not in graph_inputs:
                raise ValueError(f"input {name!r} is not in the graph")
        elements = 0
        for spec in self.states:
            if spec["name"] not in graph_inputs or spec["output"] not in graph_outputs:
                raise ValueError(f"state {spec['name']!r} / {spec['output']!r} is not in the graph")
            if spec["dtype"] not in ("float32", "int64"):
                raise ValueError(f"state {spec['name']!r} has dtype {spec['dtype']!r} (float32 or int64)")
            sizes = [d for d in spec["shape"] if d != "batch"]
            if not all(isinstance(d, int) and 0 <= d <= 1 << 20 for d in sizes) or spec["shape"].count("batch") != 1:
                raise ValueError(f"state {spec['name']!r} has shape {spec['shape']}")
            declared = graph_inputs[spec["name"]].shape
            if len(declared) != len(spec["shape"]) or any(isinstance(g, int) and isinstance(d, int) and g != d
                                                          for g, d in zip(declared, spec["shape"])):
                raise ValueError(f"state {spec['name']!r}: shape {spec['shape']} in the metadata, {declared} in the graph")
            elements += int(np.prod(sizes))
        if elements > 1 << 26:
            raise ValueError(f"the states hold {elements:,} values per stream (at most {1 << 26:,})")
        self._probe()

    def _check_delay(self, meta, config) -> None:
        """The delay is in no shape of the graph (it is what the weights learnt), so a wrong one would run and shift
        every label R frames (a file shorter than R: nothing but the flushed silence, an empty transcript).  It must
        agree with what the exporter wrote beside it: the model's own config and the graph's reach (an output cannot
        label a frame it never saw)."""
        R = self.output_delay_frames
        if isinstance(config, dict) and "output_delay_frames" in config and config["output_delay_frames"] != R:
            raise ValueError(f"output_delay_frames = {R} but the model_config it was exported with says "
                             f"{config['output_delay_frames']!r}")
        if "receptive_field_frames" in meta and R > int(meta["receptive_field_frames"]):
            raise ValueError(f"output_delay_frames = {R} but the graph sees only receptive_field_frames = "
                             f"{meta['receptive_field_frames']} frames back: its output cannot label a frame {R} back")

    def _probe(self) -> None:
        """One chunk of silence through the graph: it must give a frame per hop_samples samples and a
        log-probability per phone, or the metadata's hop or phone list is not this graph's."""
        import onnxruntime as ort

        chunk = min(self.allowed_chunk_frames)
        samples = chunk * self.hop_samples
        if samples > 1 << 20:
            raise ValueError(f"a chunk of {chunk} frames is {samples:,} samples (hop_samples = {self.hop_samples})")
        quiet = ort.RunOptions()
        quiet.log_severity_level = 4  # a graph that cannot take the chunk: our one line, not onnxruntime's log
        feeds = {self.audio_input: np.zeros((1, samples), np.float32), self.chunk_input: np.array(chunk, np.int64),
                 self.flush_input: np.array(0, np.int64), **self.initial_state(1)}
        try:
            log_probs = self.session.run([self.log_probs_output], feeds, quiet)[0]
        except Exception as error:  # onnxruntime's Fail, InvalidArgument ...
            detail = str(error).split("Status Message:")[-1].strip().splitlines()[0][:120]
            raise ValueError(f"hop_samples = {self.hop_samples}: a chunk of {chunk} frames ({samples} samples) does "
                             f"not run through the graph ({detail})") from None
        if log_probs.ndim != 3 or log_probs.shape[1] != chunk:
            raise ValueError(f"hop_samples = {self.hop_samples}: {samples} samples gave output of shape "
                             f"{list(log_probs.shape)}, not [1, {chunk}, {len(self.phones)}]")
        if log_probs.shape[2] != len(self.phones):
            raise ValueError(f"{len(self.phones)} phones in the metadata, {log_probs.shape[2]} classes in the graph's "
                             f"{self.log_probs_output!r}")

    def check_chunk(self, chunk_frames) -> int:
        """The chunk size to stream with (None: the model's default); ValueError naming the sizes it serves."""
        chunk = self.default_chunk_frames if chunk_frames is None else chunk_frames
        if isinstance(chunk, (bool, float)) or chunk not in self.allowed_chunk_frames:  # 8.0 == 8, True == 1
            raise ValueError(f"chunk_frames {chunk!r} is not one the model serves (it was trained for "
                             f"{list(self.allowed_chunk_frames)})")
        return int(chunk)

    @property
    def starts_empty(self) -> bool:
        """Whether a stream starts from empty caches (metadata stream_start "empty"), not from a long silence's: such
        a model hears a file's first words better after a pre-roll (file_preroll)."""
        return self.metadata.get("stream_start") == "empty"

    def new_stream(self, chunk_frames=None, batch_size=1, phases=1) -> "Stream | PhaseStream":
        """A Stream; with phases other than 1, a PhaseStream (one stream, its frames averaged over the phases)."""
        if isinstance(phases, bool) or phases != 1:
            if batch_size != 1:
                raise ValueError("a stream averaged over phases is one stream: batch_size 1")
            return PhaseStream(self, chunk_frames or self.default_chunk_frames, phases)
        return Stream(self, chunk_frames or self.default_chunk_frames, batch_size)

    def new_stream_set(self, chunk_frames=None, max_batch=None, bound=None) -> "StreamSet":
        return StreamSet(self, chunk_frames or self.default_chunk_frames, max_batch, bound)

    def run(self, audio, chunk_frames, final, state):
        """One graph call: audio (B, hops * hop_samples) and a state dict -> (log_probs (B, R, classes), new state)."""
        feeds = {
            self.audio_input: np.ascontiguousarray(audio, dtype=np.float32),
            self.chunk_input: np.array(chunk_frames, dtype=np.int64),
            self.flush_input: np.array(int(final), dtype=np.int64),
            **state,
        }
        names = [self.log_probs_output] + [s["output"] for s in self.states]
        results = self.session.run(names, feeds)
        return results[0], {s["name"]: value for s, value in zip(self.states, results[1:])}

    def run_bound(self, audio, chunk_frames, final, state):
        """run() through onnxruntime's I/O binding: the state's values may be numpy arrays or OrtValues, and the new
        state comes back as OrtValues in the memory of the device the graph runs on (self.device), so that a state
        fed back call after call never crosses between a GPU and the host; the log-probabilities come to the host.
        Same numbers as run() (the same graph and kernels; tested on the CPU).  host_state() turns such a state
        into numpy arrays."""
        binding = self.session.io_binding()
        binding.bind_cpu_input(self.audio_input, np.ascontiguousarray(audio, dtype=np.float32))
        binding.bind_cpu_input(self.chunk_input, np.array(chunk_frames, dtype=np.int64))
        binding.bind_cpu_input(self.flush_input, np.array(int(final), dtype=np.int64))
        for spec in self.states:
            value = state[spec["name"]]
            if isinstance(value, np.ndarray):
                binding.bind_cpu_input(spec["name"], np.ascontiguousarray(value))
            else:
                binding.bind_ortvalue_input(spec["name"], value)
        binding.bind_output(self.log_probs_output, "cpu")
        for spec in self.states:
            binding.bind_output(spec["output"], self.device)
        self.session.run_with_iobinding(binding)
        outputs = binding.get_outputs()
        return outputs[0].numpy(), {spec["name"]: value for spec, value in zip(self.states, outputs[1:])}

    @staticmethod
    def host_state(state) -> dict:
        """A state from run() or run_bound() as numpy arrays (an OrtValue on a GPU is copied to the host)."""
        return {name: value if isinstance(value, np.ndarray) else value.numpy() for name, value in state.items()}

    def _batch_axis(self, spec):
        return spec["shape"].index("batch")

    def initial_state(self, batch_size):
        return {
            s["name"]: np.zeros([batch_size if d == "batch" else d for d in s["shape"]], dtype=s["dtype"])
            for s in self.states
        }


def loudest_stretch(samples: np.ndarray, window: int, hop: int) -> np.ndarray:
    """The `window` samples of `samples` with the most energy, among windows starting every `hop` (the first of
    equals; float64 sums); all of a shorter `samples`, cut to whole hops."""
    if len(samples) <= window:
        return samples[:len(samples) // hop * hop]
    energy = np.concatenate([[0.0], np.cumsum(samples.astype(np.float64) ** 2)])
    start = int(np.argmax(energy[window::hop] - energy[:len(energy) - window:hop])) * hop
    return samples[start:start + window]


def file_preroll(model: StreamingModel, head) -> np.ndarray:
    """The pre-roll of a file whose first samples (16 kHz mono float32, at least its first PREROLL_SEARCH_SECONDS
    where it is that long) are `head`, for Stream.prime: empty for a model whose streams start from a silence's
    caches (nothing to gain); else the loudest PREROLL_SECONDS of the first PREROLL_SEARCH_SECONDS (energy over
    windows starting every hop, the first of equals; all of a shorter head, cut to whole hops), then
    PREROLL_GAP_SECONDS of zeros.  JS: filePreroll, the same samples."""
    if not model.starts_empty:
        return np.zeros(0, dtype=np.float32)
    return preroll(head, model.sample_rate, model.hop_samples)


def preroll(head, rate: int, hop: int) -> np.ndarray:
    """file_preroll's samples for a model whose streams start empty, from its rate and hop (also what `speechattn
    eval` prepends for such a PyTorch checkpoint)."""
    head = np.asarray(head, dtype=np.float32)[:int(PREROLL_SEARCH_SECONDS * rate)]
    head = np.where(np.isfinite(head), head, np.float32(0))
    loudest = loudest_stretch(head, int(PREROLL_SECONDS * rate) // hop * hop, hop)
    gap = np.zeros(int(PREROLL_GAP_SECONDS * rate) // hop * hop, dtype=np.float32)
    return np.concatenate([loudest, gap]) if len(loudest) else loudest


class Stream:
    """One audio source.  push() any amount of audio; frames come out as their chunk completes."""

    def __init__(self, model: StreamingModel, chunk_frames: int, batch_size: int = 1):
        self.model = model
        self.chunk_frames = model.check_chunk(chunk_frames)
        self.batch_size = batch_size
        self.state = model.initial_state(batch_size)
        self.leftover = np.zeros((batch_size, 0), dtype=np.float32)
        self.frames_emitted = 0
        self.outputs_to_drop = model.output_delay_frames  # graph outputs that label frames before the audio
        self.nonfinite_samples = 0
        self.finished = False
        self.started = False  # pushed or primed: prime() no longer applies

    def _check(self, samples, sample_rate):
        if sample_rate is not None and sample_rate != self.model.sample_rate:
            raise ValueError(f"audio is {sample_rate} Hz but the model takes {self.model.sample_rate} Hz: resample first")
        samples = np.asarray(samples)
        if samples.dtype == np.int16:
            samples = samples.astype(np.float32) / 32768.0
        elif samples.dtype.kind != "f":
            raise TypeError(f"audio must be float32 in [-1, 1] (or int16 PCM), not {samples.dtype}")
        if self.batch_size == 1:
            samples = mono(samples)[None, :]  # (samples, channels) downmixed; an ambiguous shape refused
        if samples.ndim != 2 or samples.shape[0] != self.batch_size:
            want = "(samples,) or (1, samples)" if self.batch_size == 1 else f"({self.batch_size}, samples)"
            raise ValueError(f"audio must have shape {want}, got {samples.shape}")
        samples = samples.astype(np.float32, copy=False)
        finite = np.isfinite(samples)
        if not finite.all():
            # The graph reads non-finite samples as 0; count them so the caller can see it happened.
            self.nonfinite_samples += int(samples.size - finite.sum())
            warnings.warn(f"{samples.size - finite.sum()} NaN/Inf samples were read as silence", stacklevel=3)
            samples = np.where(finite, samples, np.float32(0))
        peak = float(np.abs(samples).max()) if samples.size else 0.0
        if peak > 2.0:
            raise ValueError(f"float audio must lie in [-1, 1] but reaches {peak:.1f}: "
                             "integer PCM passed as float? divide by 32768")
        return samples

    def prime(self, samples) -> None:
        """Audio heard before the stream's start (file_preroll's): it sets the model's state (the level estimate,
        the attention's context) and labels no frame; frame 0 is still the first hop pushed after it.  Batch 1,
        16 kHz float32, whole hops; before the first push, once."""
        if self.started or self.finished:
            raise RuntimeError("prime() comes before the stream's first push, once")
        samples = self._check(samples, None)
        hop = self.model.hop_samples
        if samples.shape[1] % hop:
            raise ValueError(f"a pre-roll is whole hops of {hop} samples, not {samples.shape[1]}")
        self.started = True
        self.outputs_to_drop += samples.shape[1] // hop
        if samples.shape[1]:
            self._run(samples, final=False)

    def push(self, samples, sample_rate=None) -> Frames:
        """Feed audio of any length: (samples,) for batch 1 or (batch, samples); 16 kHz float32 in [-1, 1].  Batch 1
        also takes (samples, channels), averaged to mono (see mono())."""
        if self.finished:
            raise RuntimeError("this stream is finished; start a new one with model.new_stream()")
        self.started = True
        audio = np.concatenate([self.leftover, self._check(samples, sample_rate)], axis=1)
        usable = audio.shape[1] // self.model.hop_samples * self.model.hop_samples
        self.leftover = audio[:, usable:]
        return self._run(audio[:, :usable], final=False)

    def finish(self) -> Frames:
        """End the stream: the last partial hop is zero-padded, followed by the output delay's frames of silence,
        and the last partial chunk is emitted.  Once only: a second finish() raises RuntimeError, as push() after it
        does (it would add frames past the end of the audio)."""
        if self.finished:
            raise RuntimeError("this stream is already finished; its last frames came from the first finish()")
        hop = self.model.hop_samples
        audio = self.leftover
        if audio.shape[1]:
            audio = np.pad(audio, ((0, 0), (0, hop - audio.shape[1])))
        audio = np.pad(audio, ((0, 0), (0, self.model.output_delay_frames * hop)))
        self.leftover = audio[:, :0]
        frames = self._run(audio, final=True)
        self.finished = True
        return frames

    def _run(self, audio, final) -> Frames:
        hop = self.model.hop_samples
        step = max(self.chunk_frames, MAX_CALL_FRAMES // self.chunk_frames * self.chunk_frames) * hop
        pieces = [audio[:, i : i + step] for i in range(0, audio.shape[1], step)] or [audio]
        outputs = []
        for number, piece in enumerate(pieces):
            last = final and number == len(pieces) - 1
            if piece.shape[1] == 0 and not last:
                continue
            outputs.append(self._call(piece, last))
        log_probs = np.concatenate(outputs, axis=1) if outputs else np.zeros((self.batch_size, 0, len(self.model.phones)), np.float32)
        log_probs, indices = self._aligned(log_probs)
        return Frames(indices, log_probs[0] if self.batch_size == 1 else log_probs, self.model.phones)

    def _aligned(self, log_probs):
        """Graph outputs (B, n, classes) -> those that label frames of the audio, and their frame indices."""
        dropped = min(self.outputs_to_drop, log_probs.shape[1])
        self.outputs_to_drop -= dropped
        log_probs = log_probs[:, dropped:]
        indices = np.arange(self.frames_emitted, self.frames_emitted + log_probs.shape[1])
        self.frames_emitted += log_probs.shape[1]
        return log_probs, indices

    def _call(self, audio, final):
        log_probs, self.state = self.model.run(audio, self.chunk_frames, final, self.state)
        return log_probs


class PhaseStream:
    """A Stream whose frames are averaged over `phases` shifts of the audio (for files: alignment).  The model's
    encoder stacks S frames a position (model.frame_subsampling), so the same audio k frames later (0 < k < S) is
    stacked into other positions and labelled anew; the average of the S phases' posteriors is a little more exact
    than any one (docs/benchmarks.md, "Alignment over the phases").  Phase k runs its own Stream, primed with
    k S / phases hops of silence (labelled by no frame), phases a count that divides S (model.phase_counts);
    each frame's row is log(mean of the phases' posteriors), given once every phase has it.  Same push / prime /
    finish and Frames as Stream, at `phases` times its CPU; phases = 1 is a plain Stream's frames exactly."""

    def __init__(self, model: StreamingModel, chunk_frames: int, phases: int = 1):
        if isinstance(phases, bool) or not isinstance(phases, (int, np.integer)) or \
                phases not in model.phase_counts:
            raise ValueError(f"phases must be {' or '.join(map(str, model.phase_counts))} for this model (the counts "
                             f"that divide its encoder's step of {model.frame_subsampling} frames evenly), not "
                             f"{str(phases)[:20]!r}")
        self.model = model
        step = model.frame_subsampling // int(phases)
        self.shifts = [k * step for k in range(int(phases))]  # evenly spaced: 0, S / phases, 2 S / phases ...
        self.streams = [Stream(model, chunk_frames) for _ in self.shifts]
        self.chunk_frames = self.streams[0].chunk_frames
        self.rows = [np.zeros((0, len(model.phones)), np.float32) for _ in self.shifts]  # each phase's, not given yet
        self.frames_emitted = 0
        self.started = False

    @property
    def finished(self) -> bool:
        return self.streams[0].finished

    @property
    def nonfinite_samples(self) -> int:
        return self.streams[0].nonfinite_samples

    def prime(self, samples) -> None:
        """Stream.prime for every phase (each then gets its shift's silence)."""
        if self.started or self.finished:
            raise RuntimeError("prime() comes before the stream's first push, once")
        self._start(np.asarray(samples, dtype=np.float32))

    def _start(self, head) -> None:
        self.started = True
        for stream, shift in zip(self.streams, self.shifts):
            if shift or len(head):
                stream.prime(np.concatenate([head, np.zeros(shift * self.model.hop_samples, np.float32)]))

    def push(self, samples, sample_rate=None) -> Frames:
        if not self.started and not self.finished:
            self._start(np.zeros(0, np.float32))
        with warnings.catch_warnings():  # NaN/Inf: said once, by the first phase, not once a phase
            for k, stream in enumerate(self.streams):
                if k:
                    warnings.simplefilter("ignore")
                self.rows[k] = np.concatenate([self.rows[k], stream.push(samples, sample_rate).log_probs])
        return self._ready()

    def finish(self) -> Frames:
        if not self.started and not self.finished:
            self._start(np.zeros(0, np.float32))
        for k, stream in enumerate(self.streams):
            self.rows[k] = np.concatenate([self.rows[k], stream.finish().log_probs])
        return self._ready()

    def _ready(self) -> Frames:
        n = min(len(r) for r in self.rows)
        taken = np.stack([r[:n] for r in self.rows]).astype(np.float64)  # (phases, n, classes)
        self.rows = [r[n:] for r in self.rows]
        if len(taken) == 1:
            log_probs = taken[0].astype(np.float32)
        else:
            top = taken.max(axis=0)
            log_probs = (top + np.log(np.exp(taken - top).mean(axis=0))).astype(np.float32)
        indices = np.arange(self.frames_emitted, self.frames_emitted + n)
        self.frames_emitted += n
        return Frames(indices, log_probs, self.model.phones)


class StreamSet:
    """Independent streams stepped together: each has its own state and buffer, streams join (add) and leave
    (remove) at any time, and step() runs every stream that holds a whole chunk of audio in one graph call per
    chunk (at most `max_batch` streams per call, with every chunk they all hold; max_batch 1: one stream and one
    chunk a call).  Each stream's frames equal what it would get alone.

    The state a graph call returns stays stacked (a stack) and each of its streams' state stays there, a row, until
    the stream is next stepped or leaves: when the same streams are ready together again, as a server's live streams
    are chunk after chunk, the next call takes the stack as it is, with no slicing into streams and stacking again
    (about 15 % of the model's CPU at batches of 16-64); when they are not (their chunks arrive at scattered
    moments), the next call's state is each of its streams' row gathered from where it lies, one copy a row, and the
    other streams of those stacks stay where they are (each of them was copied out of its stack first, then copied
    again into the call: the two copies and their Python cost a row were 5 % of a loaded server's CPU, py-spy).  A
    stream's own Stream.state is None while a stack holds it, and is filled in when it leaves the set.

    `bound` (None: when the model runs on a GPU, model.device): the calls go through onnxruntime's I/O binding
    (StreamingModel.run_bound) and a stack stays in the device's memory between calls; it comes to the host when a
    call gathers rows from it."""

    # A stack is kept while more than 1 / KEEP_STACK_FROM of its rows are streams' state (then the rest are copied
    # out): a stream that stops sending holds at most that many streams' state.  4: 1.0 ms of CPU a stream-second
    # less than copying every stream of a broken stack out at once, 2: 0.5 ms (48 streams stepped a quarter at a time,
    # batches of 16, default-int8; dev measurement on 2 shared cores, +-0.3 ms).
    KEEP_STACK_FROM = 4

    def __init__(self, model: StreamingModel, chunk_frames: int, max_batch=None, bound=None):
        self.model = model
        self.chunk_frames = chunk_frames
        self.max_batch = max_batch
        self.bound = model.device != "cpu" if bound is None else bool(bound)
        self.streams = {}
        self.chunk_samples = chunk_frames * model.hop_samples
        self._stacks = {}  # tuple of keys (a call's streams) -> the state it returned, stacked in that order
        self._rows_left = {}  # tuple of keys -> how many of its streams' state still lies in its stack
        self._whole = set()  # the stacks whose every stream's state still lies there: a call may take them as they are
        self._held = {}  # key -> (the tuple of the stack its state lies in, its row there)
        self._axes = {spec["name"]: model._batch_axis(spec) for spec in model.states}

    def add(self, key) -> None:
        if key in self.streams:
            raise KeyError(f"stream {key!r} is already in the set")
        self.streams[key] = Stream(self.model, self.chunk_frames)

    def adopt(self, key, stream: Stream) -> None:
        """An existing stream joins the set with its state and buffer (a PhoneStream's own Stream, say)."""
        if key in self.streams:
            raise KeyError(f"stream {key!r} is already in the set")
        if stream.chunk_frames != self.chunk_frames or stream.batch_size != 1 or stream.finished:
            raise ValueError(f"a set of chunk {self.chunk_frames} takes unfinished single streams of that chunk")
        self.streams[key] = stream

    def discard(self, key) -> None:
        """A stream leaves the set without finishing (its source is gone); no error if it is not in the set."""
        self._release(key)
        self.streams.pop(key, None)

    def push(self, key, samples, sample_rate=None) -> None:
        """Buffer audio for one stream; its frames come out of the next step()."""
        stream = self.streams[key]
        stream.leftover = np.concatenate([stream.leftover, stream._check(samples, sample_rate)], axis=1)

    def step(self) -> dict:
        """Run every stream holding a whole chunk (all it holds, in calls of at most MAX_CALL_FRAMES) until none does:
        {key: Frames}."""
        model, outputs = self.model, {}
        while True:
            ready = [key for key, s in self.streams.items() if s.leftover.shape[1] >= self.chunk_samples]
            if not ready:
                break
            for keys in self._batches(ready):
                streams = [self.streams[key] for key in keys]
                # Every chunk the batch's streams all hold, in one call (a server behind real time catches up at
                # 13 % less CPU a chunk with 2 chunks a call, 24 % with 4, measured at 16-32 streams a call);
                # max_batch 1 is one call per stream chunk, the server's peer arm without batching.
                chunks = 1 if self.max_batch == 1 else min(min(s.leftover.shape[1] for s in streams) // self.chunk_samples,
                                                           max(1, MAX_CALL_FRAMES // self.chunk_frames))
                taken = chunks * self.chunk_samples
                audio = np.concatenate([s.leftover[:, :taken] for s in streams])
                run = model.run_bound if self.bound else model.run
                log_probs, state = run(audio, self.chunk_frames, False, self._stacked(keys, streams))
                self._stacks[keys], self._rows_left[keys] = state, len(keys)
                self._whole.add(keys)
                for row, (key, stream) in enumerate(zip(keys, streams)):
                    stream.leftover = stream.leftover[:, taken:]
                    stream.state, self._held[key] = None, (keys, row)
                    outputs.setdefault(key, []).append(log_probs[row : row + 1])
        result = {}
        for key, pieces in outputs.items():
            log_probs, indices = self.streams[key]._aligned(np.concatenate(pieces, axis=1))
            result[key] = Frames(indices, log_probs[0], model.phones)
        return result

    def _stacked(self, keys: tuple, streams: list) -> dict:
        """The state of the streams `keys` stacked in that order along each state's batch axis: a whole stack as it
        lies, else each stream's row from its stack (or its own state), one copy a row."""
        if keys in self._whole:  # these streams were stepped together last: as it is
            for key in keys:
                del self._held[key]
            self._whole.discard(keys)
            del self._rows_left[keys]
            return self._stacks.pop(keys)
        parts = {name: [] for name in self._axes}
        for key, stream in zip(keys, streams):
            held = self._release(key)
            for name, axis in self._axes.items():
                parts[name].append(stream.state[name] if held is None else _row(held[0][name], held[1], axis))
            stream.state = None
        return {name: np.concatenate(rows, axis=self._axes[name]) for name, rows in parts.items()}

    def _release(self, key):
        """`key`'s state leaves its stack: (the stack's state, on the host, and its row), or None where the stream
        holds its own (or is not in the set).  A stack no stream's state lies in any more is dropped."""
        held = self._held.pop(key, None)
        if held is None:
            return None
        keys, row = held
        self._whole.discard(keys)
        state = self._stacks[keys]
        if any(not isinstance(value, np.ndarray) for value in state.values()):  # on a device: once a stack
            state = self._stacks[keys] = self.model.host_state(state)
        self._rows_left[keys] -= 1
        if self._rows_left[keys] * self.KEEP_STACK_FROM <= len(keys):  # the rest copied out, the stack dropped
            del self._stacks[keys], self._rows_left[keys]
            for other_row, other in enumerate(keys):
                if self._held.get(other, (None,))[0] == keys:
                    del self._held[other]
                    self.streams[other].state = {name: np.take(state[name], [other_row], axis=axis)
                                                 for name, axis in self._axes.items()}
        return state, row

    def _batches(self, ready: list) -> list[tuple]:
        """The ready streams in graph calls of at most max_batch: a whole stack whose streams are all ready is one
        call as it was, unless it is a remnant (under half of max_batch, and not every ready stream); the rest are
        cut into calls of max_batch, so small stacks merge again."""
        limit = self.max_batch or len(ready)
        waiting = set(ready)
        whole, loose, seen = [], [], set()
        for key in ready:
            held = self._held.get(key)
            keys = held[0] if held is not None and held[0] in self._whole else None
            if keys is None:
                loose.append(key)
            elif keys not in seen:
                seen.add(keys)
                if waiting.issuperset(keys) and (len(keys) >= limit // 2 or len(keys) == len(ready)):
                    whole.append(keys)
                else:
                    loose += [k for k in keys if k in waiting]
        return whole + [tuple(loose[i : i + limit]) for i in range(0, len(loose), limit)]

    def remove(self, key) -> Frames:
        """Take a stream out of the set and finish it: its buffered audio and last partial chunk, alone."""
        held = self._release(key)
        stream = self.streams.pop(key)
        if held is not None:  # its own state back: its row, copied
            stream.state = {name: np.take(held[0][name], [held[1]], axis=axis) for name, axis in self._axes.items()}
        leftover, stream.leftover = stream.leftover, stream.leftover[:, :0]
        before = stream.push(leftover[0]) if leftover.shape[1] else None
        last = stream.finish()
        if before is None or not len(before):
            return last
        return Frames(np.concatenate([before.frame_indices, last.frame_indices]),
                      np.concatenate([before.log_probs, last.log_probs]), self.model.phones)

    def __len__(self) -> int:
        return len(self.streams)

    def __contains__(self, key) -> bool:
        return key in self.streams


def _row(value: np.ndarray, row: int, axis: int) -> np.ndarray:
    """One stream's row of a stacked state along its batch axis, as a view (batch size 1)."""
    return value[(slice(None),) * axis + (slice(row, row + 1),)]
