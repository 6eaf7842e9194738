"""The kit's short public API: a model by name, a stream that gives phones, mouth cues and mouth weights.

    from speechattn_export import DecodingOptions, load_model

    model = load_model("default-int8")                 # a bundled model's name, or a path to an ONNX file
    stream = model.open(DecodingOptions(visemes="rhubarb"))
    for piece in audio_pieces:                         # 16 kHz mono float32, any length
        update = stream.push(piece)
        update.segments, update.cues, update.weights   # final phones, final mouth cues, (R, S) shape weights
    update = stream.finish()
    stream.segment_dicts(), stream.cue_dicts()         # everything so far, as `speechattn transcribe` writes it

Follow-along (a known text read aloud; the words as the reader passes them):

    stream = model.follow("Please enter your password, followed by the pound key.")
    for piece in audio_pieces:
        update = stream.push(piece, sample_rate=8000)  # any rate, as above
        update.words, update.position, update.not_heard   # words made final, the reader now, words passed over
    update = stream.finish()                             # update.not_heard: every word not heard

A whole file through a model whose streams start empty (the bundled file-int8): its pre-roll first, as
`speechattn transcribe` gives it (the loudest second of the file's first four, then 0.2 s of silence):

    from speechattn_export.stream_client import file_preroll
    stream = load_model("file-int8").open(DecodingOptions(chunk_frames=400))
    stream.prime(file_preroll(stream.model, audio[:64000]))   # 16 kHz; nothing for a model primed with silence

The same pieces as export/js (StreamingModel, newSegmenter, CueMaker, frameWeights); `speechattn transcribe`,
`mic` and `eval` run through PhoneStream too, so an app gets exactly what the command line prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from speechattn_export.align import LIVE, AlignedWord, AlignOptions, Follower, Position, word_event
from speechattn_export.decoder import DECODERS, DecoderConfig, PhoneBigram, new_segmenter
from speechattn_export.registry import resolve
from speechattn_export.segments import Segment, segment_dicts
from speechattn_export.stream_client import Frames, StreamingModel, mono
from speechattn_export.visemes import SETS, Cue, CueMaker, CueRules, cue_dicts, frame_weights

MAX_MIN_FRAMES = 100  # a phone of a second: anything longer is a typo, and the decoder's state grows with it


@dataclass(frozen=True)
class DecodingOptions:
    """How frame posteriors become phones and mouth shapes: one object from the command line to the clients.

    decoder       "bigram" (a Viterbi search over English phone pairs; final 100 ms after the frame) or
                  "hysteresis" (each frame's argmax held for min_frames)
    min_frames    the shortest phone, in 10 ms frames (None: the decoder's own: 4 bigram, 3 hysteresis)
    chunk_frames  the streaming chunk, one the model serves (None: the model's default)
    visemes       a viseme set (rhubarb, oculus, vrm) for cues and weights, or None for phones only
    cue_rules     the animation rules of the cues (minimum hold, bridged pauses)"""

    decoder: str = "bigram"
    min_frames: int | None = None
    chunk_frames: int | None = None
    visemes: str | None = None
    cue_rules: CueRules = field(default_factory=CueRules)

    def __post_init__(self) -> None:
        if not isinstance(self.decoder, str) or self.decoder not in DECODERS:  # a list: "unhashable type"
            raise ValueError(f"decoder must be one of {', '.join(DECODERS)}, not {self.decoder!r}")
        if self.min_frames is not None and (not isinstance(self.min_frames, (int, np.integer)) or
                                            isinstance(self.min_frames, bool) or
                                            not 1 <= self.min_frames <= MAX_MIN_FRAMES):  # 2.5 or True: the decoder
            # failed on it later, inside a stream (a server's worker stopped stepping every stream)
            raise ValueError(f"min_frames must be a whole number from 1 to {MAX_MIN_FRAMES}, not {self.min_frames!r}")
        if self.visemes is not None and (not isinstance(self.visemes, str) or self.visemes not in SETS):
            raise ValueError(f"visemes must be one of {', '.join(SETS)}, not {self.visemes!r}")


@dataclass
class Update:
    """What one push (or finish) made final."""

    frames: Frames  # the frames' log-probabilities and labels (frame i is [10 i, 10 i + 10) ms)
    segments: list[Segment]  # phone segments made final
    cues: list[Cue]  # mouth cues made final (options.visemes), else []
    weights: np.ndarray | None  # (R, S) mouth-shape weights of the frames (options.visemes), else None


class PhoneStream:
    """One audio source through the model, the decoder and (with options.visemes) the mouth shapes."""

    def __init__(self, model: StreamingModel, options: DecodingOptions = DecodingOptions(),
                 bigram: PhoneBigram | None = None, phases: int = 1) -> None:
        self.model, self.options = model, options  # phases > 1: a PhaseStream, as `transcribe` reads a file
        self.stream = model.new_stream(model.check_chunk(options.chunk_frames), phases=phases)
        self.segmenter = new_segmenter(options.decoder, model.phones, options.min_frames, DecoderConfig(), bigram)
        self.visemes = SETS[options.visemes] if options.visemes else None
        self.cue_maker = CueMaker(self.visemes, model.phones, options.cue_rules) if self.visemes else None
        self.segments: list[Segment] = []
        self.cues: list[Cue] = []
        self.samples = 0
        self.resampler = None  # the kit's resampler, from the first push at another rate (js/resample.mjs's twin)
        self.input_rate = None

    @property
    def chunk_frames(self) -> int:
        return self.stream.chunk_frames

    def push(self, samples, sample_rate=None) -> Update:
        """Audio in (float32 in [-1, 1] or int16; mono (samples,), or (samples, channels) averaged to mono, at any
        rate; an ambiguous shape such as (2, 2) is a ValueError), at the model's rate or at `sample_rate`, resampled
        here with the same windowed-sinc resampler as the JavaScript kit, so every client hears the same 16 kHz
        audio."""
        samples = np.asarray(samples)
        if samples.dtype == np.int16:
            samples = samples.astype(np.float32) / 32768.0
        samples = self._resampled(mono(samples), sample_rate)
        self.samples += samples.shape[-1] if samples.ndim else 0
        return self._update(self.stream.push(samples), final=False)

    def prime(self, samples) -> None:
        """Audio heard before the stream's start, at the model's rate (a file's pre-roll, file_preroll): it sets the
        model's state and makes no frame, phone or cue.  Before the first push (Stream.prime refuses it after)."""
        self.stream.prime(samples)

    def finish(self) -> Update:
        """The last frames, segments and cues.  Once only: a second finish() (or a push() after it) raises
        RuntimeError; it would add frames past the end of the audio."""
        if self.stream.finished:
            raise RuntimeError("this stream is already finished; its last update came from the first finish()")
        if self.resampler is not None:  # the resampler's last outputs, cut to the signal's length
            tail = self.resampler.flush()[:max(0, self._expected_samples() - self.samples)]
            frames = self.stream.push(tail)
            self.samples += len(tail)
            update = self._update(frames, final=False)
            last = self._update(self.stream.finish(), final=True)
            return Update(_joined(update.frames, last.frames), update.segments + last.segments,
                          update.cues + last.cues, None if update.weights is None else
                          np.concatenate([update.weights, last.weights]))
        return self._update(self.stream.finish(), final=True)

    def _resampled(self, samples: np.ndarray, sample_rate) -> np.ndarray:
        if sample_rate is None or sample_rate == self.model.sample_rate:
            if self.resampler is not None:
                raise ValueError("a stream's audio keeps one sample rate: this one began at "
                                 f"{self.input_rate} Hz")
            return samples
        if self.input_rate is None:
            from speechattn_export.resample import Resampler

            if self.samples:
                raise ValueError(f"a stream's audio keeps one sample rate: this one began at {self.model.sample_rate} Hz")
            self.resampler, self.input_rate, self.input_samples = Resampler(sample_rate, self.model.sample_rate), \
                sample_rate, 0
        elif sample_rate != self.input_rate:
            raise ValueError(f"a stream's audio keeps one sample rate: this one began at {self.input_rate} Hz")
        self.input_samples += samples.shape[-1]
        return self.resampler.process(samples)

    def _expected_samples(self) -> int:
        return int(round(self.input_samples * self.model.sample_rate / self.input_rate))

    def _update(self, frames: Frames, final: bool, decoded: list[Segment] | None = None) -> Update:
        """`decoded`: what the segmenter made of these frames where the caller pushed them already (a server's
        streams decoded together: decoder.push_many)."""
        decoded = self.segmenter.push(frames.log_probs) if decoded is None else decoded
        segments = decoded + (self.segmenter.finish() if final else [])
        self.segments += segments
        cues, weights = [], None
        if self.visemes is not None:
            weights = frame_weights(frames.log_probs, self.visemes, self.model.phones)
            cues = self.cue_maker.push(segments) + (self.cue_maker.finish() if final else [])
            self.cues += cues
        return Update(frames, segments, cues, weights)

    @property
    def duration_seconds(self) -> float:
        return self.samples / self.model.sample_rate

    def segment_dicts(self) -> list[dict]:
        """Every final segment so far, as `speechattn transcribe --format json` prints them."""
        return segment_dicts(self.segments, self.model.phones, self.duration_seconds,
                             round(1000 / self.model.frame_shift_ms))

    def cue_dicts(self) -> list[dict]:
        """Every final cue so far, in seconds, as the visemes-json and Rhubarb formats write them."""
        if self.visemes is None:
            raise ValueError("this stream makes no cues: open it with DecodingOptions(visemes=SET)")
        return cue_dicts(self.cues, self.visemes, self.duration_seconds, round(1000 / self.model.frame_shift_ms))


def _joined(a: Frames, b: Frames) -> Frames:
    return Frames(np.concatenate([a.frame_indices, b.frame_indices]), np.concatenate([a.log_probs, b.log_probs]),
                  a.phones)


@dataclass
class FollowUpdate:
    """What one push (or finish) of a FollowStream made final, and where the reader is."""

    phones: Update  # the PhoneStream's update: frames, recognised phones, mouth shapes (options.visemes)
    words: list[AlignedWord]  # words made final, in time order (a word read again comes again)
    position: Position  # the reader at the newest frame: (word index, inside the word or at the boundary before it)
    phone: str | None  # the aligned phone there ("sil" between words, None in speech that is not in the script)
    not_heard: list[int]  # positions passed over so far; after finish, every word not heard


class FollowStream:
    """One audio source following a known text: a PhoneStream (audio at any rate, the model, the decoder) whose
    frames also go to a Follower (export/align.py: the live ScriptAligner).  `words` are the text's words (kit Word
    objects: text, spans, pronunciations), `follower.heard` each position's latest reading."""

    def __init__(self, phone_stream: PhoneStream, words, sentence_starts=None, align_options: AlignOptions = LIVE,
                 start_word: int = 0) -> None:
        if not words:
            raise ValueError("nothing to follow: the text has no word the lexicon can pronounce")
        self.phone_stream, self.words = phone_stream, list(words)
        self.follower = Follower(self.words, phone_stream.model.phones, sentence_starts, align_options, start_word)

    def push(self, samples, sample_rate=None) -> FollowUpdate:
        """Audio in, as PhoneStream.push takes it."""
        return self._update(self.phone_stream.push(samples, sample_rate), final=False)

    def finish(self) -> FollowUpdate:
        """The last words; `not_heard` is then every word not heard.  Once only, as PhoneStream.finish."""
        return self._update(self.phone_stream.finish(), final=True)

    def _update(self, phones: Update, final: bool) -> FollowUpdate:
        f = self.follower
        words = f.push(phones.frames.log_probs) + (f.finish() if final else [])
        return FollowUpdate(phones, words, f.position, f.phone, f.alignment.not_heard if final else f.not_heard())

    def word_events(self, words: list[AlignedWord], not_heard=None) -> list[dict]:
        """The words as `speechattn mic --script` and node follow.mjs print them (with `not_heard`, default the
        positions passed over so far)."""
        fps = round(1000 / self.phone_stream.model.frame_shift_ms)
        return [word_event(w, self.follower.not_heard() if not_heard is None else not_heard, fps) for w in words]


class Model(StreamingModel):
    """A StreamingModel that also opens PhoneStreams (the decoder's bigram loaded once, shared) and FollowStreams."""

    def open(self, options: DecodingOptions = DecodingOptions(), phases: int = 1) -> PhoneStream:
        """A PhoneStream with `options`; `phases` > 1 averages each frame's posteriors over that many shifts of the
        audio (a PhaseStream: `transcribe` reads a file over two, a live stream takes one)."""
        if options.decoder == "bigram" and getattr(self, "_bigram", None) is None:
            self._bigram = PhoneBigram.load()
        return PhoneStream(self, options, getattr(self, "_bigram", None), phases)

    def follow(self, text: str, dictionary=None, options: DecodingOptions = DecodingOptions(),
               align_options: AlignOptions = LIVE, lexicon=None, start_word: int = 0) -> FollowStream:
        """A stream that follows `text` read aloud: its words from the kit's lexicon (CMUdict, the g2p model for
        the rest; `dictionary`: a CMUdict/MFA file whose words win, or a loaded `lexicon`), sentence and line
        starts as the places a reader may jump back or ahead to.  Bounded, checked before any word is pronounced:
        ValueError for a text of more than words.MAX_TEXT_CHARS characters or words.MAX_WORDS words, a token
        longer than words.MAX_TOKEN_CHARS, or a dictionary that is not a readable file of at most
        words.MAX_DICTIONARY_BYTES.  `start_word`: take the reader up at that word (0-based, among the text's words),
        as a stream that goes on from another's position; ValueError past the last word."""
        from speechattn_export.words import Lexicon, sentence_starts

        words = (lexicon or Lexicon.load(dictionary)).words(text)
        return FollowStream(self.open(options), words, sentence_starts(text, words), align_options, start_word)


def load_model(name_or_path=None, threads: int | None = None, providers=None) -> Model:
    """A bundled model by name (default, default-int8; None: the default) or an ONNX file by path; `threads` 1 to
    256 (None: all cores).  ValueError in one line for a name or file that is no model (nothing there, a device,
    a pipe, a directory, metadata that does not describe the graph) or a thread count out of range."""
    try:
        path = resolve(name_or_path)
    except FileNotFoundError as error:
        raise ValueError(str(error)) from None
    return Model(path, providers=providers, num_threads=threads)
