// Speechattn.cs: the C# binding of libspeechattn (export/c/include/speechattn.h), one file to drop into a project
// (Unity: Assets/Plugins/, beside libspeechattn and onnxruntime for each platform).
//
//     using (var model = new Speechattn.Model("default-int8.onnx"))
//     using (var stream = model.Open(new Speechattn.StreamOptions { Visemes = "rhubarb" }))
//     {
//         Speechattn.Update update = stream.Push(samples, channels, sampleRate);  // float[] or short[], any rate
//         foreach (var cue in update.Cues) ...                                     // mouth cues made final
//         update = stream.Finish();
//     }
//
// A thin layer: it marshals and nothing else (the logic and its checks live in the C library, once).  Every failed
// call throws SpeechattnException with the library's own message and status.  Results are copied out of the
// library's buffers before the call returns, so they stay valid.  Threads as in speechattn.h: a Model may be shared
// by streams on any threads; a Stream is used by one thread at a time.
using System;
using System.Runtime.InteropServices;
using System.Text;

namespace Speechattn
{
    /// <summary>speechattn_status.</summary>
    public enum Status
    {
        Ok = 0,
        InvalidArgument = 1,
        File = 2,
        Model = 3,
        Audio = 4,
        State = 5,
        Runtime = 6,
        OutOfMemory = 7,
        BufferTooSmall = 8,
    }

    /// <summary>A failed library call: the library's message (speechattn_last_error) and its status.</summary>
    public class SpeechattnException : Exception
    {
        public Status Status { get; private set; }
        public string StatusName { get; private set; }  // "SPEECHATTN_ERR_FILE", ...

        public SpeechattnException(Status status, string statusName, string message) : base(message)
        {
            Status = status;
            StatusName = statusName;
        }
    }

    /// <summary>A phone segment: frames [StartFrame, EndFrame), 10 ms each.</summary>
    public struct Segment
    {
        public long StartFrame, EndFrame;
        public int Phone;          // index into Model.Phones
        public string PhoneName;
        public double Start, End;  // seconds (End not clipped to the audio)
        public double Confidence;
    }

    /// <summary>A mouth cue: one shape over frames [StartFrame, EndFrame).</summary>
    public struct Cue
    {
        public long StartFrame, EndFrame;
        public int Shape;          // index into Stream.Shapes
        public string ShapeName;
        public double Start, End;  // seconds
    }

    /// <summary>What one Push (or Finish) made final: copies of the library's speechattn_update.</summary>
    public sealed class Update
    {
        public long FirstFrame;
        public int NumFrames, NumPhones, NumShapes;
        public float[] LogProbs;   // NumFrames x NumPhones, row-major
        public float[] Weights;    // NumFrames x NumShapes mouth-shape weights, null without visemes
        public Segment[] Segments;
        public Cue[] Cues;
    }

    /// <summary>speechattn_stream_options; a field left null or 0 keeps the library's default.</summary>
    public sealed class StreamOptions
    {
        public string Decoder;            // "bigram" (default) or "hysteresis"
        public int MinFrames;             // 0: the decoder's own
        public int ChunkFrames;           // 0: the model's default
        public string Visemes;            // null: phones only; "rhubarb", "oculus", "vrm"
        public int? CueMinHoldFrames;       // null: the library's default (7)
        public int? CueBridgeFrames;        // null: the library's default (10)
        public int? DecoderLookaheadFrames; // null: the library's default (10)
        public double? LmWeight;            // null: the library's default (1.0)
        public double? InsertionPenalty;    // null: the library's default (0.0)
        public int? Phases;                 // null: the library's default (1)
    }

    /// <summary>An opened model file (speechattn_model); share it between streams.</summary>
    public sealed class Model : IDisposable
    {
        internal readonly ModelHandle Handle;
        public string Path { get; private set; }
        public int SampleRate { get; private set; }
        public int HopSamples { get; private set; }
        public double FrameShiftMs { get; private set; }
        public string[] Phones { get; private set; }
        public int[] AllowedChunkFrames { get; private set; }
        public int DefaultChunkFrames { get; private set; }
        public int OutputDelayFrames { get; private set; }
        public bool StartsEmpty { get; private set; }

        /// <param name="numThreads">onnxruntime's intra-op threads (0: its default)</param>
        /// <param name="bigramPath">the phone bigram (null: phone-bigram.json beside the model)</param>
        public Model(string path, int numThreads = 0, string bigramPath = null)
        {
            Native.CheckAbi();
            var options = Native.speechattn_default_model_options();
            options.num_threads = numThreads;
            IntPtr pathUtf8 = Utf8.Alloc(path), bigramUtf8 = Utf8.Alloc(bigramPath);
            try
            {
                options.bigram_path = bigramUtf8;
                IntPtr raw;
                Native.Check(Native.speechattn_model_create(pathUtf8, ref options, out raw));
                Handle = new ModelHandle(raw);
            }
            finally
            {
                Utf8.Free(pathUtf8);
                Utf8.Free(bigramUtf8);
            }
            IntPtr infoPointer;
            Native.Check(Native.speechattn_model_get_info(Handle, out infoPointer));
            var info = (Native.ModelInfo)Marshal.PtrToStructure(infoPointer, typeof(Native.ModelInfo));
            Path = Utf8.String(info.path);
            SampleRate = info.sample_rate;
            HopSamples = info.hop_samples;
            FrameShiftMs = info.frame_shift_ms;
            Phones = Utf8.Strings(info.phones, info.num_phones);
            AllowedChunkFrames = new int[info.num_chunk_sizes];
            Marshal.Copy(info.allowed_chunk_frames, AllowedChunkFrames, 0, info.num_chunk_sizes);
            DefaultChunkFrames = info.default_chunk_frames;
            OutputDelayFrames = info.output_delay_frames;
            StartsEmpty = info.starts_empty != 0;
        }

        /// <summary>A new stream on this model (options null: the defaults, phones only).</summary>
        public Stream Open(StreamOptions options = null)
        {
            return new Stream(this, options ?? new StreamOptions());
        }

        public void Dispose()
        {
            Handle.Dispose();
        }

        /// <summary>The library's version ("0.1.0").</summary>
        public static string LibraryVersion
        {
            get { return Utf8.String(Native.speechattn_version()); }
        }
    }

    /// <summary>One audio source through the model, the decoder and the mouth shapes (speechattn_stream).</summary>
    public sealed class Stream : IDisposable
    {
        readonly StreamHandle handle;
        public Model Model { get; private set; }
        public string[] Shapes { get; private set; }  // the viseme set's shapes (weights' columns), empty without
        public int ChunkFrames { get; private set; }

        internal Stream(Model model, StreamOptions options)
        {
            Model = model;
            var native = Native.speechattn_default_stream_options();
            native.min_frames = options.MinFrames;
            native.chunk_frames = options.ChunkFrames;
            native.cue_min_hold_frames = options.CueMinHoldFrames ?? native.cue_min_hold_frames;
            native.cue_bridge_frames = options.CueBridgeFrames ?? native.cue_bridge_frames;
            native.decoder_lookahead_frames = options.DecoderLookaheadFrames ?? native.decoder_lookahead_frames;
            native.lm_weight = options.LmWeight ?? native.lm_weight;
            native.insertion_penalty = options.InsertionPenalty ?? native.insertion_penalty;
            native.phases = options.Phases ?? native.phases;
            IntPtr decoder = Utf8.Alloc(options.Decoder), visemes = Utf8.Alloc(options.Visemes);
            try
            {
                if (options.Decoder != null) native.decoder = decoder;
                native.visemes = visemes;
                handle = StreamHandle.Create(model.Handle, ref native);
            }
            finally
            {
                Utf8.Free(decoder);
                Utf8.Free(visemes);
            }
            var info = Info();
            ChunkFrames = info.chunk_frames;
            Shapes = new string[0];
            if (info.visemes != IntPtr.Zero)
            {
                var set = (Native.VisemeSetInfo)Marshal.PtrToStructure(info.visemes, typeof(Native.VisemeSetInfo));
                Shapes = Utf8.Strings(set.shapes, set.num_shapes);
            }
        }

        /// <summary>Float samples in [-1, 1], `channels` interleaved, at `sampleRate` (0: the model's rate).</summary>
        public Update Push(float[] samples, int channels = 1, int sampleRate = 0)
        {
            return Push(samples, 0, samples == null ? 0 : samples.Length, channels, sampleRate);
        }

        /// <summary>samples[offset .. offset + count) (count values, whole sample frames).</summary>
        public Update Push(float[] samples, int offset, int count, int channels, int sampleRate)
        {
            Range(samples, offset, count, channels);
            var pinned = GCHandle.Alloc(samples, GCHandleType.Pinned);
            try
            {
                IntPtr update;
                Native.Check(Native.speechattn_stream_push_f32(handle, Offset(pinned, offset, 4),
                                                                Frames(count, channels), channels, Rate(sampleRate),
                                                                out update));
                return Copy(update);
            }
            finally
            {
                pinned.Free();
            }
        }

        /// <summary>16-bit PCM, `channels` interleaved, at `sampleRate` (0: the model's rate).</summary>
        public Update Push(short[] samples, int channels = 1, int sampleRate = 0)
        {
            return Push(samples, 0, samples == null ? 0 : samples.Length, channels, sampleRate);
        }

        /// <summary>samples[offset .. offset + count) (count values, whole sample frames).</summary>
        public Update Push(short[] samples, int offset, int count, int channels, int sampleRate)
        {
            Range(samples, offset, count, channels);
            var pinned = GCHandle.Alloc(samples, GCHandleType.Pinned);
            try
            {
                IntPtr update;
                Native.Check(Native.speechattn_stream_push_i16(handle, Offset(pinned, offset, 2),
                                                                Frames(count, channels), channels, Rate(sampleRate),
                                                                out update));
                return Copy(update);
            }
            finally
            {
                pinned.Free();
            }
        }

        /// <summary>The end of the audio: the last frames, segments and cues.  Once.</summary>
        public Update Finish()
        {
            IntPtr update;
            Native.Check(Native.speechattn_stream_finish(handle, out update));
            return Copy(update);
        }

        /// <summary>Audio before the stream's start, mono at the model's rate (speechattn_stream_prime).</summary>
        public void Prime(float[] samples)
        {
            Native.Check(Native.speechattn_stream_prime(handle, samples, samples == null ? 0 : samples.LongLength));
        }

        /// <summary>A file's pre-roll from its first samples (speechattn_stream_prime_file).</summary>
        public void PrimeFile(float[] head)
        {
            Native.Check(Native.speechattn_stream_prime_file(handle, head, head == null ? 0 : head.LongLength));
        }

        /// <summary>Every final segment so far.</summary>
        public Segment[] Segments()
        {
            IntPtr pointer;
            long count;
            Native.Check(Native.speechattn_stream_segments(handle, out pointer, out count));
            return Native.Segments(pointer, count);
        }

        /// <summary>Every final cue so far.</summary>
        public Cue[] Cues()
        {
            IntPtr pointer;
            long count;
            Native.Check(Native.speechattn_stream_cues(handle, out pointer, out count));
            return Native.Cues(pointer, count);
        }

        /// <summary>Seconds of audio heard (at the model's rate).</summary>
        public double DurationSeconds
        {
            get { return Info().duration_seconds; }
        }

        /// <summary>NaN and Inf samples read as silence so far.</summary>
        public long NonfiniteSamples
        {
            get { return Info().nonfinite_samples; }
        }

        public void Dispose()
        {
            handle.Dispose();
        }

        Native.StreamInfo Info()
        {
            Native.StreamInfo info;
            Native.Check(Native.speechattn_stream_get_info(handle, out info));
            return info;
        }

        int Rate(int sampleRate)
        {
            return sampleRate == 0 ? Model.SampleRate : sampleRate;
        }

        static void Range(Array samples, int offset, int count, int channels)
        {
            // The array bounds only: a pointer past them would be read by the library.  Everything else (channels,
            // rates, values) the library checks and words itself.
            if (samples == null) throw new ArgumentNullException("samples");
            if (offset < 0 || count < 0 || offset > samples.Length - count)
                throw new ArgumentOutOfRangeException("count", "offset and count go past the array's end");
            if (channels > 0 && count % channels != 0)
                throw new ArgumentException("count is not a whole number of sample frames of " + channels +
                                            " channels", "count");
        }

        static long Frames(int count, int channels)  // channels out of range: the library refuses them
        {
            return channels > 0 ? count / channels : count;
        }

        static IntPtr Offset(GCHandle pinned, int offset, int bytes)
        {
            return new IntPtr(pinned.AddrOfPinnedObject().ToInt64() + (long)offset * bytes);
        }

        static Update Copy(IntPtr pointer)
        {
            var native = (Native.NativeUpdate)Marshal.PtrToStructure(pointer, typeof(Native.NativeUpdate));
            var update = new Update
            {
                FirstFrame = native.first_frame,
                NumFrames = native.num_frames,
                NumPhones = native.num_phones,
                NumShapes = native.num_shapes,
                LogProbs = new float[native.num_frames * native.num_phones],
                Segments = Native.Segments(native.segments, native.num_segments),
                Cues = Native.Cues(native.cues, native.num_cues),
            };
            if (update.LogProbs.Length > 0) Marshal.Copy(native.log_probs, update.LogProbs, 0, update.LogProbs.Length);
            if (native.weights != IntPtr.Zero)
            {
                update.Weights = new float[native.num_frames * native.num_shapes];
                if (update.Weights.Length > 0) Marshal.Copy(native.weights, update.Weights, 0, update.Weights.Length);
            }
            return update;
        }
    }

    /// <summary>A speechattn_model*, destroyed once by the runtime when no stream holds it any more.</summary>
    sealed class ModelHandle : SafeHandle
    {
        internal ModelHandle(IntPtr raw) : base(IntPtr.Zero, true)
        {
            SetHandle(raw);
        }

        public override bool IsInvalid
        {
            get { return handle == IntPtr.Zero; }
        }

        protected override bool ReleaseHandle()
        {
            Native.speechattn_model_destroy(handle);
            return true;
        }
    }

    /// <summary>A speechattn_stream*; it holds a reference on its model's handle, so the model is destroyed after
    /// every stream on it (speechattn.h), whatever order the finalizers run in.</summary>
    sealed class StreamHandle : SafeHandle
    {
        ModelHandle model;

        StreamHandle() : base(IntPtr.Zero, true)
        {
        }

        internal static StreamHandle Create(ModelHandle model, ref Native.NativeStreamOptions options)
        {
            var stream = new StreamHandle();
            bool added = false;
            model.DangerousAddRef(ref added);
            try
            {
                IntPtr raw;
                Native.Check(Native.speechattn_stream_create(model, ref options, out raw));
                stream.SetHandle(raw);
                stream.model = model;
                added = false;  // released with the stream
                return stream;
            }
            finally
            {
                if (added) model.DangerousRelease();
            }
        }

        public override bool IsInvalid
        {
            get { return handle == IntPtr.Zero; }
        }

        protected override bool ReleaseHandle()
        {
            Native.speechattn_stream_destroy(handle);
            model.DangerousRelease();
            return true;
        }
    }

    static class Utf8
    {
        internal static IntPtr Alloc(string text)  // NUL-terminated UTF-8 on the native heap; Zero for null
        {
            if (text == null) return IntPtr.Zero;
            byte[] bytes = Encoding.UTF8.GetBytes(text);
            IntPtr pointer = Marshal.AllocHGlobal(bytes.Length + 1);
            Marshal.Copy(bytes, 0, pointer, bytes.Length);
            Marshal.WriteByte(pointer, bytes.Length, 0);
            return pointer;
        }

        internal static void Free(IntPtr pointer)
        {
            if (pointer != IntPtr.Zero) Marshal.FreeHGlobal(pointer);
        }

        internal static string String(IntPtr pointer)
        {
            if (pointer == IntPtr.Zero) return null;
            int length = 0;
            while (Marshal.ReadByte(pointer, length) != 0) length++;
            byte[] bytes = new byte[length];
            Marshal.Copy(pointer, bytes, 0, length);
            return Encoding.UTF8.GetString(bytes);
        }

        internal static string[] Strings(IntPtr array, int count)
        {
            var strings = new string[count];
            for (int i = 0; i < count; i++) strings[i] = String(Marshal.ReadIntPtr(array, i * IntPtr.Size));
            return strings;
        }
    }

    static class Native
    {
        const string Library = "speechattn";  // libspeechattn.so, speechattn.dll, libspeechattn.dylib
        const int AbiVersion = 1;             // SPEECHATTN_ABI_VERSION this file was written for
        const CallingConvention Cdecl = CallingConvention.Cdecl;  // the C default (32-bit Windows' DllImport: StdCall)

        // The structs below mirror speechattn.h field for field (LayoutKind.Sequential pads as C does); strings are
        // IntPtr so that nothing the library owns is ever freed by the marshaller.
        [StructLayout(LayoutKind.Sequential)]
        internal struct ModelOptions
        {
            public int num_threads;
            public IntPtr bigram_path;
        }

        [StructLayout(LayoutKind.Sequential)]
        internal struct ModelInfo
        {
            public IntPtr path, model_version, quantization;
            public int sample_rate, hop_samples;
            public double frame_shift_ms;
            public int num_phones;
            public IntPtr phones;
            public int num_chunk_sizes;
            public IntPtr allowed_chunk_frames;
            public int default_chunk_frames, output_delay_frames, starts_empty, provisional_latency_ms,
                       final_latency_ms, has_bigram;
        }

        [StructLayout(LayoutKind.Sequential)]
        internal struct VisemeSetInfo
        {
            public IntPtr name;
            public int num_shapes;
            public IntPtr shapes, rest, closed_lips;
        }

        [StructLayout(LayoutKind.Sequential)]
        internal struct NativeStreamOptions
        {
            public IntPtr decoder;
            public int min_frames, chunk_frames;
            public IntPtr visemes;
            public int cue_min_hold_frames, cue_bridge_frames, decoder_lookahead_frames;
            public double lm_weight, insertion_penalty;
            public int phases;
        }

        [StructLayout(LayoutKind.Sequential)]
        internal struct NativeSegment
        {
            public long start_frame, end_frame;
            public int phone;
            public IntPtr phone_name;
            public double start, end, confidence;
        }

        [StructLayout(LayoutKind.Sequential)]
        internal struct NativeCue
        {
            public long start_frame, end_frame;
            public int shape;
            public IntPtr shape_name;
            public double start, end;
        }

        [StructLayout(LayoutKind.Sequential)]
        internal struct NativeUpdate
        {
            public long first_frame;
            public int num_frames, num_phones;
            public IntPtr log_probs;
            public int num_shapes;
            public IntPtr weights;
            public int num_segments;
            public IntPtr segments;
            public int num_cues;
            public IntPtr cues;
        }

        [StructLayout(LayoutKind.Sequential)]
        internal struct StreamInfo
        {
            public int chunk_frames, sample_rate;
            public long samples;
            public double duration_seconds;
            public long frames, nonfinite_samples;
            public int finished;
            public IntPtr visemes;
        }

        [DllImport(Library, CallingConvention = Cdecl)]
        internal static extern IntPtr speechattn_version();
        [DllImport(Library, CallingConvention = Cdecl)]
        internal static extern int speechattn_abi_version();
        [DllImport(Library, CallingConvention = Cdecl)]
        internal static extern IntPtr speechattn_last_error();
        [DllImport(Library, CallingConvention = Cdecl)]
        internal static extern IntPtr speechattn_status_name(Status status);
        [DllImport(Library, CallingConvention = Cdecl)]
        internal static extern ModelOptions speechattn_default_model_options();
        [DllImport(Library, CallingConvention = Cdecl)]
        internal static extern Status speechattn_model_create(IntPtr path, ref ModelOptions options, out IntPtr model);
        [DllImport(Library, CallingConvention = Cdecl)]
        internal static extern void speechattn_model_destroy(IntPtr model);
        [DllImport(Library, CallingConvention = Cdecl)]
        internal static extern Status speechattn_model_get_info(ModelHandle model, out IntPtr info);
        [DllImport(Library, CallingConvention = Cdecl)]
        internal static extern NativeStreamOptions speechattn_default_stream_options();
        [DllImport(Library, CallingConvention = Cdecl)]
        internal static extern Status speechattn_stream_create(ModelHandle model, ref NativeStreamOptions options,
                                                               out IntPtr stream);
        [DllImport(Library, CallingConvention = Cdecl)]
        internal static extern void speechattn_stream_destroy(IntPtr stream);
        [DllImport(Library, CallingConvention = Cdecl)]
        internal static extern Status speechattn_stream_push_f32(StreamHandle stream, IntPtr samples, long frames,
                                                                 int channels, int sampleRate, out IntPtr update);
        [DllImport(Library, CallingConvention = Cdecl)]
        internal static extern Status speechattn_stream_push_i16(StreamHandle stream, IntPtr samples, long frames,
                                                                 int channels, int sampleRate, out IntPtr update);
        [DllImport(Library, CallingConvention = Cdecl)]
        internal static extern Status speechattn_stream_prime(StreamHandle stream, float[] samples, long count);
        [DllImport(Library, CallingConvention = Cdecl)]
        internal static extern Status speechattn_stream_prime_file(StreamHandle stream, float[] head, long count);
        [DllImport(Library, CallingConvention = Cdecl)]
        internal static extern Status speechattn_stream_finish(StreamHandle stream, out IntPtr update);
        [DllImport(Library, CallingConvention = Cdecl)]
        internal static extern Status speechattn_stream_segments(StreamHandle stream, out IntPtr segments,
                                                                 out long count);
        [DllImport(Library, CallingConvention = Cdecl)]
        internal static extern Status speechattn_stream_cues(StreamHandle stream, out IntPtr cues, out long count);
        [DllImport(Library, CallingConvention = Cdecl)]
        internal static extern Status speechattn_stream_get_info(StreamHandle stream, out StreamInfo info);

        internal static void Check(Status status)
        {
            if (status != Status.Ok)
                throw new SpeechattnException(status, Utf8.String(speechattn_status_name(status)),
                                              Utf8.String(speechattn_last_error()));
        }

        internal static void CheckAbi()
        {
            int loaded = speechattn_abi_version();
            if (loaded != AbiVersion)
                throw new SpeechattnException(Status.Runtime, "SPEECHATTN_ERR_RUNTIME", "libspeechattn's ABI is " +
                                              loaded + "; this binding was written for " + AbiVersion);
        }

        internal static Segment[] Segments(IntPtr pointer, long count)
        {
            var segments = new Segment[count];
            int size = Marshal.SizeOf(typeof(NativeSegment));
            for (long i = 0; i < count; i++)
            {
                var s = (NativeSegment)Marshal.PtrToStructure(new IntPtr(pointer.ToInt64() + i * size),
                                                               typeof(NativeSegment));
                segments[i] = new Segment
                {
                    StartFrame = s.start_frame, EndFrame = s.end_frame, Phone = s.phone,
                    PhoneName = Utf8.String(s.phone_name), Start = s.start, End = s.end, Confidence = s.confidence,
                };
            }
            return segments;
        }

        internal static Cue[] Cues(IntPtr pointer, long count)
        {
            var cues = new Cue[count];
            int size = Marshal.SizeOf(typeof(NativeCue));
            for (long i = 0; i < count; i++)
            {
                var c = (NativeCue)Marshal.PtrToStructure(new IntPtr(pointer.ToInt64() + i * size), typeof(NativeCue));
                cues[i] = new Cue
                {
                    StartFrame = c.start_frame, EndFrame = c.end_frame, Shape = c.shape,
                    ShapeName = Utf8.String(c.shape_name), Start = c.start, End = c.end,
                };
            }
            return cues;
        }
    }
}
