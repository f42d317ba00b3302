/// Thread names as the kernel keeps them (`top -H`, gdb, perf), for Ferry's other dedicated
/// threads too: the transfer workers, the file pool and the webhook transport.
///
/// Foundation's `Thread.current.name = …` is not enough on Linux. It reaches the kernel only once
/// the starting thread has recorded the new thread's handle, and a thread that names itself as it
/// starts can win that race: it then keeps its creator's name (seen as `oot.default-qos` in a
/// test and in perf). This calls `pthread_setname_np` on the calling thread itself.
public enum ThreadNaming {
    /// Names the calling thread (Linux keeps 15 bytes).
    public static func nameCurrentThread(_ name: String) {
        GlibcExtensions.nameCurrentThread(name)
    }
}
