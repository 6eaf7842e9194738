// StreamWav: a WAV file through libspeechattn from C#, in pieces of 0.1 s as an application pushes what it records
// or plays, printing the phones and the mouth cues as each push makes them final.
//
//     mcs -out:StreamWav.exe ../Speechattn.cs StreamWav.cs
//     mono StreamWav.exe MODEL.onnx FILE.wav [VISEMES]     (libspeechattn.so on LD_LIBRARY_PATH)
//
// prints "phone START END PHONE CONFIDENCE" and "cue START END SHAPE" lines (seconds; the end not cut at the
// audio's end).  16-bit PCM WAV files, any rate and channel count: the library resamples and averages.
using System;
using System.IO;
using System.Text;

static class StreamWav
{
    static int Main(string[] args)
    {
        if (args.Length < 2)
        {
            Console.Error.WriteLine("usage: StreamWav MODEL.onnx FILE.wav [rhubarb|oculus|vrm]");
            return 2;
        }
        try
        {
            int rate, channels;
            short[] pcm = ReadWav(args[1], out rate, out channels);
            var options = new Speechattn.StreamOptions { Visemes = args.Length > 2 ? args[2] : "rhubarb" };
            using (var model = new Speechattn.Model(args[0]))
            using (var stream = model.Open(options))
            {
                int piece = rate / 10 * channels;  // 0.1 s
                for (int offset = 0; offset < pcm.Length; offset += piece)
                    Print(stream.Push(pcm, offset, Math.Min(piece, pcm.Length - offset), channels, rate));
                Print(stream.Finish());
            }
            return 0;
        }
        catch (Speechattn.SpeechattnException error)
        {
            Console.Error.WriteLine(error.StatusName + ": " + error.Message);
            return 1;
        }
        catch (Exception error) when (error is IOException || error is InvalidDataException)  // a missing, empty or
        {                                                                                     // non-WAV file: one line
            Console.Error.WriteLine("StreamWav: " + error.Message);
            return 1;
        }
    }

    static void Print(Speechattn.Update update)
    {
        var invariant = System.Globalization.CultureInfo.InvariantCulture;  // 0.50, not 0,50
        foreach (var segment in update.Segments)
            Console.WriteLine(string.Format(invariant, "phone {0:F2} {1:F2} {2} {3:F9}", segment.Start, segment.End,
                                            segment.PhoneName, segment.Confidence));
        foreach (var cue in update.Cues)
            Console.WriteLine(string.Format(invariant, "cue {0:F2} {1:F2} {2}", cue.Start, cue.End, cue.ShapeName));
    }

    // 16-bit PCM from a RIFF WAVE file (the chunks it needs; others skipped).
    static short[] ReadWav(string path, out int rate, out int channels)
    {
        using (var reader = new BinaryReader(File.OpenRead(path)))
        {
            if (Encoding.ASCII.GetString(reader.ReadBytes(4)) != "RIFF")
                throw new InvalidDataException(path + " is no RIFF file");
            reader.ReadInt32();
            if (Encoding.ASCII.GetString(reader.ReadBytes(4)) != "WAVE")
                throw new InvalidDataException(path + " is no WAVE file");
            rate = channels = 0;
            while (reader.BaseStream.Position + 8 <= reader.BaseStream.Length)
            {
                string id = Encoding.ASCII.GetString(reader.ReadBytes(4));
                int size = reader.ReadInt32();
                long next = reader.BaseStream.Position + size + (size & 1);
                if (id == "fmt ")
                {
                    int format = reader.ReadInt16();
                    channels = reader.ReadInt16();
                    rate = reader.ReadInt32();
                    reader.ReadBytes(6);
                    int bits = reader.ReadInt16();
                    if (format != 1 || bits != 16)
                        throw new InvalidDataException(path + ": only 16-bit PCM is read here");
                }
                else if (id == "data")
                {
                    byte[] bytes = reader.ReadBytes(size);
                    var samples = new short[bytes.Length / 2];
                    Buffer.BlockCopy(bytes, 0, samples, 0, samples.Length * 2);  // little-endian hosts
                    return samples;
                }
                reader.BaseStream.Position = next;
            }
            throw new InvalidDataException(path + " has no data chunk");
        }
    }
}
