import Glibc

/// Runs a command to completion and collects what it printed: for initdb, pg_ctl, useradd.
///
/// posix_spawn rather than Foundation's Process: it works from any thread, also in an atexit
/// handler, and the child inherits none of our descriptors (a surviving postmaster holding a test
/// runner's pipe open would keep the runner waiting). The child starts in `/`, which the
/// PostgreSQL user can always enter.
struct Subprocess {
    struct Outcome {
        var exitStatus: Int32
        var output: String
        var succeeded: Bool { exitStatus == 0 }
    }

    static func run(_ executable: String, _ arguments: [String]) throws -> Outcome {
        guard let (readEnd, writeEnd) = GlibcExtensions.closeOnExecPipe() else {
            throw failure("could not create a pipe for \(executable)", errno)
        }
        defer { close(readEnd) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 1)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 2)
        GlibcExtensions.closeDescriptors(from: 3, in: &actions)
        GlibcExtensions.changeDirectory(to: "/", in: &actions)

        let argv = ([executable] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        var processID: pid_t = 0
        let status = (argv + [nil]).withUnsafeBufferPointer { argvPointers -> Int32 in
            guard let argvBase = argvPointers.baseAddress else { return EINVAL }
            return posix_spawn(&processID, executable, &actions, nil, argvBase, environ)
        }
        close(writeEnd)
        guard status == 0 else {
            throw failure("could not run \(executable)", status)
        }

        let output = readAll(readEnd)
        var waitStatus: Int32 = 0
        while waitpid(processID, &waitStatus, 0) < 0 {
            guard errno == EINTR else { throw failure("could not wait for \(executable)", errno) }
        }
        // WIFEXITED / WEXITSTATUS; a signal-terminated child reports 128 + signal, as shells do.
        let signal = waitStatus & 0x7f
        let exitStatus = signal == 0 ? (waitStatus >> 8) & 0xff : 128 + signal
        return Outcome(exitStatus: exitStatus, output: String(decoding: output, as: UTF8.self))
    }

    private static func readAll(_ descriptor: Int32) -> [UInt8] {
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                output.append(contentsOf: chunk[0..<count])
            } else if count == 0 || errno != EINTR {
                return output
            }
        }
    }

    private static func failure(_ what: String, _ code: Int32) -> PostgresError {
        PostgresError(kind: .connection, message: "\(what): \(String(cString: strerror(code)))")
    }
}
