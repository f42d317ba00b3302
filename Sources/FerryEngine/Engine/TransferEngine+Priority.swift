import FerryStore

extension TransferEngine {
    /// Priorities changed by `PATCH` for tasks this instance claimed: one waiting here for a
    /// connection takes its new place in line; one already transferring keeps going. Tasks still
    /// queued in the database need no message: the claim reads their priority from the row.
    func runPriorityListener() async {
        for await signal in hub.subscribe(to: NotificationChannel.priority) {
            guard case .notification(let payload) = signal else { continue }
            let parts = payload.split(separator: " ").map(String.init)
            guard parts.count == 3, parts[1] == configuration.instanceID,
                  let priority = Double(parts[2]), (0...1).contains(priority)
            else { continue }
            _ = book.withLock { $0.reprioritizeWaiting(taskID: parts[0], priority: priority) }
        }
    }
}
