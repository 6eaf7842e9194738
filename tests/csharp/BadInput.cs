// Bad inputs to the C# binding: each line names a case and what the binding did (the exception's status, its
// status name and message, or what the call returned).  Run by tests/test_native_csharp.py: BadInput.exe MODEL.
using System;
using Speechattn;

static class BadInput
{
    static void Case(string name, Func<string> call)
    {
        string answer;
        try
        {
            answer = "returned " + call();
        }
        catch (SpeechattnException error)
        {
            answer = "SpeechattnException " + error.Status + " " + error.StatusName + " " + error.Message;
        }
        catch (Exception error)
        {
            answer = error.GetType().Name + " " + error.Message.Split('\n')[0];
        }
        Console.WriteLine(name + ": " + answer);
    }

    static int Main(string[] args)
    {
        string path = args[0];
        Case("missing model", () => { new Model(path + ".missing"); return "a model"; });
        using (var model = new Model(path))
        {
            Case("unknown visemes", () => { model.Open(new StreamOptions { Visemes = "nope" }); return "a stream"; });
            Case("unknown decoder", () => { model.Open(new StreamOptions { Decoder = "nope" }); return "a stream"; });
            var stream = model.Open(new StreamOptions { Visemes = "rhubarb" });
            Case("prime", () => { stream.Prime(new float[1600]); return "primed"; });
            var nan = new float[1600];
            for (int i = 0; i < nan.Length; i++) nan[i] = float.NaN;
            Case("nan", () => stream.Push(nan).NumFrames + " frames, " + stream.NonfiniteSamples + " nonfinite");
            Case("beyond 2", () => stream.Push(new float[] { 0f, 1000f }).NumFrames.ToString());
            Case("no channels", () => stream.Push(new short[] { 0, 0 }, 0, 16000).NumFrames.ToString());
            Case("another rate", () => stream.Push(new short[] { 0, 0 }, 1, 8000).NumFrames.ToString());
            Case("past the array", () => stream.Push(new float[4], 2, 4, 1, 16000).NumFrames.ToString());
            Case("null samples", () => stream.Push((float[])null).NumFrames.ToString());
            Case("prime after push", () => { stream.Prime(new float[160]); return "primed"; });
            Case("finish", () => stream.Finish().NumFrames + " frames");
            Case("push after finish", () => stream.Push(new float[160]).NumFrames.ToString());
            Case("finish twice", () => stream.Finish().NumFrames.ToString());
            stream.Dispose();
            Case("push after dispose", () => stream.Push(new float[160]).NumFrames.ToString());
            var another = model.Open(new StreamOptions { Visemes = "vrm" });
            Case("a stream after all that", () => another.Push(new float[1600]).NumFrames + " frames, shapes " +
                                                   string.Join(",", another.Shapes));
            another.Dispose();
        }
        // a stream outliving its model's Dispose: the model is destroyed after the stream (SafeHandle references)
        var model2 = new Model(path);
        var orphan = model2.Open();
        model2.Dispose();
        Case("stream after its model's dispose", () => orphan.Push(new float[16000]).NumFrames + " frames");
        orphan.Dispose();
        Console.WriteLine("done");
        return 0;
    }
}
