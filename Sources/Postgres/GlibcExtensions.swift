import Glibc

/// glibc functions that its headers declare only under `_GNU_SOURCE`, which Swift's Glibc module
/// is not built with. They are looked up once by name (all exist since glibc 2.34; Debian 12 has
/// 2.36) and called through typed C function pointers. Nothing else in this module uses dlsym.
enum GlibcExtensions {
    private typealias SetThreadName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32
    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias AddChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    private static func lookUp<Function>(_ name: String, as type: Function.Type) -> Function? {
        guard let program = dlopen(nil, RTLD_NOW), let symbol = dlsym(program, name) else { return nil }
        return unsafeBitCast(symbol, to: type)
    }

    /// Names threads ("ferry-pg-3") for `top -H`, debuggers and tests.
    private static let setThreadName = lookUp("pthread_setname_np", as: SetThreadName.self)
    /// A pipe that is close-on-exec from birth, so no concurrently spawned child inherits it.
    private static let pipe2 = lookUp("pipe2", as: Pipe2.self)
    /// Spawned children (pg_ctl, and the postmaster it leaves running) must not inherit our
    /// descriptors: a surviving postmaster holding a test runner's pipe keeps the runner waiting.
    private static let addCloseFrom = lookUp("posix_spawn_file_actions_addclosefrom_np", as: AddCloseFrom.self)
    /// Spawned children start in `/`: the PostgreSQL user may not be able to enter our directory.
    private static let addChangeDirectory = lookUp("posix_spawn_file_actions_addchdir_np", as: AddChangeDirectory.self)

    /// Sets the calling thread's name (Linux keeps 15 bytes).
    static func nameCurrentThread(_ name: String) {
        let truncated = String(decoding: name.utf8.prefix(15), as: UTF8.self)
        _ = setThreadName?(pthread_self(), truncated)
    }

    /// pipe2(O_CLOEXEC); where missing, pipe() then FD_CLOEXEC. Returns (read end, write end).
    static func closeOnExecPipe() -> (Int32, Int32)? {
        var ends: [Int32] = [-1, -1]
        if let pipe2 {
            guard pipe2(&ends, O_CLOEXEC) == 0 else { return nil }
        } else {
            guard pipe(&ends) == 0 else { return nil }
            _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        }
        return (ends[0], ends[1])
    }

    static func closeDescriptors(from lowest: Int32, in actions: inout posix_spawn_file_actions_t) {
        _ = addCloseFrom?(&actions, lowest)
    }

    static func changeDirectory(to path: String, in actions: inout posix_spawn_file_actions_t) {
        _ = addChangeDirectory?(&actions, path)
    }
}
