/// The life of a URLSessionTask, as a value: commands from the tenant and outcomes from the
/// transfer engine go in, the state changes, and an `Action` says what the caller must do.
///
/// ```
///   suspended ──resume──▶ running ──transfer ends──▶ completed
///       ▲  │                 │ │
///       │  └───cancel───┐    │ └──cancel (owned)──▶ canceling ──owner stops──▶ completed (-999)
///       └───suspend─────┼────┘
///                       └────────▶ completed (-999)   (cancel with no transfer under way)
/// ```
/// A task is *owned* while an engine instance holds its lease and is transferring it; only an
/// owner can stop a transfer, so commands on owned tasks turn into `.stopTransfer`.
public struct TaskLifecycle: Sendable, Equatable {
    public private(set) var state: TaskState
    public private(set) var isOwned: Bool

    public init(state: TaskState, isOwned: Bool) {
        self.state = state
        self.isOwned = isOwned
    }

    public enum Command: Sendable, Equatable {
        case resume
        case suspend
        case cancel
        /// `cancelByProducingResumeData`: like cancel, but the partial download is kept.
        case cancelProducingResumeData
    }

    public enum StopReason: String, Codable, Sendable, Equatable {
        case suspend
        case cancel
        case cancelProducingResumeData
    }

    public enum Action: Sendable, Equatable {
        /// Nothing changes (URLSession ignores the call in this state).
        case none
        /// The task became runnable: wake the schedulers.
        case schedule
        /// The task was queued but not yet transferring: it simply stops being claimable.
        case unschedule
        /// Ask the owner to stop the transfer for this reason.
        case stopTransfer(StopReason)
        /// Complete now, with `NSURLErrorCancelled`, keeping the partial file when asked.
        case completeCancelled(producingResumeData: Bool)
    }

    public mutating func apply(_ command: Command) -> Action {
        switch (command, state) {
        case (.resume, .suspended):
            state = .running
            return .schedule
        case (.resume, _):
            return .none

        case (.suspend, .running):
            state = .suspended
            return isOwned ? .stopTransfer(.suspend) : .unschedule
        case (.suspend, _):
            return .none

        case (.cancel, .suspended), (.cancelProducingResumeData, .suspended):
            state = .completed
            return .completeCancelled(producingResumeData: command == .cancelProducingResumeData)
        case (.cancel, .running), (.cancelProducingResumeData, .running):
            let producingResumeData = command == .cancelProducingResumeData
            if isOwned {
                state = .canceling
                return .stopTransfer(producingResumeData ? .cancelProducingResumeData : .cancel)
            }
            state = .completed
            return .completeCancelled(producingResumeData: producingResumeData)
        case (.cancel, _), (.cancelProducingResumeData, _):
            return .none
        }
    }

    /// The owner's transfer ended (completed, failed, or stopped as asked). Returns whether the
    /// outcome is recorded: a task the tenant suspended meanwhile is still completed, because the
    /// transfer did finish, just as a URLSessionTask completes if suspend() comes too late.
    public mutating func transferEnded() -> Bool {
        isOwned = false
        switch state {
        case .running, .canceling, .suspended:
            state = .completed
            return true
        case .completed:
            return false
        }
    }

    /// The owner stopped because the task was suspended; it keeps its checkpoint and waits for `resume`.
    public mutating func transferPaused() {
        isOwned = false
    }

    /// An engine claimed the task and holds its lease.
    public mutating func claimed() {
        isOwned = true
    }
}
