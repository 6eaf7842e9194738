// A compile-only stand-in for the few UnityEngine types the Unity example in docs/embedding.md uses, so that
// tests/test_native_csharp.py can check the example compiles against the binding as written.  Not Unity: nothing here
// runs.  Signatures as Unity's scripting reference gives them.
namespace UnityEngine
{
    public class Object { }
    public class Component : Object { }
    public class Behaviour : Component { public bool enabled; }
    public class MonoBehaviour : Behaviour { }
    public class SkinnedMeshRenderer : Component
    {
        public void SetBlendShapeWeight(int index, float value) { }
    }
    public static class AudioSettings { public static int outputSampleRate; }
    public static class Application { public static string streamingAssetsPath; }
    public static class Debug { public static void LogError(object message) { } }
    public class SerializeField : System.Attribute { }
}
