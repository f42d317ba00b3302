#if canImport(Glibc)
import Glibc
#endif

/// Wakes a worker when a streamed upload's body arrives, grows, ends or is abandoned, so that
/// waiting for a client's body costs nothing: an inotify descriptor watching the streams
/// folders of the worker's streamed transfers, which the worker hands to `curl_multi_poll`
/// beside curl's own sockets. The body may be written by another instance sharing the data
/// folder; inotify sees its writes all the same on a local file system. Without inotify (or
/// past the watch limit) the worker falls back to looking every `fallbackInterval`.
///
/// Confined to its worker's thread.
final class BodyStreamWatch {
    /// -1 when inotify is unavailable.
    let descriptor: Int32
    private var watches: [String: (watch: Int32, users: Int)] = [:]
    /// A folder could not be watched: the worker must look on its own.
    private(set) var isBlind: Bool

    static let fallbackInterval = 50

    init() {
        descriptor = inotify_init1(Int32(truncatingIfNeeded: IN_NONBLOCK | IN_CLOEXEC))
        isBlind = descriptor < 0
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// The spool file created or written, the done marker renamed into place, the abandoned
    /// marker created.
    private static let events = UInt32(truncatingIfNeeded: IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO)

    func watch(_ directory: String) {
        if let entry = watches[directory] {
            watches[directory] = (entry.watch, entry.users + 1)
            return
        }
        guard descriptor >= 0 else { return }
        let watch = inotify_add_watch(descriptor, directory, Self.events)
        guard watch >= 0 else {
            isBlind = true
            return
        }
        watches[directory] = (watch, 1)
    }

    func unwatch(_ directory: String) {
        guard let entry = watches[directory] else { return }
        if entry.users > 1 {
            watches[directory] = (entry.watch, entry.users - 1)
        } else {
            watches.removeValue(forKey: directory)
            inotify_rm_watch(descriptor, entry.watch)
        }
    }

    /// Reads the pending events: they only say "look again", which the worker does for all
    /// its waiting streams.
    func drain() {
        guard descriptor >= 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while buffer.withUnsafeMutableBytes({ read(descriptor, $0.baseAddress, $0.count) }) > 0 {}
    }
}
